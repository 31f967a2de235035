//! Repositories of the hosted plane.

mod accounts;
mod app_settings;
mod external_identities;

pub use accounts::{SeaOrmAccountRepository, SeaOrmAccountTokenRepository};
pub use app_settings::SeaOrmAppSettingsRepository;
pub use external_identities::{SeaOrmExternalIdentities, SeaOrmPendingExternalSignIns};
