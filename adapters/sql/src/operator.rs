//! Repositories of the operator plane, on sea-orm (SQLite, PostgreSQL and MySQL/MariaDB alike).
//!
//! Every state change runs its domain transition atomically and stays correct with several
//! writers on every backend:
//! - multi-row writes (an org with its membership and wallet; a coupon redemption's three legs;
//!   a wallet movement and its ledger row) run in one write transaction that reads its rows
//!   `FOR UPDATE` on PostgreSQL and MySQL and begins `IMMEDIATE` on SQLite, so writers queue instead of
//!   racing;
//! - single-row transitions (revoking an invite or a key) are compare-and-set
//!   updates on the status that was read, retried after a lost race.

mod connector_keys;
mod coupons;
mod credit_reservations;
pub(crate) mod entities;
mod invite_links;
mod invites;
mod mail_outbox;
mod mail_queue;
mod orgs;
mod provider_keys;
mod wallets;

pub use connector_keys::SeaOrmConnectorKeyRepository;
pub use coupons::SeaOrmCouponRepository;
pub use credit_reservations::SeaOrmCreditReservationRepository;
pub use invite_links::SeaOrmInviteLinkRepository;
pub use invites::SeaOrmInviteRepository;
pub use mail_outbox::SeaOrmMailOutbox;
pub use orgs::SeaOrmOrgRepository;
pub use provider_keys::SeaOrmProviderKeyRepository;
pub use wallets::SeaOrmWalletRepository;
