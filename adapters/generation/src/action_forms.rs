//! One component per actionSpec intent: a form whose controls produce exactly what the action's
//! schema accepts, or a plain button when the action carries no data. Each sends through
//! `useAction(intent)` once per gesture (a double click sends once), then says what it sent. The
//! form and its button carry `data-intent`, and the button `data-tone`, for browser tests.

use serde_json::Value;

use crate::controls::{
    Control, bound_attributes, cell_control, control_for, initial_state, option_elements, options_literal,
};
use crate::helpers::Helper;
use crate::needs::Needs;
use crate::prop_views::label;
use crate::schema_kind::{SchemaKind, classify, declared_entries, is_scalar, required_names, schema_text};
use crate::send_state::{button_attributes, invalid_attributes, write_field_error, write_send_state, write_status};
use crate::tsx_text::{Writer, humanize, js_string, jsx_text, name_words};

/// Words of an intent that destroys or refuses something: its button is styled as danger.
const DANGER_WORDS: &[&str] = &[
    "reject", "delete", "remove", "cancel", "decline", "deny", "revoke", "discard", "abort", "refuse", "destroy",
];

/// How an action's button looks: the card's one primary action, a secondary one, or danger.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Tone {
    Primary,
    Secondary,
    Danger,
}

impl Tone {
    pub(crate) fn style(self) -> &'static str {
        match self {
            Self::Primary => "styles.button",
            Self::Secondary => "styles.secondaryButton",
            Self::Danger => "styles.dangerButton",
        }
    }

    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Primary => "primary",
            Self::Secondary => "secondary",
            Self::Danger => "danger",
        }
    }
}

/// Words of an intent that goes back a step: never the primary action.
const BACK_WORDS: &[&str] = &["back", "previous", "prev"];

/// Tones for the card's intents in order: danger by name, going back secondary, the first other
/// one primary.
pub(crate) fn tones(intents: &[&str]) -> Vec<Tone> {
    let mut primary_given = false;
    intents
        .iter()
        .map(|intent| {
            let words = name_words(intent);
            if words.iter().any(|word| DANGER_WORDS.contains(&word.as_str())) {
                Tone::Danger
            } else if primary_given || words.iter().any(|word| BACK_WORDS.contains(&word.as_str())) {
                Tone::Secondary
            } else {
                primary_given = true;
                Tone::Primary
            }
        })
        .collect()
}

/// Whether the action is a bare button (no data to fill in), so the card can put it in its
/// bottom action bar.
pub(crate) fn is_button_only(spec: &Value) -> bool {
    matches!(
        action_input(spec.get("schema").unwrap_or(&Value::Null)),
        ActionInput::Nothing | ActionInput::EmptyObject
    )
}

/// What the action's `actionData` is built from.
enum ActionInput<'a> {
    /// No schema to speak of: `submit()`.
    Nothing,
    /// An object without declared properties: `submit({})`.
    EmptyObject,
    /// An object: one control per declared property, objects as fieldsets.
    Fields(Vec<Item<'a>>),
    /// A scalar or opaque value: one control whose value is the whole `actionData`.
    Whole(Field<'a>),
}

/// A top-level entry of a form: a field, or a fieldset of an object's fields.
enum Item<'a> {
    Field(Field<'a>),
    Group {
        key: &'a str,
        label: String,
        required: bool,
        fields: Vec<Field<'a>>,
    },
}

struct Field<'a> {
    /// Property name, or `None` for the whole value.
    key: Option<&'a str>,
    label: String,
    description: Option<&'a str>,
    required: bool,
    schema: &'a Value,
    control: Control<'a>,
    /// Index of the field's state (`value<position>`).
    position: usize,
    /// Where the server's violations name this field: its JSON Pointer without the leading
    /// slash (`contact/email`), "" for the whole value.
    error_key: String,
}

