//! Repositories of the hosted plane.

mod accounts;
mod app_settings;

pub use accounts::{SeaOrmAccountRepository, SeaOrmAccountTokenRepository};
pub use app_settings::SeaOrmAppSettingsRepository;
