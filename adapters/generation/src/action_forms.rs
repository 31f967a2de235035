//! One component per actionSpec intent: a form whose inputs follow the action's schema, or a
//! plain button when the action carries no data. Each submits through `useAction(intent)`, and the
//! form and its button carry `data-intent` so browser tests can find them.

use serde_json::Value;

use crate::controls::{Control, bound_attributes, control_for, initial_state, option_elements, options_literal};
use crate::helpers::Helper;
use crate::needs::{Hook, Needs};
use crate::prop_views::label;
use crate::schema_kind::{SchemaKind, classify, is_scalar, required_names, schema_text, sorted_entries};
use crate::tsx_text::{Writer, humanize, js_string, jsx_text};

/// What the action's `actionData` is built from.
enum ActionInput<'a> {
    /// No schema to speak of: `submit()`.
    Nothing,
    /// An object without declared properties: `submit({})`.
    EmptyObject,
    /// An object: one input per declared property.
    Fields(Vec<Field<'a>>),
    /// A scalar or opaque value: one input whose value is the whole `actionData`.
    Whole(Field<'a>),
}

struct Field<'a> {
    /// Property name, or `None` for the whole value.
    key: Option<&'a str>,
    label: String,
    description: Option<&'a str>,
    required: bool,
    schema: &'a Value,
    control: Control<'a>,
}

/// Writes `function Action<index>()` for one intent.
pub(crate) fn write_action_component(writer: &mut Writer, index: usize, intent: &str, spec: &Value, needs: &mut Needs) {
    needs.hook(Hook::Action);
    needs.hook(Hook::State);
    let schema = spec.get("schema").unwrap_or(&Value::Null);
    let input = action_input(schema);
    let intent_literal = js_string(intent);
    let title = jsx_text(&humanize(intent));

    writer.line(0, &format!("function Action{index}(): ReactNode {{"));
    writer.line(1, &format!("const submit = useAction({intent_literal});"));
    let fields: &[Field<'_>] = match &input {
        ActionInput::Fields(fields) => fields,
        ActionInput::Whole(field) => std::slice::from_ref(field),
        ActionInput::Nothing | ActionInput::EmptyObject => &[],
    };
    for (position, field) in fields.iter().enumerate() {
        let state_type = if field.control == Control::Checkbox {
            "boolean"
        } else {
            "string"
        };
        let initial = initial_state(field.control, field.schema);
        writer.line(
            1,
            &format!("const [value{position}, setValue{position}] = useState<{state_type}>({initial});"),
        );
    }
    writer.line(1, "const [sent, setSent] = useState<boolean>(false);");
    let parses_json = fields.iter().any(|field| field.control == Control::Json);
    if parses_json {
        needs.helper(Helper::ParseJson);
        writer.line(1, "const [error, setError] = useState<string>(\"\");");
    }

    let payload = match &input {
        ActionInput::Nothing => Some(""),
        ActionInput::EmptyObject => Some("{}"),
        ActionInput::Fields(_) | ActionInput::Whole(_) => None,
    };
    if let Some(payload) = payload {
        writer.line(1, "return (");
        writer.line(2, "<section style={styles.section}>");
        writer.line(3, &format!("<h2 style={{styles.sectionTitle}}>{title}</h2>"));
        write_description(writer, 3, spec);
        writer.line(3, &format!("<button type=\"button\" data-intent={{{intent_literal}}} style={{styles.button}} onClick={{() => {{ submit({payload}); setSent(true); }}}}>"));
        writer.line(4, &title);
        writer.line(3, "</button>");
        write_sent_status(writer, 3);
        writer.line(2, "</section>");
        writer.line(1, ");");
        writer.line(0, "}");
        return;
    }

    writer.line(1, "const onSubmit = (event: { preventDefault(): void }): void => {");
    writer.line(2, "event.preventDefault();");
    match &input {
        ActionInput::Fields(_) => writer.line(2, "const data: Record<string, unknown> = {};"),
        _ => writer.line(2, "let data: unknown = undefined;"),
    }
    for (position, field) in fields.iter().enumerate() {
        write_collect(writer, 2, position, field, needs);
    }
    if parses_json {
        writer.line(2, "setError(\"\");");
    }
    writer.line(2, "submit(data);");
    writer.line(2, "setSent(true);");
    writer.line(1, "};");
    writer.line(1, "return (");
    writer.line(2, "<section style={styles.section}>");
    writer.line(3, &format!("<h2 style={{styles.sectionTitle}}>{title}</h2>"));
    write_description(writer, 3, spec);
    writer.line(
        3,
        &format!("<form data-intent={{{intent_literal}}} style={{styles.form}} onSubmit={{onSubmit}}>"),
    );
    for (position, field) in fields.iter().enumerate() {
        write_input(writer, 4, position, field);
    }
    writer.line(
        4,
        &format!("<button type=\"submit\" data-intent={{{intent_literal}}} style={{styles.button}}>"),
    );
    writer.line(5, &title);
    writer.line(4, "</button>");
    if parses_json {
        writer.line(
            4,
            "{error !== \"\" && <span role=\"alert\" style={styles.error}>{error}</span>}",
        );
    }
    write_sent_status(writer, 4);
    writer.line(3, "</form>");
    writer.line(2, "</section>");
    writer.line(1, ");");
    writer.line(0, "}");
}

