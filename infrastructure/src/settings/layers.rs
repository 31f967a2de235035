//! Loading the layers below the command line: the compiled-in defaults, an optional file, then
//! `SVC_<SECTION>__<KEY>` environment variables. Unknown keys in the file or the environment are
//! refused with the nearest known key.

use std::collections::HashMap;
use std::path::Path;

use super::Settings;
use super::catalog::{Catalog, ENV_PREFIX, ENV_SEPARATOR, Kind};
use super::unknown::{EnvVar, UnknownKey};

const DEFAULTS: &str = include_str!("../../../config/default.toml");

#[derive(Debug, thiserror::Error)]
#[error("configuration: {0}")]
pub struct SettingsError(String);

impl SettingsError {
    pub(super) fn new(message: String) -> Self {
        Self(message)
    }
}

impl From<config::ConfigError> for SettingsError {
    /// On one line, as every failure is: a TOML parse error's quote of the file (its line, and
    /// a caret line under it, which would also show a secret on that line) is left out, its
    /// position and message kept.
    fn from(error: config::ConfigError) -> Self {
        let text = error.to_string();
        let kept: Vec<&str> = text
            .lines()
            .map(str::trim)
            .filter(|line| !line.is_empty() && !is_quoted_source(line))
            .collect();
        Self(named_first(&kept.join(": ").replace(": in ", " in ")))
    }
}

/// `must be a or b, not `x` for key `k`` (a setting's own refusal, as `config` words it) as
/// `k must be a or b, not `x``, the way the range check and start-up name a setting.
fn named_first(message: &str) -> String {
    message
        .strip_suffix('`')
        .and_then(|rest| rest.rsplit_once(" for key `"))
        .filter(|(refusal, _)| refusal.starts_with("must be "))
        .map_or_else(|| message.to_owned(), |(refusal, key)| format!("{key} {refusal}"))
}

/// `|`, `| ^^^` or `12 | key = "value`: the quote under a TOML parse error's position.
fn is_quoted_source(line: &str) -> bool {
    line.trim_start_matches(|c: char| c.is_ascii_digit())
        .trim_start()
        .starts_with('|')
}

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
            builder = builder.add_source(toml_file(path));
        }
        let variables = settings_variables(&catalog, env)?;
        builder = builder
            .add_source(environment(variables.texts, false))
            .add_source(environment(variables.others, true));
        for (key, items) in variables.lists {
            builder = builder.set_override(key, items)?;
        }
        let settings: Settings = builder
            .build()
            .and_then(|c| c.try_deserialize())
            .map_err(SettingsError::from)?;
        super::bounds::check(&settings).map_err(SettingsError::new)?;
        Ok(settings)
    }
}

/// The file at `path`, read as TOML whatever its name ends with (`config` would choose the
/// format by the extension, and refuse `svc.conf`).
fn toml_file(path: &Path) -> config::File<config::FileSourceFile, config::FileFormat> {
    config::File::from(path.to_path_buf()).format(config::FileFormat::Toml)
}

/// The file exists and declares only known keys.
fn check_file(catalog: &Catalog, path: &Path) -> Result<(), SettingsError> {
    if !path.exists() {
        return Err(SettingsError(format!("{} does not exist", path.display())));
    }
    let table: serde_json::Value = config::Config::builder()
        .add_source(toml_file(path))
        .build()
        .and_then(|c| c.try_deserialize())
        .map_err(SettingsError::from)?;
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

/// `SVC_*` variables as settings. Parsed: a value that reads as a number or a boolean is one.
/// Else every value is the text it is, so a text setting of digits keeps them all (`0012345` as a
/// client id, not `12345`; twenty digits not rounded through a float).
fn environment(variables: HashMap<String, String>, parsed: bool) -> config::Environment {
    config::Environment::with_prefix("SVC")
        .prefix_separator("_")
        .separator(ENV_SEPARATOR)
        .try_parsing(parsed)
        .source(Some(variables.into_iter().collect()))
}

/// The `SVC_*` variables that are settings, by what they hold.
#[derive(Default)]
struct Variables {
    /// Of text settings (a string, one of some words): read as they are.
    texts: HashMap<String, String>,
    /// Of numbers and booleans.
    others: HashMap<String, String>,
    /// Of list settings, by dotted key (`server.allowed_hosts`): split at commas, each item the
    /// text it is (a secret of digits stays text).
    lists: Vec<(String, Vec<String>)>,
}

/// `SVC_SERVER__ALLOWED_HOSTS` as `config` names it: `server.allowed_hosts`.
fn dotted_key(variable: &str) -> String {
    variable[ENV_PREFIX.len()..].to_lowercase().replace(ENV_SEPARATOR, ".")
}

/// The `SVC_*` variables that are settings; an unknown one is an error.
fn settings_variables(
    catalog: &Catalog,
    env: impl IntoIterator<Item = (String, String)>,
) -> Result<Variables, SettingsError> {
    let mut variables = Variables::default();
    let mut env: Vec<(String, String)> = env.into_iter().collect();
    env.sort();
    for (name, value) in env {
        match catalog.check_env_var(&name) {
            EnvVar::Setting(Kind::String | Kind::Choice(_)) => {
                variables.texts.insert(name, value);
            }
            EnvVar::Setting(Kind::StringList | Kind::StringOrList) => {
                let items = value.split(',').map(str::to_owned).collect();
                variables.lists.push((dotted_key(&name), items));
            }
            EnvVar::Setting(_) => {
                variables.others.insert(name, value);
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