/// Writes `function Action<index>()` for one intent.
pub(crate) fn write_action_component(
    writer: &mut Writer,
    index: usize,
    intent: &str,
    spec: &Value,
    tone: Tone,
    needs: &mut Needs,
) {
    let schema = spec.get("schema").unwrap_or(&Value::Null);
    let input = action_input(schema);
    let intent_literal = js_string(intent);
    let title = jsx_text(&humanize(intent));
    let button_attributes = button_attributes(&intent_literal, tone.name(), tone.style());

    writer.line(0, &format!("function Action{index}(): ReactNode {{"));
    write_send_state(writer, &intent_literal, needs);
    let fields: Vec<&Field<'_>> = match &input {
        ActionInput::Fields(items) => items
            .iter()
            .flat_map(|item| match item {
                Item::Field(field) => vec![field],
                Item::Group { fields, .. } => fields.iter().collect(),
            })
            .collect(),
        ActionInput::Whole(field) => vec![field],
        ActionInput::Nothing | ActionInput::EmptyObject => Vec::new(),
    };
    for field in &fields {
        let state_type = match field.control {
            Control::Checkbox => "boolean",
            Control::Rows(_) => "Record<string, string>[]",
            _ => "string",
        };
        let initial = initial_state(field.control, field.schema);
        let position = field.position;
        writer.line(
            1,
            &format!("const [value{position}, setValue{position}] = useState<{state_type}>({initial});"),
        );
    }
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
        writer.line(2, "<>");
        writer.line(
            3,
            &format!("<button type=\"button\" {button_attributes} onClick={{() => send({payload})}}>"),
        );
        writer.line(4, &title);
        writer.line(3, "</button>");
        write_status(writer, 3, &humanize(intent), false);
        writer.line(2, "</>");
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
    match &input {
        ActionInput::Fields(items) => {
            for item in items {
                match item {
                    Item::Field(field) => write_collect(writer, 2, field, "data", needs),
                    Item::Group {
                        key, required, fields, ..
                    } => {
                        writer.line(2, "{");
                        writer.line(3, "const group: Record<string, unknown> = {};");
                        for field in fields {
                            write_collect(writer, 3, field, "group", needs);
                        }
                        let condition = if *required {
                            String::new()
                        } else {
                            "if (Object.keys(group).length > 0) ".to_string()
                        };
                        writer.line(3, &format!("{condition}data[{}] = group;", js_string(key)));
                        writer.line(2, "}");
                    }
                }
            }
        }
        ActionInput::Whole(field) => write_collect(writer, 2, field, "data", needs),
        _ => {}
    }
    if parses_json {
        writer.line(2, "setError(\"\");");
    }
    writer.line(2, "send(data);");
    writer.line(1, "};");
    writer.line(1, "return (");
    writer.line(2, "<section style={styles.section}>");
    writer.line(3, &format!("<h2 style={{styles.sectionTitle}}>{title}</h2>"));
    write_description(writer, 3, spec);
    writer.line(
        3,
        &format!("<form data-intent={{{intent_literal}}} style={{styles.form}} onSubmit={{onSubmit}}>"),
    );
    match &input {
        ActionInput::Fields(items) => {
            for item in items {
                match item {
                    Item::Field(field) => write_field(writer, 4, index, field, needs),
                    Item::Group { label, fields, .. } => {
                        writer.line(4, "<fieldset style={styles.fieldset}>");
                        writer.line(5, &format!("<legend>{}</legend>", jsx_text(label)));
                        for field in fields {
                            write_field(writer, 5, index, field, needs);
                        }
                        writer.line(4, "</fieldset>");
                    }
                }
            }
        }
        ActionInput::Whole(field) => write_field(writer, 4, index, field, needs),
        _ => {}
    }
    writer.line(4, "<div style={styles.actions}>");
    writer.line(5, &format!("<button type=\"submit\" {button_attributes}>"));
    writer.line(6, &title);
    writer.line(5, "</button>");
    write_status(writer, 5, &humanize(intent), true);
    writer.line(4, "</div>");
    if parses_json {
        writer.line(
            4,
            "{error !== \"\" && <span role=\"alert\" style={styles.error}>{error}</span>}",
        );
    }
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
            let mut position = 0;
            let items = declared_entries(properties)
                .into_iter()
                .map(|(key, property)| match classify(property) {
                    SchemaKind::Object(inner) => {
                        let inner_required = required_names(property);
                        let fields = declared_entries(inner)
                            .into_iter()
                            .map(|(inner_key, inner_schema)| {
                                position += 1;
                                make_field(
                                    Some(inner_key),
                                    format!("{key}/{inner_key}"),
                                    inner_schema,
                                    inner_required.contains(&inner_key),
                                    position - 1,
                                )
                            })
                            .collect();
                        Item::Group {
                            key,
                            label: label(key, property),
                            required: required.contains(&key),
                            fields,
                        }
                    }
                    _ => {
                        position += 1;
                        Item::Field(make_field(
                            Some(key),
                            key.to_string(),
                            property,
                            required.contains(&key),
                            position - 1,
                        ))
                    }
                })
                .collect();
            ActionInput::Fields(items)
        }
        _ if is_scalar(kind) || matches!(kind, SchemaKind::ArrayOfObjects(_) | SchemaKind::ArrayOfScalars(_)) => {
            ActionInput::Whole(make_field(None, String::new(), schema, true, 0))
        }
        _ if declares_type(schema, "object") => ActionInput::EmptyObject,
        _ if has_any(schema, &["type", "anyOf", "oneOf", "allOf", "$ref", "const"])
            && !declares_type(schema, "null") =>
        {
            ActionInput::Whole(make_field(None, String::new(), schema, true, 0))
        }
        _ => ActionInput::Nothing,
    }
}

