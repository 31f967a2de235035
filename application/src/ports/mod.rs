//! Port traits: what the application needs from the outside world.

mod clock;
mod repository_error;

pub mod agent;
pub mod app_settings;
pub mod auth;
pub mod blueprints;
pub mod federation;
pub mod generation;
pub mod oauth;
pub mod operator;
pub mod pollable;
pub mod rate_windows;
pub mod telemetry;

pub use clock::{Clock, Ids};
pub use repository_error::RepositoryError;
