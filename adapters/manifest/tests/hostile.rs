//! Hostile manifests (the fuzz corpus of issue 13, `fuzz/corpus/app_manifest/`) are refused with
//! the message a user sees, or accepted with their defaults; none panics.

use svc_manifest::{parse_manifest, parse_ui};

fn manifest_error(text: &str) -> String {
    parse_manifest(text.as_bytes()).unwrap_err().to_string()
}

#[test]
fn a_bad_glob_is_refused_with_its_index_and_pattern() {
    let err = manifest_error(r#"{ "blueprints": { "include": ["ok/*.json", "uis/***/svc.ui.json"] } }"#);
    assert!(
        err.starts_with("at /blueprints/include/1: `uis/***/svc.ui.json` is not a glob pattern: "),
        "{err}"
    );
    let err = manifest_error(r#"{ "blueprints": { "include": ["uis/[/svc.ui.json"] } }"#);
    assert!(
        err.starts_with("at /blueprints/include/0: `uis/[/svc.ui.json` is not a glob pattern: "),
        "{err}"
    );
}

#[test]
fn nesting_past_the_parser_limit_is_not_json() {
    let deep = format!(
        r#"{{"blueprints":{{"include":{}{}}}}}"#,
        "[".repeat(5000),
        "]".repeat(5000)
    );
    let err = manifest_error(&deep);
    assert!(err.starts_with("not JSON: recursion limit exceeded"), "{err}");
}

#[test]
fn wrong_types_name_the_path_and_the_rule() {
    let err = manifest_error(r#"{ "app": "x" }"#);
    assert!(err.starts_with("at /app: "), "{err}");
    assert!(err.ends_with("(rule: type)"), "{err}");
    let err = parse_ui(br#"{ "id": "x", "entryPoint": "i.tsx", "mount": "react" }"#)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("at /mount: "), "{err}");
}

#[test]
fn a_huge_name_is_refused_by_the_schema() {
    let ui = format!(
        r#"{{ "id": "x", "name": "{}", "entryPoint": "i.tsx" }}"#,
        "n".repeat(60_000)
    );
    let err = parse_ui(ui.as_bytes()).unwrap_err().to_string();
    assert!(err.starts_with("at /name: "), "{err}");
    assert!(err.ends_with("(rule: maxLength)"), "{err}");
}

#[test]
fn defaults_fill_in_a_minimal_manifest_and_ui() {
    let app = parse_manifest(b"{}").unwrap();
    assert_eq!(app.default_theme_id, svc_domain::themes::DEFAULT_THEME_ID);
    assert_eq!(app.blueprint_includes, None);
    let ui = parse_ui(br#"{ "id": "@acme/invoice@1.2.0", "entryPoint": "index.tsx" }"#).unwrap();
    assert_eq!(
        (ui.name.as_str(), ui.category.as_str()),
        ("@acme/invoice@1.2.0", "manifest")
    );
    assert_eq!(ui.contract, serde_json::json!({}));
}
