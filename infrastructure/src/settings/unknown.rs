//! Refusing keys no setting declares, with the nearest known one, so a typo in a config file or
//! an environment variable stops start-up instead of being silently ignored.

use serde_json::Value;

use super::catalog::{Catalog, ENV_PREFIX, ENV_SEPARATOR, Kind, Node};

/// A key no setting declares, and the known key nearest to it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownKey {
    pub key: String,
    pub nearest: Option<String>,
}

impl Catalog {
    /// The first key of a file's table that no setting declares (`server.prot`).
    pub fn unknown_in_file(&self, table: &Value) -> Option<UnknownKey> {
        let mut path = Vec::new();
        let key = first_unknown(&self.root, table, &mut path)?;
        let known: Vec<String> = self.keys().iter().map(|k| k.dotted()).collect();
        Some(UnknownKey {
            nearest: nearest(&key, &known),
            key,
        })
    }

    /// Whether `SVC_...` names a setting. A variable without `__` is not a setting (the test and
    /// tool variables `SVC_TEST_DATABASE_URL`, `SVC_REQUIRE_PEERS`, ... live there) unless it is a
    /// setting's name with `_` for `__`, the usual typo, which is refused like any unknown key.
    pub fn check_env_var(&self, name: &str) -> EnvVar {
        let Some(rest) = name.strip_prefix(ENV_PREFIX) else {
            return EnvVar::NotASetting;
        };
        let known: Vec<String> = self.keys().iter().filter_map(|k| k.env_var()).collect();
        let refuse = || {
            EnvVar::Unknown(UnknownKey {
                key: name.to_owned(),
                nearest: nearest(name, &known),
            })
        };
        if !rest.contains(ENV_SEPARATOR) {
            return match known.iter().find_map(|k| single_underscore_form(k, name)) {
                Some(meant) => EnvVar::Unknown(UnknownKey {
                    key: name.to_owned(),
                    nearest: Some(meant),
                }),
                None => EnvVar::NotASetting,
            };
        }
        let segments: Vec<String> = rest.split(ENV_SEPARATOR).map(str::to_lowercase).collect();
        match env_path_kind(&self.root, &segments) {
            Some(kind) => EnvVar::Setting(kind.clone()),
            None => refuse(),
        }
    }
}

/// The setting variable `known` that `name` is when written with `_` for every `__` (the usual
/// typo), with a `<NAME>` segment filled in from `name`: `SVC_GENERATION_PROVIDERS_OPENAI_API_KEY`
/// is `SVC_GENERATION__PROVIDERS__OPENAI__API_KEY`.
fn single_underscore_form(known: &str, name: &str) -> Option<String> {
    let flattened = known.replace(ENV_SEPARATOR, "_");
    match flattened.split_once("<NAME>") {
        None => (flattened == name).then(|| known.to_owned()),
        Some((before, after)) if !after.contains("<NAME>") => {
            let entry = name.strip_prefix(before)?.strip_suffix(after)?;
            (!entry.is_empty()).then(|| known.replace("<NAME>", entry))
        }
        // Two names in one key: no setting has that shape.
        Some(_) => None,
    }
}

/// What an `SVC_*` environment variable is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum EnvVar {
    /// A setting's variable, and what the setting holds.
    Setting(Kind),
    NotASetting,
    Unknown(UnknownKey),
}

fn first_unknown(node: &Node, value: &Value, path: &mut Vec<String>) -> Option<String> {
    match (node, value) {
        (Node::Table(children), Value::Object(entries)) => entries.iter().find_map(|(key, child)| {
            path.push(key.clone());
            let found = match children.get(key) {
                Some(known) => first_unknown(known, child, path),
                None => Some(path.join(".")),
            };
            path.pop();
            found
        }),
        (Node::Map(child), Value::Object(entries)) => entries.iter().find_map(|(key, value)| {
            path.push(key.clone());
            let found = first_unknown(child, value, path);
            path.pop();
            found
        }),
        (Node::List(child), Value::Array(items)) => items.iter().find_map(|item| {
            let last = path.pop().unwrap_or_default();
            path.push(format!("{last}[]"));
            let found = first_unknown(child, item, path);
            path.pop();
            path.push(last);
            found
        }),
        // A leaf, or a value of the wrong type, which deserialising reports with its own message.
        _ => None,
    }
}

/// What the leaf at `segments` holds, if a setting is there.
fn env_path_kind<'n>(node: &'n Node, segments: &[String]) -> Option<&'n Kind> {
    match (node, segments) {
        (Node::Leaf(kind), []) => Some(kind),
        (Node::Table(children), [first, rest @ ..]) => env_path_kind(children.get(first)?, rest),
        (Node::Map(child), [name, rest @ ..]) if !name.is_empty() => env_path_kind(child, rest),
        _ => None,
    }
}

/// The known key with the smallest edit distance, if any is reasonably close.
fn nearest(key: &str, known: &[String]) -> Option<String> {
    known
        .iter()
        .map(|k| (strsim::levenshtein(&key.to_lowercase(), &k.to_lowercase()), k))
        .min_by_key(|(distance, _)| *distance)
        .filter(|(distance, _)| *distance <= key.len().max(4) / 2)
        .map(|(_, k)| k.clone())
}
