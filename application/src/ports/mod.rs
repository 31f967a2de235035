//! Port traits: what the application needs from the outside world.

mod bounded_insert;
mod clock;
mod repository_error;

pub mod accounts;
pub mod agent;
pub mod app_settings;
pub mod auth;
pub mod blueprints;
pub mod bus_message;
pub mod bus_outbox;
pub mod console_sessions;
pub mod credit_reservations;
pub mod external_identity;
pub mod federation;
pub mod generation;
pub mod hosted;
pub mod mail;
pub mod module_links;
pub mod oauth;
pub mod operator;
pub mod pair_codes;
pub mod pollable;
pub mod rate_windows;
pub mod registry;
pub mod retention;
pub mod telemetry;

pub use bounded_insert::{BoundedInsert, oldest_past_cap};
pub use clock::{Clock, Ids};
pub use repository_error::RepositoryError;
