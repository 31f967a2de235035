use std::path::Path;

use serde_json::{Value, json};

use super::catalog::{Kind, Segment, SettingKey};
use super::*;

fn no_env() -> Vec<(String, String)> {
    Vec::new()
}

fn env(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect()
}

fn load_env(pairs: &[(&str, &str)]) -> Result<Settings, SettingsError> {
    Settings::load_from(None, env(pairs))
}

fn temp_file(name: &str, text: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("svc-settings-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path
}

#[test]
fn defaults_load_and_point_sqlite_into_the_data_dir() {
    let s = Settings::load_from(None, no_env()).unwrap();
    assert_eq!(s.server.port, 6781);
    assert_eq!(s.database_url(), "sqlite://.svc-data/svc.db?mode=rwc");
    assert_eq!(s.public_base_url(6781), "http://127.0.0.1:6781");
}

#[test]
fn an_ipv6_host_is_bracketed_once_in_the_public_url() {
    let mut s = Settings::load_from(None, no_env()).unwrap();
    for host in ["::1", "[::1]"] {
        s.server.host = host.into();
        assert_eq!(s.public_base_url(7000), "http://[::1]:7000", "{host}");
    }
}

#[test]
fn a_missing_config_file_is_an_error_naming_it() {
    let err = Settings::load_from(Some(Path::new("/nonexistent/svc.toml")), no_env()).unwrap_err();
    assert!(err.to_string().contains("/nonexistent/svc.toml"));
}

#[test]
fn the_documented_form_svc_section_double_underscore_key_sets_a_setting() {
    let s = load_env(&[("SVC_SERVER__PORT", "7000"), ("SVC_GENERATION__CONCURRENCY", "4")]).unwrap();
    assert_eq!(s.server.port, 7000);
    assert_eq!(s.generation.concurrency, 4);
}

#[test]
fn an_unknown_key_in_a_file_is_refused_naming_it_and_the_nearest_known_key() {
    let path = temp_file("svc.toml", "[server]\nprot = 7000\n");
    let err = Settings::load_from(Some(&path), no_env()).unwrap_err().to_string();
    assert_eq!(
        err,
        format!(
            "configuration: unknown key `server.prot` in {}; the nearest known one is server.port",
            path.display()
        )
    );
    let path = temp_file(
        "svc.toml",
        "[[generation.models]]\nroute = \"x:y\"\ncontext_tokens = 1\nreasonin = true\n",
    );
    let err = Settings::load_from(Some(&path), no_env()).unwrap_err().to_string();
    assert!(
        err.contains("`generation.models[].reasonin`") && err.ends_with("generation.models[].reasoning"),
        "{err}"
    );
    let path = temp_file("svc.toml", "[srever]\nport = 1\n");
    let err = Settings::load_from(Some(&path), no_env()).unwrap_err().to_string();
    assert!(err.contains("unknown key `srever`"), "{err}");
}

#[test]
fn an_unknown_svc_variable_is_refused_naming_the_nearest_known_variable() {
    let rows = [
        ("SVC_SERVER__PROT", "SVC_SERVER__PORT"),
        // The form that used to work by accident, and the single-underscore typo.
        ("SVC__SERVER__PORT", "SVC_SERVER__PORT"),
        ("SVC_SERVER_PORT", "SVC_SERVER__PORT"),
        ("SVC_OAUTH__ENABLE", "SVC_OAUTH__ENABLED"),
        // The same typo in a map entry's variable names the entry's own variable.
        (
            "SVC_GENERATION_PROVIDERS_OPENAI_API_KEY",
            "SVC_GENERATION__PROVIDERS__OPENAI__API_KEY",
        ),
        (
            "SVC_HOSTED_MODEL_PRICE_CENTS_BUILTIN",
            "SVC_HOSTED__MODEL_PRICE_CENTS__BUILTIN",
        ),
    ];
    for (variable, nearest) in rows {
        let err = load_env(&[(variable, "1")]).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("configuration: unknown environment variable {variable}; the nearest known one is {nearest}")
        );
    }
}

#[test]
fn svc_variables_that_are_not_settings_are_left_alone() {
    let s = load_env(&[
        ("SVC_TEST_DATABASE_URL", "postgres://x"),
        ("SVC_REQUIRE_PEERS", "1"),
        ("SVC_LIVE_MODEL", "openai:gpt-4o"),
    ])
    .unwrap();
    assert_eq!(s.server.port, 6781);
}

#[test]
fn a_provider_key_is_set_through_its_map_entry() {
    let s = load_env(&[("SVC_GENERATION__PROVIDERS__OPENAI__API_KEY", "sk-test")]).unwrap();
    assert_eq!(s.generation.providers["openai"].api_key, "sk-test");
}

