//! What a JSON Schema says a value looks like, reduced to the shapes the generator knows how to
//! show or edit. Anything else falls back to a generic JSON view.

use serde_json::{Map, Value};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum SchemaKind<'a> {
    Text(TextFormat),
    Number {
        integer: bool,
    },
    Boolean,
    Enum(&'a [Value]),
    /// An object with declared properties.
    Object(&'a Map<String, Value>),
    /// An array whose items are objects with declared properties: a table.
    ArrayOfObjects(&'a Map<String, Value>),
    /// An array of scalars (item schema given).
    ArrayOfScalars(&'a Value),
    /// Anything else: no type, unions, refs, open objects, arrays of arrays.
    Unknown,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum TextFormat {
    Plain,
    Uri,
    Email,
    Date,
    DateTime,
    /// RFC 3339 `full-time` (`09:30:00Z`), what JSON Schema's `format: time` accepts.
    Time,
}

pub(crate) fn classify(schema: &Value) -> SchemaKind<'_> {
    let Some(schema) = schema.as_object() else {
        return SchemaKind::Unknown;
    };
    if let Some(Value::Array(options)) = schema.get("enum")
        && !options.is_empty()
    {
        return SchemaKind::Enum(options);
    }
    match primary_type(schema) {
        Some("string") => SchemaKind::Text(text_format(schema)),
        Some("number") => SchemaKind::Number { integer: false },
        Some("integer") => SchemaKind::Number { integer: true },
        Some("boolean") => SchemaKind::Boolean,
        Some("object") => match schema.get("properties").and_then(Value::as_object) {
            Some(properties) if !properties.is_empty() => SchemaKind::Object(properties),
            _ => SchemaKind::Unknown,
        },
        Some("array") => classify_items(schema.get("items")),
        _ => SchemaKind::Unknown,
    }
}

/// Whether values of this kind are single scalars.
pub(crate) fn is_scalar(kind: SchemaKind<'_>) -> bool {
    matches!(
        kind,
        SchemaKind::Text(_) | SchemaKind::Number { .. } | SchemaKind::Boolean | SchemaKind::Enum(_)
    )
}

/// Properties in the order the contract declared them (serde_json keeps insertion order in this
/// workspace), which is the order the agent meant a person to read them in.
pub(crate) fn declared_entries(map: &Map<String, Value>) -> Vec<(&str, &Value)> {
    map.iter().map(|(key, value)| (key.as_str(), value)).collect()
}

/// The names listed in a schema's `required`.
pub(crate) fn required_names(schema: &Value) -> Vec<&str> {
    schema
        .get("required")
        .and_then(Value::as_array)
        .map(|names| names.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// A schema's `title`, `description` or `default`, when present.
pub(crate) fn schema_text<'a>(schema: &'a Value, keyword: &str) -> Option<&'a str> {
    schema
        .get(keyword)
        .and_then(Value::as_str)
        .filter(|text| !text.trim().is_empty())
}

fn classify_items(items: Option<&Value>) -> SchemaKind<'_> {
    let Some(items) = items else {
        return SchemaKind::Unknown;
    };
    match classify(items) {
        SchemaKind::Object(properties) => SchemaKind::ArrayOfObjects(properties),
        kind if is_scalar(kind) => SchemaKind::ArrayOfScalars(items),
        _ => SchemaKind::Unknown,
    }
}

/// The declared type, ignoring `null` in a type list (`["string", "null"]` is a string), or the
/// type implied by `properties` / `items` when `type` is absent.
fn primary_type(schema: &Map<String, Value>) -> Option<&str> {
    match schema.get("type") {
        Some(Value::String(name)) => Some(name.as_str()),
        Some(Value::Array(names)) => names.iter().filter_map(Value::as_str).find(|name| *name != "null"),
        _ if schema.contains_key("properties") => Some("object"),
        _ if schema.contains_key("items") => Some("array"),
        _ => None,
    }
}

fn text_format(schema: &Map<String, Value>) -> TextFormat {
    match schema.get("format").and_then(Value::as_str) {
        Some("uri" | "url" | "iri") => TextFormat::Uri,
        Some("email" | "idn-email") => TextFormat::Email,
        Some("date") => TextFormat::Date,
        Some("date-time") => TextFormat::DateTime,
        Some("time") => TextFormat::Time,
        _ => TextFormat::Plain,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn scalars_and_formats() {
        assert_eq!(
            classify(&json!({"type": "string"})),
            SchemaKind::Text(TextFormat::Plain)
        );
        assert_eq!(
            classify(&json!({"type": ["string", "null"], "format": "uri"})),
            SchemaKind::Text(TextFormat::Uri)
        );
        assert_eq!(
            classify(&json!({"type": "string", "format": "date-time"})),
            SchemaKind::Text(TextFormat::DateTime)
        );
        assert_eq!(
            classify(&json!({"type": "integer"})),
            SchemaKind::Number { integer: true }
        );
        assert_eq!(classify(&json!({"type": "boolean"})), SchemaKind::Boolean);
        assert!(matches!(classify(&json!({"enum": ["a", 1]})), SchemaKind::Enum(options) if options.len() == 2));
    }

    #[test]
    fn arrays_of_objects_are_tables_and_arrays_of_scalars_are_lists() {
        let table = json!({"type": "array", "items": {"type": "object", "properties": {"a": {}}}});
        assert!(matches!(classify(&table), SchemaKind::ArrayOfObjects(_)));
        let list = json!({"items": {"type": "number"}});
        assert!(matches!(classify(&list), SchemaKind::ArrayOfScalars(_)));
        assert_eq!(
            classify(&json!({"type": "array", "items": {"type": "array"}})),
            SchemaKind::Unknown
        );
    }

    #[test]
    fn open_objects_and_unions_are_unknown() {
        assert_eq!(classify(&json!({"type": "object"})), SchemaKind::Unknown);
        assert_eq!(classify(&json!({"anyOf": [{"type": "string"}]})), SchemaKind::Unknown);
        assert_eq!(classify(&json!(true)), SchemaKind::Unknown);
    }
}
