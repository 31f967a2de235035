//! One input per contextSpec slot, bound with `useContextSlot(name)`, so the user's view state
//! travels to the agent as `uiContext` with the next action.

use serde_json::Value;

use crate::controls::{Control, bound_attributes, control_for, option_elements, options_literal};
use crate::helpers::Helper;
use crate::needs::{Hook, Needs};
use crate::prop_views::label;
use crate::tsx_text::{Writer, js_string, jsx_text};

/// Writes `function Slot<index>()` for one slot.
pub(crate) fn write_slot_component(writer: &mut Writer, index: usize, name: &str, spec: &Value, needs: &mut Needs) {
    needs.hook(Hook::ContextSlot);
    let schema = spec.get("schema").unwrap_or(&Value::Null);
    let control = control_for(schema);
    let name_literal = js_string(name);
    let label = jsx_text(&label(name, schema));

    writer.line(0, &format!("function Slot{index}(): ReactNode {{"));
    writer.line(1, &format!("const [value, setValue] = useContextSlot({name_literal});"));
    let control = match control {
        Control::Segmented(options) => Control::Select(options),
        Control::Rows(_) => Control::Json,
        control => control,
    };
    match control {
        Control::Select(options) => {
            writer.line(1, &format!("const options: unknown[] = {};", options_literal(options)));
            writer.line(
                1,
                "const selected = options.findIndex((option) => JSON.stringify(option) === JSON.stringify(value));",
            );
        }
        Control::Json => {
            needs.hook(Hook::State);
            needs.helper(Helper::ParseJson);
            writer.line(
                1,
                "const [text, setText] = useState<string>(() => JSON.stringify(value ?? null, null, 2));",
            );
            writer.line(1, "const [invalid, setInvalid] = useState<boolean>(false);");
        }
        _ => {}
    }
    writer.line(1, "return (");
    let label_style = if control == Control::Checkbox {
        "checkLabel"
    } else {
        "inputLabel"
    };
    writer.line(
        2,
        &format!("<label style={{styles.{label_style}}} data-slot={{{name_literal}}}>"),
    );
    if control != Control::Checkbox {
        writer.line(3, &format!("<span>{label}</span>"));
    }
    write_slot_input(writer, 3, control, schema, needs);
    if control == Control::Checkbox {
        writer.line(3, &format!("<span>{label}</span>"));
    }
    writer.line(2, "</label>");
    writer.line(1, ");");
    writer.line(0, "}");
}

/// Wraps the slot inputs of a card in one section.
pub(crate) fn write_slots_section(writer: &mut Writer, indent: usize, slot_count: usize) {
    writer.line(indent, "<section style={styles.section}>");
    writer.line(indent + 1, "<h2 style={styles.sectionTitle}>{\"Settings\"}</h2>");
    for index in 0..slot_count {
        writer.line(indent + 1, &format!("<Slot{index} />"));
    }
    writer.line(indent, "</section>");
}

fn write_slot_input(writer: &mut Writer, indent: usize, control: Control<'_>, schema: &Value, needs: &mut Needs) {
    let bounds = bound_attributes(control, schema);
    let line = match control {
        Control::Text { input_type } => {
            needs.helper(Helper::AsInputText);
            format!(
                "<input type=\"{input_type}\" style={{styles.input}} value={{asInputText(value)}} \
                 onChange={{(event) => setValue(event.target.value)}}{bounds} />"
            )
        }
        Control::DateTime => {
            needs.helper(Helper::ToDateTimeLocal);
            needs.helper(Helper::ToIsoDateTime);
            "<input type=\"datetime-local\" style={styles.input} value={toDateTimeLocal(value)} \
             onChange={(event) => setValue(toIsoDateTime(event.target.value))} />"
                .to_string()
        }
        Control::Number { .. } => {
            needs.helper(Helper::AsInputText);
            format!(
                "<input type=\"number\" style={{styles.input}} value={{asInputText(value)}} \
                 onChange={{(event) => setValue(event.target.value === \"\" ? null : Number(event.target.value))}}{bounds} />"
            )
        }
        Control::Time => {
            needs.helper(Helper::AsInputText);
            needs.helper(Helper::ToFullTime);
            "<input type=\"time\" style={styles.input} value={asInputText(value).slice(0, 5)} \
             onChange={(event) => setValue(toFullTime(event.target.value))} />"
                .to_string()
        }
        Control::Segmented(_) | Control::Rows(_) => unreachable!("slots use selects and JSON for these"),
        Control::Checkbox => {
            "<input type=\"checkbox\" checked={value === true} onChange={(event) => setValue(event.target.checked)} />"
                .to_string()
        }
        Control::Select(options) => {
            writer.line(
                indent,
                "<select style={styles.input} value={selected < 0 ? \"\" : String(selected)} \
                 onChange={(event) => setValue(options[Number(event.target.value)])}>",
            );
            for option in option_elements(options, "Choose…") {
                writer.line(indent + 1, &option);
            }
            writer.line(indent, "</select>");
            return;
        }
        Control::Json => {
            writer.line(
                indent,
                "<textarea style={styles.input} rows={4} value={text} onChange={(event) => setText(event.target.value)} \
                 onBlur={() => { const parsed = parseJson(text); setInvalid(!parsed.ok); if (parsed.ok) setValue(parsed.value); }} />",
            );
            writer.line(
                indent,
                "{invalid && <span role=\"alert\" style={styles.error}>{\"Not valid JSON\"}</span>}",
            );
            return;
        }
    };
    writer.line(indent, &line);
}