fn action_input(schema: &Value) -> ActionInput<'_> {
    let kind = classify(schema);
    match kind {
        SchemaKind::Object(properties) => {
            let required = required_names(schema);
            let fields = sorted_entries(properties)
                .into_iter()
                .map(|(key, property)| Field {
                    key: Some(key),
                    label: label(key, property),
                    description: schema_text(property, "description"),
                    required: required.contains(&key),
                    schema: property,
                    control: control_for(property),
                })
                .collect();
            ActionInput::Fields(fields)
        }
        _ if is_scalar(kind) || matches!(kind, SchemaKind::ArrayOfObjects(_) | SchemaKind::ArrayOfScalars(_)) => {
            ActionInput::Whole(whole_field(schema))
        }
        _ if declares_type(schema, "object") => ActionInput::EmptyObject,
        _ if has_any(schema, &["type", "anyOf", "oneOf", "allOf", "$ref", "const"])
            && !declares_type(schema, "null") =>
        {
            ActionInput::Whole(whole_field(schema))
        }
        _ => ActionInput::Nothing,
    }
}

fn whole_field(schema: &Value) -> Field<'_> {
    Field {
        key: None,
        label: schema_text(schema, "title").unwrap_or("Value").to_string(),
        description: schema_text(schema, "description"),
        required: true,
        schema,
        control: control_for(schema),
    }
}

fn declares_type(schema: &Value, name: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(declared)) => declared == name,
        Some(Value::Array(declared)) => declared.len() == 1 && declared[0] == name,
        _ => false,
    }
}

fn has_any(schema: &Value, keywords: &[&str]) -> bool {
    keywords.iter().any(|keyword| schema.get(*keyword).is_some())
}

/// Statements moving one control's state into `data`. Optional empty inputs are left out, so an
/// untouched optional field never trips a `format` or `minLength` in the schema.
fn write_collect(writer: &mut Writer, indent: usize, position: usize, field: &Field<'_>, needs: &mut Needs) {
    let state = format!("value{position}");
    let target = match field.key {
        Some(key) => format!("data[{}]", js_string(key)),
        None => "data".to_string(),
    };
    let when_filled = |value: &str| {
        if field.required {
            format!("{target} = {value};")
        } else {
            format!("if ({state} !== \"\") {target} = {value};")
        }
    };
    let statement = match field.control {
        Control::Text { .. } => when_filled(&state),
        Control::DateTime => {
            needs.helper(Helper::ToIsoDateTime);
            when_filled(&format!("toIsoDateTime({state})"))
        }
        Control::Number { .. } => format!("if ({state} !== \"\") {target} = Number({state});"),
        Control::Checkbox => format!("{target} = {state};"),
        Control::Select(options) => {
            format!(
                "if ({state} !== \"\") {target} = {}[Number({state})];",
                options_literal(options)
            )
        }
        Control::Json => {
            let message = js_string(&format!("{} must be valid JSON.", field.label));
            writer.line(indent, &format!("if ({state}.trim() !== \"\") {{"));
            writer.line(indent + 1, &format!("const parsed = parseJson({state});"));
            writer.line(
                indent + 1,
                &format!("if (!parsed.ok) {{ setError({message}); return; }}"),
            );
            writer.line(indent + 1, &format!("{target} = parsed.value;"));
            writer.line(indent, "}");
            return;
        }
    };
    writer.line(indent, &statement);
}

/// One labelled input bound to `value<position>`.
fn write_input(writer: &mut Writer, indent: usize, position: usize, field: &Field<'_>) {
    let state = format!("value{position}");
    let setter = format!("setValue{position}");
    let label = jsx_text(&field.label);
    let required = if field.required { " required" } else { "" };
    let bounds = bound_attributes(field.control, field.schema);
    if field.control == Control::Checkbox {
        writer.line(indent, "<label style={styles.checkLabel}>");
        writer.line(
            indent + 1,
            &format!(
                "<input type=\"checkbox\" checked={{{state}}} onChange={{(event) => {setter}(event.target.checked)}} />"
            ),
        );
        writer.line(indent + 1, &format!("<span>{label}</span>"));
        writer.line(indent, "</label>");
        write_field_description(writer, indent, field);
        return;
    }
    writer.line(indent, "<label style={styles.inputLabel}>");
    writer.line(indent + 1, &format!("<span>{label}</span>"));
    let on_change = format!("onChange={{(event) => {setter}(event.target.value)}}");
    match field.control {
        Control::Select(options) => {
            writer.line(indent + 1, &format!("<select style={{styles.input}} value={{{state}}} {on_change}{required}>"));
            for option in option_elements(options, "Choose…") {
                writer.line(indent + 2, &option);
            }
            writer.line(indent + 1, "</select>");
        }
        Control::Json => writer.line(
            indent + 1,
            &format!("<textarea style={{styles.input}} rows={{4}} placeholder=\"JSON\" value={{{state}}} {on_change}{required} />"),
        ),
        _ => {
            let input_type = match field.control {
                Control::Text { input_type } => input_type,
                Control::DateTime => "datetime-local",
                _ => "number",
            };
            writer.line(
                indent + 1,
                &format!("<input type=\"{input_type}\" style={{styles.input}} value={{{state}}} {on_change}{required}{bounds} />"),
            );
        }
    }
    writer.line(indent, "</label>");
    write_field_description(writer, indent, field);
}

fn write_field_description(writer: &mut Writer, indent: usize, field: &Field<'_>) {
    if let Some(description) = field.description {
        writer.line(
            indent,
            &format!("<p style={{styles.hint}}>{}</p>", jsx_text(description)),
        );
    }
}

fn write_description(writer: &mut Writer, indent: usize, spec: &Value) {
    if let Some(description) = schema_text(spec, "description") {
        writer.line(
            indent,
            &format!("<p style={{styles.hint}}>{}</p>", jsx_text(description)),
        );
    }
}

fn write_sent_status(writer: &mut Writer, indent: usize) {
    writer.line(
        indent,
        "{sent && <span role=\"status\" style={styles.status}>{\"Sent\"}</span>}",
    );
}
