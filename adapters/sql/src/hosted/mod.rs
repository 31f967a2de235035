//! Repositories of the hosted plane.

mod app_settings;

pub use app_settings::SeaOrmAppSettingsRepository;
