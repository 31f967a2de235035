//! Loading the layers below the command line: the compiled-in defaults, an optional file, then
//! `SVC_<SECTION>__<KEY>` environment variables. Unknown keys in the file or the environment are
//! refused with the nearest known key.

use std::collections::HashMap;
use std::path::Path;

use super::Settings;
use super::catalog::{Catalog, ENV_SEPARATOR};
use super::unknown::{EnvVar, UnknownKey};

const DEFAULTS: &str = include_str!("../../../config/default.toml");

/// Settings read as a list when they come from one environment variable (comma-separated).
const LIST_KEYS: &[&str] = &["server.allowed_hosts", "server.ws_secret", "hosted.master_keys"];

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct SettingsError(String);

fn did_you_mean(unknown: &UnknownKey) -> String {
    unknown
        .nearest
        .as_ref()
        .map_or_else(String::new, |n| format!("; the nearest known one is {n}"))
}

impl Settings {
    /// Loads the layers below the command line, reading this process's environment.
    pub fn load(file: Option<&Path>) -> Result<Self, SettingsError> {
        Self::load_from(file, std::env::vars())
    }

    /// Loads the layers below the command line with `env` as the environment.
    pub fn load_from(
        file: Option<&Path>,
        env: impl IntoIterator<Item = (String, String)>,
    ) -> Result<Self, SettingsError> {
        let catalog = Catalog::of_settings();
        let mut builder =
            config::Config::builder().add_source(config::File::from_str(DEFAULTS, config::FileFormat::Toml));
        if let Some(path) = file {
            check_file(&catalog, path)?;
            builder = builder.add_source(config::File::from(path.to_path_buf()));
        }
        let variables = settings_variables(&catalog, env)?;
        let mut environment = config::Environment::with_prefix("SVC")
            .prefix_separator("_")
            .separator(ENV_SEPARATOR)
            .list_separator(",")
            .try_parsing(true)
            .source(Some(variables.into_iter().collect()));
        for key in LIST_KEYS {
            environment = environment.with_list_parse_key(key);
        }
        builder
            .add_source(environment)
            .build()
            .and_then(|c| c.try_deserialize())
            .map_err(|e| SettingsError(e.to_string()))
    }
}

/// The file exists and declares only known keys.
fn check_file(catalog: &Catalog, path: &Path) -> Result<(), SettingsError> {
    if !path.exists() {
        return Err(SettingsError(format!("{} does not exist", path.display())));
    }
    let table: serde_json::Value = config::Config::builder()
        .add_source(config::File::from(path.to_path_buf()))
        .build()
        .and_then(|c| c.try_deserialize())
        .map_err(|e| SettingsError(e.to_string()))?;
    match catalog.unknown_in_file(&table) {
        Some(unknown) => Err(SettingsError(format!(
            "unknown key `{}` in {}{}",
            unknown.key,
            path.display(),
            did_you_mean(&unknown)
        ))),
        None => Ok(()),
    }
}

/// The `SVC_*` variables that are settings; an unknown one is an error.
fn settings_variables(
    catalog: &Catalog,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<HashMap<String, String>, SettingsError> {
    let mut variables = HashMap::new();
    let mut env: Vec<(String, String)> = env.into_iter().collect();
    env.sort();
    for (name, value) in env {
        match catalog.check_env_var(&name) {
            EnvVar::Setting => {
                variables.insert(name, value);
            }
            EnvVar::NotASetting => {}
            EnvVar::Unknown(unknown) => {
                return Err(SettingsError(format!(
                    "unknown environment variable {}{}",
                    unknown.key,
                    did_you_mean(&unknown)
                )));
            }
        }
    }
    Ok(variables)
}