#[test]
fn ws_secret_takes_one_secret_or_a_comma_separated_list() {
    let one = "a".repeat(40);
    let s = load_env(&[("SVC_SERVER__WS_SECRET", &one)]).unwrap();
    assert_eq!(s.server.ws_secret.secrets(), vec![one.as_str()]);
    let s = load_env(&[("SVC_SERVER__WS_SECRET", "new-secret,old-secret")]).unwrap();
    assert_eq!(s.server.ws_secret.secrets(), vec!["new-secret", "old-secret"]);
    // Items of digits, or that read as a float, stay text.
    let digits = "0".repeat(8) + &"7".repeat(32);
    let s = load_env(&[("SVC_SERVER__WS_SECRET", &digits)]).unwrap();
    assert_eq!(s.server.ws_secret.secrets(), vec![digits.as_str()]);
    let s = load_env(&[("SVC_SERVER__WS_SECRET", "1e5,inf")]).unwrap();
    assert_eq!(s.server.ws_secret.secrets(), vec!["1e5", "inf"]);
    let path = temp_file("svc.toml", "[server]\nws_secret = [\"s1\", \"s0\"]\n");
    let s = Settings::load_from(Some(&path), no_env()).unwrap();
    assert_eq!(s.server.ws_secret.secrets(), vec!["s1", "s0"]);
}

/// `path` of a setting in the serialised settings; a map entry is looked up under `openai`.
fn value_at<'a>(settings: &'a Value, key: &SettingKey) -> &'a Value {
    key.path.iter().fold(settings, |v, segment| match segment {
        Segment::Key(k) => &v[k.as_str()],
        Segment::Name => &v["openai"],
        Segment::Element => &Value::Null,
    })
}

/// A value unlike the default, as an environment variable's text and as the expected setting.
fn another_value(key: &SettingKey, default: &Value) -> (String, Value) {
    match &key.kind {
        Kind::Choice(words) => {
            let other = words.iter().find(|word| Some(word.as_str()) != default.as_str());
            let other = other.expect("a choice of two words or more");
            (other.clone(), json!(other))
        }
        Kind::Bool => {
            let flipped = !default.as_bool().unwrap_or(false);
            (flipped.to_string(), json!(flipped))
        }
        Kind::Integer | Kind::OptionalInteger => {
            let n = default.as_u64().unwrap_or(0) + 7;
            (n.to_string(), json!(n))
        }
        Kind::Number => ("0.75".into(), json!(0.75)),
        Kind::String => {
            let s = format!("{}-set", default.as_str().unwrap_or_default());
            (s.clone(), json!(s))
        }
        Kind::StringList | Kind::StringOrList => ("one,two".into(), json!(["one", "two"])),
    }
}

/// Every setting's environment variable takes effect: the variables come from the same catalog
/// that README's table is checked against (below), so the docs and the code cannot drift.
#[test]
fn every_settings_environment_variable_takes_effect() {
    let defaults = serde_json::to_value(Settings::load_from(None, no_env()).unwrap()).unwrap();
    let keys = Catalog::of_settings().keys();
    assert!(keys.len() > 60, "the catalog lists every setting: {}", keys.len());
    for key in keys {
        let Some(variable) = key.env_var() else { continue };
        let variable = variable.replace("<NAME>", "OPENAI");
        let (mut text, mut expected) = another_value(&key, value_at(&defaults, &key));
        // A default at its setting's maximum (`registry.max_versions_per_package`) is changed
        // downwards instead.
        if load_env(&[(&variable, &text)]).is_err()
            && let Some(lower) = expected.as_u64().and_then(|n| n.checked_sub(14))
        {
            (text, expected) = (lower.to_string(), json!(lower));
        }
        let loaded = load_env(&[(&variable, &text)]).unwrap_or_else(|e| panic!("{variable}={text}: {e}"));
        let loaded = serde_json::to_value(loaded).unwrap();
        let actual = value_at(&loaded, &key);
        let same = match (actual.as_f64(), expected.as_f64()) {
            (Some(a), Some(b)) => (a - b).abs() < 1e-6,
            _ => actual == &expected,
        };
        assert!(same, "{variable}={text} gave {actual}, expected {expected}");
    }
}

/// A text setting's variable is read as text: digits stay digits (a client id `0012345`, a
/// secret of twenty-five digits), where reading them as a number first dropped leading zeros and
/// rounded long ones through a float.
#[test]
fn a_text_settings_variable_of_digits_keeps_every_digit() {
    const DIGITS: &str = "0012345678901234567890123";
    let keys = Catalog::of_settings().keys();
    let texts: Vec<_> = keys.iter().filter(|key| key.kind == Kind::String).collect();
    assert!(texts.len() > 20, "the catalog's text settings: {}", texts.len());
    for key in texts {
        let Some(variable) = key.env_var() else { continue };
        let variable = variable.replace("<NAME>", "OPENAI");
        let loaded = load_env(&[(&variable, DIGITS)]).unwrap_or_else(|e| panic!("{variable}={DIGITS}: {e}"));
        let loaded = serde_json::to_value(loaded).unwrap();
        assert_eq!(value_at(&loaded, key), DIGITS, "{variable}");
    }
}

