//! Every setting there is, read from the settings structs themselves (their JSON Schema), so the
//! list of known keys, their environment variables and README's table cannot drift from the code.

use std::collections::BTreeMap;

use serde_json::Value;

use super::Settings;

/// Prefix of every setting's environment variable; `__` separates the path's segments.
pub const ENV_PREFIX: &str = "SVC_";
pub const ENV_SEPARATOR: &str = "__";

/// The shape of the settings tree.
#[derive(Debug, Clone)]
pub(super) enum Node {
    /// A struct: exactly these keys.
    Table(BTreeMap<String, Node>),
    /// A map keyed by names the operator picks (`generation.providers.<name>`).
    Map(Box<Node>),
    /// An array of tables (`[[generation.models]]`): set in a file only.
    List(Box<Node>),
    /// A value.
    Leaf(Kind),
}

/// What a leaf holds, as far as a test needs to give it another value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    Bool,
    /// One of these words (`server.log_format`).
    Choice(Vec<String>),
    Integer,
    Number,
    String,
    StringList,
    /// A string or a list of strings (`server.ws_secret`).
    StringOrList,
    /// An optional integer.
    OptionalInteger,
}

/// One segment of a setting's path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Segment {
    Key(String),
    /// Any name of a map (`<name>`).
    Name,
    /// Any element of an array of tables (`[]`).
    Element,
}

/// A leaf setting: its path and kind.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SettingKey {
    pub path: Vec<Segment>,
    pub kind: Kind,
}

impl SettingKey {
    /// `server.port`, `generation.providers.<name>.wire`, `generation.models[].route`.
    pub fn dotted(&self) -> String {
        let mut out = String::new();
        for segment in &self.path {
            match segment {
                Segment::Key(k) => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Segment::Name => out.push_str(".<name>"),
                Segment::Element => out.push_str("[]"),
            }
        }
        out
    }

    /// `SVC_SERVER__PORT`; `None` inside an array of tables (a file sets those).
    pub fn env_var(&self) -> Option<String> {
        let parts: Option<Vec<String>> = self
            .path
            .iter()
            .map(|segment| match segment {
                Segment::Key(k) => Some(k.to_uppercase()),
                Segment::Name => Some("<NAME>".to_owned()),
                Segment::Element => None,
            })
            .collect();
        parts.map(|p| format!("{ENV_PREFIX}{}", p.join(ENV_SEPARATOR)))
    }
}

/// The settings tree and its leaves.
#[derive(Debug, Clone)]
pub struct Catalog {
    pub(super) root: Node,
}

impl Catalog {
    /// The catalog of [`Settings`].
    pub fn of_settings() -> Self {
        let schema = serde_json::to_value(schemars::schema_for!(Settings)).expect("a JSON Schema is JSON");
        let defs = schema.get("$defs").cloned().unwrap_or(Value::Null);
        Self {
            root: node(&schema, &defs),
        }
    }

    /// Every leaf, in path order.
    pub fn keys(&self) -> Vec<SettingKey> {
        let mut out = Vec::new();
        leaves(&self.root, &mut Vec::new(), &mut out);
        out
    }
}

fn resolve<'a>(schema: &'a Value, defs: &'a Value) -> &'a Value {
    match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) => {
            let name = reference.rsplit('/').next().unwrap_or_default();
            defs.get(name).map_or(schema, |target| resolve(target, defs))
        }
        None => schema,
    }
}

fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(list)) => list.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// The words of a unit enum: `enum`, or `oneOf` its variants each a `const` (with doc comments).
fn choices(schema: &Value) -> Option<Vec<String>> {
    if let Some(words) = schema.get("enum").and_then(Value::as_array) {
        return Some(words.iter().filter_map(Value::as_str).map(str::to_owned).collect());
    }
    let variants = schema.get("oneOf")?.as_array()?;
    variants
        .iter()
        .map(|variant| variant.get("const").and_then(Value::as_str).map(str::to_owned))
        .collect()
}

fn node(schema: &Value, defs: &Value) -> Node {
    let schema = resolve(schema, defs);
    if let Some(properties) = schema.get("properties").and_then(Value::as_object) {
        return Node::Table(
            properties
                .iter()
                .map(|(key, child)| (key.clone(), node(child, defs)))
                .collect(),
        );
    }
    if let Some(values) = schema.get("additionalProperties").filter(|v| v.is_object()) {
        return Node::Map(Box::new(node(values, defs)));
    }
    if schema.get("anyOf").is_some() {
        return Node::Leaf(Kind::StringOrList);
    }
    if let Some(words) = choices(schema) {
        return Node::Leaf(Kind::Choice(words));
    }
    let kinds = types(schema);
    if kinds.contains(&"array") {
        let items = resolve(schema.get("items").unwrap_or(&Value::Null), defs);
        return match node(items, defs) {
            Node::Leaf(_) => Node::Leaf(Kind::StringList),
            table => Node::List(Box::new(table)),
        };
    }
    let kind = match kinds.iter().find(|t| **t != "null") {
        Some(&"boolean") => Kind::Bool,
        Some(&"integer") if kinds.contains(&"null") => Kind::OptionalInteger,
        Some(&"integer") => Kind::Integer,
        Some(&"number") => Kind::Number,
        _ => Kind::String,
    };
    Node::Leaf(kind)
}

fn leaves(node: &Node, path: &mut Vec<Segment>, out: &mut Vec<SettingKey>) {
    match node {
        Node::Table(children) => {
            for (key, child) in children {
                path.push(Segment::Key(key.clone()));
                leaves(child, path, out);
                path.pop();
            }
        }
        Node::Map(child) => {
            path.push(Segment::Name);
            leaves(child, path, out);
            path.pop();
        }
        Node::List(child) => {
            path.push(Segment::Element);
            leaves(child, path, out);
            path.pop();
        }
        Node::Leaf(kind) => out.push(SettingKey {
            path: path.clone(),
            kind: kind.clone(),
        }),
    }
}
