//! Input controls for schema-typed values, shared by action forms and context slots.

use serde_json::{Map, Value};

use crate::schema_kind::{SchemaKind, TextFormat, classify};
use crate::tsx_text::{js_literal, js_string, jsx_text};

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Control<'a> {
    /// An `<input>` of a text-like type (`text`, `url`, `email`, `date`).
    Text {
        input_type: &'static str,
    },
    /// A `datetime-local` input, converted to and from RFC 3339.
    DateTime,
    /// A `time` input whose `09:30` is sent as RFC 3339 `full-time` (`09:30:00Z`), as
    /// `format: time` requires.
    Time,
    Number {
        integer: bool,
    },
    Checkbox,
    /// A `<select>` over the schema's enum values, tracked by index so non-string values survive.
    Select(&'a [Value]),
    /// A few enum values as a segmented radio group (tracked by index like `Select`).
    Segmented(&'a [Value]),
    /// An array of objects with scalar columns: a repeatable row editor.
    Rows(&'a Map<String, Value>),
    /// A textarea holding JSON, for shapes no simpler control can edit.
    Json,
}

/// Enums with at most this many values are segmented controls; longer ones are selects.
const MAX_SEGMENTS: usize = 4;

pub(crate) fn control_for(schema: &Value) -> Control<'_> {
    match classify(schema) {
        SchemaKind::Enum(options) if options.len() <= MAX_SEGMENTS => Control::Segmented(options),
        SchemaKind::Enum(options) => Control::Select(options),
        SchemaKind::Text(TextFormat::Time) => Control::Time,
        SchemaKind::ArrayOfObjects(columns)
            if columns
                .values()
                .all(|column| matches!(cell_control(column), Some(control) if control != Control::Json)) =>
        {
            Control::Rows(columns)
        }
        SchemaKind::Text(TextFormat::Plain) => Control::Text { input_type: "text" },
        SchemaKind::Text(TextFormat::Uri) => Control::Text { input_type: "url" },
        SchemaKind::Text(TextFormat::Email) => Control::Text { input_type: "email" },
        SchemaKind::Text(TextFormat::Date) => Control::Text { input_type: "date" },
        SchemaKind::Text(TextFormat::DateTime) => Control::DateTime,
        SchemaKind::Number { integer } => Control::Number { integer },
        SchemaKind::Boolean => Control::Checkbox,
        _ => Control::Json,
    }
}

/// The control for one cell of a row editor: scalars only, enums always as selects.
pub(crate) fn cell_control(schema: &Value) -> Option<Control<'_>> {
    match control_for(schema) {
        Control::Segmented(options) => Some(Control::Select(options)),
        Control::Rows(_) | Control::Json => None,
        control => Some(control),
    }
}

/// Extra attributes from the schema's bounds, each with a leading space.
pub(crate) fn bound_attributes(control: Control<'_>, schema: &Value) -> String {
    let number = |keyword: &str| {
        schema
            .get(keyword)
            .filter(|value| value.is_number())
            .map(Value::to_string)
    };
    match control {
        Control::Number { integer } => {
            let mut attributes = format!(" step={}", if integer { "{1}" } else { "\"any\"" });
            if let Some(minimum) = number("minimum") {
                attributes.push_str(&format!(" min={{{minimum}}}"));
            }
            if let Some(maximum) = number("maximum") {
                attributes.push_str(&format!(" max={{{maximum}}}"));
            }
            attributes
        }
        Control::Text { .. } => number("maxLength")
            .map(|max| format!(" maxLength={{{max}}}"))
            .unwrap_or_default(),
        _ => String::new(),
    }
}

/// `<option>`s for a select, values being indexes into `options`.
pub(crate) fn option_elements(options: &[Value], placeholder: &str) -> Vec<String> {
    let mut elements = vec![format!("<option value=\"\">{}</option>", jsx_text(placeholder))];
    for (index, option) in options.iter().enumerate() {
        let label = option.as_str().map_or_else(|| option.to_string(), str::to_string);
        elements.push(format!("<option value=\"{index}\">{}</option>", jsx_text(&label)));
    }
    elements
}

/// The enum values as an array literal, for turning a selected index back into a value.
pub(crate) fn options_literal(options: &[Value]) -> String {
    js_literal(&Value::Array(options.to_vec()))
}

/// The initial state of a form control from the schema's `default`, as a TS expression.
pub(crate) fn initial_state(control: Control<'_>, schema: &Value) -> String {
    let default = schema.get("default");
    match control {
        Control::Checkbox => default.and_then(Value::as_bool).unwrap_or(false).to_string(),
        Control::Text { .. } => js_string(default.and_then(Value::as_str).unwrap_or("")),
        Control::Number { .. } => js_string(
            &default
                .filter(|value| value.is_number())
                .map(Value::to_string)
                .unwrap_or_default(),
        ),
        Control::Select(options) | Control::Segmented(options) => {
            let selected = default.and_then(|value| options.iter().position(|option| option == value));
            js_string(&selected.map(|index| index.to_string()).unwrap_or_default())
        }
        Control::Rows(_) => "[]".to_string(),
        Control::Json => js_string(
            &default
                .map(|value| serde_json::to_string_pretty(value).unwrap_or_default())
                .unwrap_or_default(),
        ),
        Control::DateTime | Control::Time => js_string(""),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn controls_follow_the_schema() {
        assert_eq!(
            control_for(&json!({"type": "string"})),
            Control::Text { input_type: "text" }
        );
        assert_eq!(
            control_for(&json!({"type": "string", "format": "email"})),
            Control::Text { input_type: "email" }
        );
        assert_eq!(
            control_for(&json!({"type": "integer"})),
            Control::Number { integer: true }
        );
        assert_eq!(control_for(&json!({"type": "boolean"})), Control::Checkbox);
        assert!(matches!(control_for(&json!({"enum": ["a"]})), Control::Segmented(_)));
        assert!(matches!(
            control_for(&json!({"enum": ["a", "b", "c", "d", "e"]})),
            Control::Select(_)
        ));
        assert_eq!(control_for(&json!({"type": "string", "format": "time"})), Control::Time);
        let rows = json!({"type": "array", "items": {"type": "object", "properties": {"sku": {"type": "string"}}}});
        assert!(matches!(control_for(&rows), Control::Rows(_)));
        assert_eq!(control_for(&json!({"type": "array"})), Control::Json);
    }

    #[test]
    fn defaults_become_initial_state() {
        let select = json!({"enum": ["a", "b"], "default": "b"});
        assert_eq!(initial_state(control_for(&select), &select), "\"1\"");
        let flag = json!({"type": "boolean", "default": true});
        assert_eq!(initial_state(control_for(&flag), &flag), "true");
        let number = json!({"type": "number", "default": 2.5});
        assert_eq!(initial_state(control_for(&number), &number), "\"2.5\"");
    }

    #[test]
    fn numbers_get_their_bounds() {
        let schema = json!({"type": "integer", "minimum": 1, "maximum": 9});
        assert_eq!(
            bound_attributes(control_for(&schema), &schema),
            " step={1} min={1} max={9}"
        );
    }
}