#[test]
fn a_config_file_is_toml_whatever_its_name_ends_with() {
    for name in ["svc.conf", "svc"] {
        let path = temp_file(name, "[server]\nport = 7001\n");
        let s = Settings::load_from(Some(&path), no_env()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(s.server.port, 7001, "{name}");
    }
}

/// Every failure is one line; a TOML error names the file and the position, and does not quote
/// the line (which may hold a secret).
#[test]
fn a_malformed_config_file_is_refused_in_one_line_naming_the_position() {
    let path = temp_file("svc.toml", "[server]\nws_secret = \"hunter2-unterminated\n");
    let err = Settings::load_from(Some(&path), no_env()).unwrap_err().to_string();
    assert!(!err.contains('\n'), "{err}");
    // `config` names the file relative to the working directory: its own directory is unique.
    let directory = path.parent().and_then(|d| d.file_name()).unwrap().to_string_lossy();
    assert!(
        err.contains("line 2") && err.contains(&format!("{directory}/svc.toml")),
        "{err}"
    );
    assert!(!err.contains("hunter2"), "{err}");
}

/// Every `SVC_<SECTION>__<KEY>` the docs and example configs mention is a setting.
#[test]
fn every_svc_variable_the_docs_name_is_a_setting() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut texts = vec![root.join("README.md")];
    for dir in ["docs", "config"] {
        for entry in std::fs::read_dir(root.join(dir)).unwrap() {
            let path = entry.unwrap().path();
            if path.extension().is_some_and(|e| e == "md" || e == "toml") {
                texts.push(path);
            }
        }
    }
    let catalog = Catalog::of_settings();
    let mut seen = 0;
    for path in texts {
        let text = std::fs::read_to_string(&path).unwrap();
        for (i, _) in text.match_indices("SVC_") {
            let name: String = text[i..]
                .chars()
                .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || *c == '_' || *c == '<' || *c == '>')
                .collect();
            if !name.contains("__") || name.replace("<NAME>", "").contains('<') {
                continue; // not a setting's form, or prose (`SVC_<SECTION>__<KEY>`)
            }
            seen += 1;
            if name.ends_with("__") {
                // A section's wildcard (`SVC_PUBLIC_DEMO__*`).
                let known = catalog
                    .keys()
                    .iter()
                    .filter_map(|k| k.env_var())
                    .any(|v| v.starts_with(&name));
                assert!(
                    known,
                    "{} names the section {name}*, which has no settings",
                    path.display()
                );
                continue;
            }
            let concrete = name.replace("<NAME>", "OPENAI");
            assert!(
                matches!(catalog.check_env_var(&concrete), super::unknown::EnvVar::Setting(_)),
                "{} names {name}, which is not a setting",
                path.display()
            );
        }
    }
    assert!(seen > 10, "the docs name the variables ({seen} found)");
}

fn render_default(value: &Value) -> String {
    match value {
        Value::Null => "—".into(),
        Value::String(s) => format!("`\"{s}\"`"),
        // The settings' floats are f32: shown as written (0.2), not as widened to f64.
        Value::Number(n) if n.is_f64() => format!("`{:?}`", n.as_f64().unwrap_or_default() as f32),
        other => format!("`{other}`"),
    }
}

/// README's settings table, as the code defines it.
fn settings_table() -> String {
    let defaults = serde_json::to_value(Settings::load_from(None, no_env()).unwrap()).unwrap();
    let mut out = String::from("| setting | environment variable | default |\n|---|---|---|\n");
    for key in Catalog::of_settings().keys() {
        let default = if key.path.iter().any(|s| !matches!(s, Segment::Key(_))) {
            Value::Null
        } else {
            value_at(&defaults, &key).clone()
        };
        let variable = key.env_var().map_or("(file only)".to_owned(), |v| format!("`{v}`"));
        out.push_str(&format!(
            "| `{}` | {variable} | {} |\n",
            key.dotted(),
            render_default(&default)
        ));
    }
    out
}

/// README "Configuration" lists every setting with its environment variable and default,
/// between the markers below; on a mismatch this prints the table to paste.
#[test]
fn readme_lists_every_setting_with_its_environment_variable() {
    let readme = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).unwrap();
    let (start, end) = ("<!-- settings-table:start -->\n", "<!-- settings-table:end -->");
    let from = readme.find(start).expect("README has the settings-table markers") + start.len();
    let to = readme.find(end).expect("README has the settings-table end marker");
    let expected = settings_table();
    assert!(
        readme[from..to] == expected,
        "README's settings table is out of date; replace it with:\n{expected}"
    );
}

#[test]
fn a_log_format_other_than_text_or_json_is_refused_naming_the_setting() {
    assert_eq!(
        load_env(&[("SVC_SERVER__LOG_FORMAT", "json")])
            .unwrap()
            .server
            .log_format,
        LogFormat::Json
    );
    for wrong in ["JSON", "yaml"] {
        let err = load_env(&[("SVC_SERVER__LOG_FORMAT", wrong)]).unwrap_err().to_string();
        assert_eq!(
            err,
            format!("configuration: server.log_format must be text or json, not `{wrong}`")
        );
    }
    let path = temp_file("svc.toml", "[server]\nlog_format = \"pretty\"\n");
    let err = Settings::load_from(Some(&path), no_env()).unwrap_err().to_string();
    assert!(
        err.contains("server.log_format must be text or json, not `pretty`"),
        "{err}"
    );
}
