//! The ranges the settings declare on their own fields (`#[schemars(range(..))]`, carried into
//! the settings' JSON Schema), checked once every layer is merged. A duration the server adds to
//! the present, or multiplies, must not be so large the sum overflows and every task that adds it
//! panics; a deadline of nothing would end every request at once. Checked whether or not the
//! feature a setting belongs to is on: a typo is refused when it is written.

use jsonschema::error::ValidationErrorKind;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::Settings;

/// The first setting of `settings` outside its declared range, as `section.key must be ...`.
pub fn check(settings: &Settings) -> Result<(), String> {
    check_section(settings, "")
}

/// [`check`] for one section given on its own (the registry server's `[connections]`), its
/// keys named under `prefix` (`connections.`).
pub fn check_section<T: Serialize + JsonSchema>(section: &T, prefix: &str) -> Result<(), String> {
    let schema = serde_json::to_value(schemars::schema_for!(T)).expect("a JSON Schema is JSON");
    let ranges = jsonschema::validator_for(&schema).expect("the settings' schema compiles");
    let value = serde_json::to_value(section).expect("settings are JSON");
    let outside = ranges.iter_errors(&value).find_map(|error| {
        let (word, limit) = match error.kind() {
            ValidationErrorKind::Minimum { limit } => ("at least", limit.clone()),
            ValidationErrorKind::Maximum { limit } => ("at most", limit.clone()),
            // Types and choices are the deserialiser's to refuse; it already has.
            _ => return None,
        };
        let key = error
            .instance_path()
            .to_string()
            .trim_start_matches('/')
            .replace('/', ".");
        Some(format!(
            "{prefix}{key} must be {word} {}, not {}",
            plain(&limit),
            plain(error.instance())
        ))
    });
    outside.map_or(Ok(()), Err)
}

/// A number as written in a file (`86400`, not `86400.0`).
fn plain(value: &Value) -> String {
    match value.as_f64() {
        Some(n) if n.fract() == 0.0 && n.abs() < 1e15 => format!("{}", n as i64),
        _ => value.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn load(env: &[(&str, &str)]) -> Result<Settings, String> {
        let env = env.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned()));
        Settings::load_from(None, env).map_err(|e| e.to_string())
    }

    #[test]
    fn the_defaults_are_within_every_range() {
        load(&[]).unwrap();
    }

    #[test]
    fn a_section_given_on_its_own_is_named_under_its_prefix() {
        let mut connections = crate::settings::ConnectionSettings::default();
        check_section(&connections, "connections.").unwrap();
        connections.max_connections = 0;
        let refused = check_section(&connections, "connections.").unwrap_err();
        assert!(
            refused.ends_with("connections.max_connections must be at least 1, not 0"),
            "{refused}"
        );
    }

    /// Each row: a setting a task adds to the present (or multiplies), at its bounds and past
    /// them. Past the top, each once panicked every connection, socket or limiter that used it.
    #[test]
    fn a_setting_outside_its_range_is_refused_by_name() {
        for (variable, value, refused) in [
            (
                "SVC_CONNECTIONS__IDLE_TIMEOUT_SECONDS",
                "0",
                Some("connections.idle_timeout_seconds must be at least 1, not 0"),
            ),
            ("SVC_CONNECTIONS__IDLE_TIMEOUT_SECONDS", "86400", None),
            ("SVC_CONNECTIONS__MAX_PER_ADDRESS", "0", None),
            (
                "SVC_CONNECTIONS__MAX_PER_ADDRESS",
                "1048577",
                Some("connections.max_per_address must be at most 1048576, not 1048577"),
            ),
            (
                "SVC_CONNECTIONS__HEADER_READ_TIMEOUT_SECONDS",
                "18446744073709551615",
                Some("connections.header_read_timeout_seconds must be at most 86400, not 18446744073709551615"),
            ),
            (
                "SVC_LIVE__KEY_RECHECK_SECONDS",
                "86401",
                Some("live.key_recheck_seconds must be at most 86400, not 86401"),
            ),
            ("SVC_LIVE__SUBSCRIBE_TIMEOUT_SECONDS", "1", None),
            ("SVC_TOOL_CALLS__WINDOW_SECONDS", "31536000", None),
            (
                "SVC_TOOL_CALLS__WINDOW_SECONDS",
                "9000000000000",
                Some("tool_calls.window_seconds must be at most 31536000, not 9000000000000"),
            ),
            (
                "SVC_PUBLIC_DEMO__WINDOW_SECONDS",
                "0",
                Some("public_demo.window_seconds must be at least 1, not 0"),
            ),
            (
                "SVC_MAIL__RETRY_BASE_SECONDS",
                "9223372036854775807",
                Some("mail.retry_base_seconds must be at most 86400, not 9223372036854775807"),
            ),
            (
                "SVC_FEDERATION__JWKS_TTL_SECONDS",
                "40000000000",
                Some("federation.jwks_ttl_seconds must be at most 604800, not 40000000000"),
            ),
            (
                "SVC_BLUEPRINTS__EMBEDDING_TIMEOUT_SECONDS",
                "0",
                Some("blueprints.embedding_timeout_seconds must be at least 1, not 0"),
            ),
            (
                "SVC_GENERATION__MAX_ATTEMPTS",
                "0",
                Some("generation.max_attempts must be at least 1, not 0"),
            ),
            ("SVC_GENERATION__MAX_OUTPUT_TOKENS", "131072", None),
            (
                "SVC_GENERATION__MAX_OUTPUT_TOKENS",
                "131073",
                Some("generation.max_output_tokens must be at most 131072, not 131073"),
            ),
            (
                "SVC_GENERATION__MAX_OUTPUT_TOKENS",
                "0",
                Some("generation.max_output_tokens must be at least 1, not 0"),
            ),
        ] {
            let loaded = load(&[(variable, value)]);
            match refused {
                None => assert!(loaded.is_ok(), "{variable}={value}: {loaded:?}"),
                Some(message) => {
                    let error = loaded.expect_err(variable);
                    assert!(error.ends_with(message), "{variable}={value}: {error}");
                }
            }
        }
    }
}
