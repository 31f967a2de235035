//! Every setting README documents does something: a documented setting that no code reads is a
//! bug (an operator sets it and nothing changes). The settings README lists are the catalog's
//! (`readme_lists_every_setting_with_its_environment_variable` checks the table), so this walks
//! the catalog and looks for a read of each one in the binary's sources.
//!
//! A read is the field accessed (`.window_seconds`, not a method call of that name) in a source
//! file of `infrastructure/src` that also names the setting's table (`public_demo`), outside the
//! settings machinery that only parses, layers and lists settings. A scan, not a proof: it finds
//! a setting left behind when the code that used it goes.

use std::path::{Path, PathBuf};

use super::catalog::{Catalog, Segment};

/// Files that only declare, parse or list settings: a field named there is not a use.
const MACHINERY: [&str; 4] = ["catalog.rs", "layers.rs", "unknown.rs", "tests.rs"];

fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            sources(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            let in_settings = path.parent().is_some_and(|p| p.ends_with("settings"));
            let name = path.file_name().unwrap().to_string_lossy();
            if in_settings && (MACHINERY.contains(&name.as_ref()) || name == "read_somewhere.rs") {
                continue;
            }
            out.push((path.clone(), std::fs::read_to_string(&path).unwrap()));
        }
    }
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// Whether `text` reads the field `field`: `.field` not followed by more of a name or by `(`.
fn reads_field(text: &str, field: &str) -> bool {
    let needle = format!(".{field}");
    text.match_indices(&needle).any(|(i, _)| {
        let rest = text[i + needle.len()..].trim_start();
        !rest.starts_with(is_ident) && !rest.starts_with('(')
    })
}

#[test]
fn field_reads_are_told_from_methods_and_longer_names() {
    assert!(reads_field("let n = settings.live.bus;", "bus"));
    assert!(reads_field("if s.enabled {", "enabled"));
    assert!(!reads_field("s.enabled_adapters", "enabled"));
    assert!(!reads_field("urls.public_base_url()", "public_base_url"));
}

#[test]
fn every_documented_setting_is_read_somewhere() {
    let mut files = Vec::new();
    sources(&Path::new(env!("CARGO_MANIFEST_DIR")).join("src"), &mut files);
    let keys = Catalog::of_settings().keys();
    assert!(keys.len() > 60, "the catalog lists every setting: {}", keys.len());
    let unread: Vec<String> = keys
        .iter()
        .filter(|key| {
            let names: Vec<&str> = key
                .path
                .iter()
                .filter_map(|s| match s {
                    Segment::Key(k) => Some(k.as_str()),
                    Segment::Name | Segment::Element => None,
                })
                .collect();
            let [.., table, field] = names.as_slice() else {
                return true;
            };
            !files
                .iter()
                .any(|(_, text)| reads_field(text, field) && text.contains(table))
        })
        .map(|key| key.dotted())
        .collect();
    assert!(
        unread.is_empty(),
        "README documents settings that no code in infrastructure/src reads: {unread:?}"
    );
}
