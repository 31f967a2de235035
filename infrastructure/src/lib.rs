//! The `svc` binary's library: CLI, configuration, wiring of adapters into ports, telemetry.

pub mod artifacts;
pub mod banner;
pub mod blueprints;
pub mod bundle_inspection;
pub mod cli;
pub mod connections;
pub mod embed;
pub mod event_bus;
pub mod exposure;
pub mod generation;
pub mod hosted;
pub mod in_process_bus;
pub mod keys_file;
mod keys_file_changes;
pub mod keys_file_watch;
pub mod mail;
pub mod manifest;
pub mod open_files;
pub mod per_app;
pub mod private_files;
pub mod registry_client;
pub mod registry_server;
pub mod retention;
pub mod secrets;
pub mod server;
pub mod settings;
pub mod sweeps;
pub mod system;
mod telemetry;

pub use server::Application;
pub use settings::Settings;
