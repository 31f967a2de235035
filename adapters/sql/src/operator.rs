//! Repositories of the operator plane, on sea-orm (SQLite and PostgreSQL alike).
//!
//! Every state change runs its domain transition atomically and stays correct with several
//! writers on either backend:
//! - multi-row writes (an org with its membership and wallet; a coupon redemption's three legs;
//!   a wallet movement and its ledger row) run in one write transaction that reads its rows
//!   `FOR UPDATE` on PostgreSQL and begins `IMMEDIATE` on SQLite, so writers queue instead of
//!   racing;
//! - single-row transitions (revoking an invite or a key, yanking a version) are compare-and-set
//!   updates on the status that was read, retried after a lost race.

mod artifacts;
mod connector_keys;
mod coupons;
mod db;
mod entities;
mod invites;
mod mail_outbox;
mod orgs;
mod provider_keys;
mod wallets;

pub use artifacts::SeaOrmArtifactRepository;
pub use connector_keys::SeaOrmConnectorKeyRepository;
pub use coupons::SeaOrmCouponRepository;
pub use invites::SeaOrmInviteRepository;
pub use mail_outbox::SeaOrmMailOutbox;
pub use orgs::SeaOrmOrgRepository;
pub use provider_keys::SeaOrmProviderKeyRepository;
pub use wallets::SeaOrmWalletRepository;
