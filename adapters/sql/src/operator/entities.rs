//! Hand-written sea-orm entities of the operator tables, with portable column types: string ids,
//! `DateTimeUtc`, `i64` cents. Enumerations are stored as their wire names.

pub mod connector_keys;
pub mod coupons;
pub mod credit_reservations;
pub mod ledger_entries;
pub mod mail_outbox;
pub mod org_invites;
pub mod org_memberships;
pub mod orgs;
pub mod provider_keys;
pub mod wallets;