fn make_field<'a>(
    key: Option<&'a str>,
    error_key: String,
    schema: &'a Value,
    required: bool,
    position: usize,
) -> Field<'a> {
    Field {
        error_key,
        key,
        label: match key {
            Some(key) => label(key, schema),
            None => schema_text(schema, "title").unwrap_or("Value").to_string(),
        },
        description: schema_text(schema, "description"),
        required,
        schema,
        control: control_for(schema),
        position,
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

/// Statements moving one control's state into `object` (or the whole `data`). Optional empty
/// inputs are left out, so an untouched optional field never trips a `format` or `minLength`.
fn write_collect(writer: &mut Writer, indent: usize, field: &Field<'_>, object: &str, needs: &mut Needs) {
    let state = format!("value{}", field.position);
    let target = match field.key {
        Some(key) => format!("{object}[{}]", js_string(key)),
        None => "data".to_string(),
    };
    if let Control::Rows(columns) = field.control {
        writer.line(indent, &format!("{target} = value{}.map((row) => {{", field.position));
        writer.line(indent + 1, "const item: Record<string, unknown> = {};");
        let required = required_names(field.schema.get("items").unwrap_or(&Value::Null));
        for (key, schema) in declared_entries(columns) {
            let control = cell_control(schema).unwrap_or(Control::Json);
            let value = format!("(row[{}] ?? \"\")", js_string(key));
            let statement = convert(
                control,
                &value,
                &format!("item[{}]", js_string(key)),
                required.contains(&key),
                true,
                needs,
            );
            writer.line(indent + 1, &statement);
        }
        writer.line(indent + 1, "return item;");
        writer.line(indent, "});");
        return;
    }
    if field.control == Control::Json {
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
    let statement = convert(field.control, &state, &target, field.required, false, needs);
    writer.line(indent, &statement);
}

/// One statement storing the control's text state `value` into `target` as the schema's type.
/// `checkbox_as_text`: row editors keep a checkbox as `"true"` or `""`.
fn convert(
    control: Control<'_>,
    value: &str,
    target: &str,
    required: bool,
    checkbox_as_text: bool,
    needs: &mut Needs,
) -> String {
    let when_filled = |converted: &str| {
        if required {
            format!("{target} = {converted};")
        } else {
            format!("if ({value} !== \"\") {target} = {converted};")
        }
    };
    match control {
        Control::Text { .. } => when_filled(value),
        Control::DateTime => {
            needs.helper(Helper::ToIsoDateTime);
            when_filled(&format!("toIsoDateTime({value})"))
        }
        Control::Time => {
            needs.helper(Helper::ToFullTime);
            when_filled(&format!("toFullTime({value})"))
        }
        Control::Number { .. } => format!("if ({value} !== \"\") {target} = Number({value});"),
        Control::Checkbox if checkbox_as_text => format!("{target} = {value} === \"true\";"),
        Control::Checkbox => format!("{target} = {value};"),
        Control::Select(options) | Control::Segmented(options) => format!(
            "if ({value} !== \"\") {target} = {}[Number({value})];",
            options_literal(options)
        ),
        Control::Rows(_) | Control::Json => format!("if ({value} !== \"\") {target} = {value};"),
    }
}

/// One labelled control bound to `value<position>`.
fn write_field(writer: &mut Writer, indent: usize, action: usize, field: &Field<'_>, needs: &mut Needs) {
    let state = format!("value{}", field.position);
    let setter = format!("setValue{}", field.position);
    let label = jsx_text(&field.label);
    let error_id = format!("action{action}-error{}", field.position);
    match field.control {
        Control::Checkbox => {
            writer.line(indent, "<label style={styles.checkLabel}>");
            writer.line(
                indent + 1,
                &format!(
                    "<input type=\"checkbox\" checked={{{state}}} onChange={{(event) => {setter}(event.target.checked)}} />"
                ),
            );
            writer.line(indent + 1, &format!("<span>{label}</span>"));
            writer.line(indent, "</label>");
        }
        Control::Segmented(options) => {
            writer.line(indent, "<fieldset style={styles.segments}>");
            writer.line(
                indent + 1,
                &format!("<legend style={{styles.factName}}>{label}</legend>"),
            );
            for (index, option) in options.iter().enumerate() {
                let text = option.as_str().map_or_else(|| option.to_string(), humanize_option);
                writer.line(indent + 1, "<label style={styles.segment}>");
                writer.line(
                    indent + 2,
                    &format!(
                        "<input type=\"radio\" name=\"action{action}-{}\" value=\"{index}\" checked={{{state} === \"{index}\"}} \
                         onChange={{(event) => {setter}(event.target.value)}}{} />",
                        field.position,
                        if field.required { " required" } else { "" }
                    ),
                );
                writer.line(indent + 2, &format!("<span>{}</span>", jsx_text(&text)));
                writer.line(indent + 1, "</label>");
            }
            writer.line(indent, "</fieldset>");
        }
        Control::Rows(columns) => write_row_editor(writer, indent, field, columns, needs),
        control => {
            writer.line(indent, "<label style={styles.inputLabel}>");
            writer.line(indent + 1, &format!("<span>{label}</span>"));
            // The attribute text after the change handler also marks the input invalid while the
            // server's refusal names it.
            let on_change = format!(
                "onChange={{(event) => {setter}(event.target.value)}}{}",
                invalid_attributes(&field.error_key, &error_id)
            );
            write_input(
                writer,
                indent + 1,
                control,
                field.schema,
                &state,
                &on_change,
                field.required,
            );
            writer.line(indent, "</label>");
        }
    }
    write_field_description(writer, indent, field);
    write_field_error(writer, indent, &field.error_key, &error_id);
}

/// An input element for a scalar control, bound to `value` and changed by `on_change`.
fn write_input(
    writer: &mut Writer,
    indent: usize,
    control: Control<'_>,
    schema: &Value,
    value: &str,
    on_change: &str,
    required: bool,
) {
    let required = if required { " required" } else { "" };
    let bounds = bound_attributes(control, schema);
    match control {
        Control::Select(options) | Control::Segmented(options) => {
            writer.line(indent, &format!("<select style={{styles.input}} value={{{value}}} {on_change}{required}>"));
            for option in option_elements(options, "Choose…") {
                writer.line(indent + 1, &option);
            }
            writer.line(indent, "</select>");
        }
        Control::Json | Control::Rows(_) => writer.line(
            indent,
            &format!("<textarea style={{styles.input}} rows={{4}} placeholder=\"JSON\" value={{{value}}} {on_change}{required} />"),
        ),
        Control::Checkbox => writer.line(
            indent,
            &format!("<input type=\"checkbox\" checked={{{value} === \"true\"}} {on_change} />"),
        ),
        _ => {
            let input_type = match control {
                Control::Text { input_type } => input_type,
                Control::DateTime => "datetime-local",
                Control::Time => "time",
                _ => "number",
            };
            writer.line(
                indent,
                &format!("<input type=\"{input_type}\" style={{styles.input}} value={{{value}}} {on_change}{required}{bounds} />"),
            );
        }
    }
}

/// A repeatable row editor: one line of cell controls per row, with add and remove buttons.
fn write_row_editor(
    writer: &mut Writer,
    indent: usize,
    field: &Field<'_>,
    columns: &serde_json::Map<String, Value>,
    _needs: &mut Needs,
) {
    let (state, setter) = (
        format!("value{}", field.position),
        format!("setValue{}", field.position),
    );
    let required = required_names(field.schema.get("items").unwrap_or(&Value::Null));
    writer.line(indent, "<fieldset style={styles.fieldset}>");
    writer.line(indent + 1, &format!("<legend>{}</legend>", jsx_text(&field.label)));
    writer.line(indent + 1, &format!("{{{state}.map((row, rowIndex) => ("));
    writer.line(
        indent + 2,
        "<div key={rowIndex} style={styles.editorRow} data-row={rowIndex}>",
    );
    for (key, schema) in declared_entries(columns) {
        let control = cell_control(schema).unwrap_or(Control::Json);
        let key_literal = js_string(key);
        let update = format!(
            "{setter}((rows) => rows.map((item, at) => (at === rowIndex ? {{ ...item, [{key_literal}]: NEXT }} : item)))"
        );
        let (label_style, next) = if control == Control::Checkbox {
            ("checkLabel", "event.target.checked ? \"true\" : \"\"")
        } else {
            ("inputLabel", "event.target.value")
        };
        let on_change = format!("onChange={{(event) => {}}}", update.replace("NEXT", next));
        writer.line(indent + 3, &format!("<label style={{styles.{label_style}}}>"));
        writer.line(indent + 4, &format!("<span>{}</span>", jsx_text(&label(key, schema))));
        write_input(
            writer,
            indent + 4,
            control,
            schema,
            &format!("row[{key_literal}] ?? \"\""),
            &on_change,
            required.contains(&key) && control != Control::Checkbox,
        );
        writer.line(indent + 3, "</label>");
    }
    writer.line(
        indent + 3,
        &format!(
            "<button type=\"button\" style={{styles.secondaryButton}} onClick={{() => {setter}((rows) => rows.filter((_, at) => at !== rowIndex))}}>{{\"Remove\"}}</button>"
        ),
    );
    writer.line(indent + 2, "</div>");
    writer.line(indent + 1, "))}");
    writer.line(
        indent + 1,
        &format!(
            "<button type=\"button\" style={{styles.secondaryButton}} onClick={{() => {setter}((rows) => [...rows, {{}}])}}>{{\"Add row\"}}</button>"
        ),
    );
    writer.line(indent, "</fieldset>");
}

fn humanize_option(option: &str) -> String {
    if option.contains(char::is_whitespace) {
        option.to_string()
    } else {
        humanize(option)
    }
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
