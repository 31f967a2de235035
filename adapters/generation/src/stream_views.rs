//! One live view per streamSpec channel, through `useStream(channel)`: an append channel lists
//! every item received, a replace channel shows the latest value.

use serde_json::Value;

use crate::helpers::Helper;
use crate::needs::{Hook, Needs};
use crate::prop_views::{Shown, scalar_child, write_view};
use crate::schema_kind::schema_text;
use crate::schema_kind::{SchemaKind, classify, declared_entries, is_scalar};
use crate::tsx_text::{Writer, humanize, js_string, jsx_text};

/// Channel names with this prefix belong to the server and are never rendered.
pub(crate) const RESERVED_CHANNEL_PREFIX: &str = "_svc:";

const WAITING: &str = "{\"Waiting for data…\"}";

/// Writes `function Stream<index>()` for one channel.
pub(crate) fn write_stream_component(
    writer: &mut Writer,
    index: usize,
    channel: &str,
    spec: &Value,
    needs: &mut Needs,
) {
    needs.hook(Hook::Stream);
    let schema = spec.get("schema").unwrap_or(&Value::Null);
    let appends = spec.get("mode").and_then(Value::as_str) == Some("append");
    let channel_literal = js_string(channel);

    writer.line(0, &format!("function Stream{index}(): ReactNode {{"));
    let read = if appends { "items, complete" } else { "last, complete" };
    writer.line(1, &format!("const {{ {read} }} = useStream({channel_literal});"));
    writer.line(1, "return (");
    writer.line(
        2,
        &format!("<section style={{styles.section}} data-channel={{{channel_literal}}}>"),
    );
    writer.line(
        3,
        &format!(
            "<h2 style={{styles.sectionTitle}}>{}</h2>",
            jsx_text(&humanize(channel))
        ),
    );
    if let Some(description) = schema_text(spec, "description").or_else(|| schema_text(schema, "description")) {
        writer.line(3, &format!("<p style={{styles.hint}}>{}</p>", jsx_text(description)));
    }
    if appends {
        needs.helper(Helper::AsRows);
        writer.line(
            3,
            &format!("{{asRows(items).length === 0 && !complete && <p style={{styles.hint}}>{WAITING}</p>}}"),
        );
        writer.line(3, "<ul style={styles.log}>");
        writer.line(4, "{asRows(items).map((entry, position) => (");
        writer.line(5, "<li key={position} style={styles.logLine}>");
        match log_fields(schema) {
            // A record of scalars reads as one log line: `info  pulling image ...`.
            Some(fields) => {
                needs.helper(Helper::At);
                for (name, field) in fields {
                    let expression = format!("at(entry, {})", js_string(name));
                    let shown = Shown {
                        expression: &expression,
                        name,
                        schema: field,
                        parent: None,
                    };
                    writer.line(6, &format!("<span>{}</span>{{\" \"}}", scalar_child(&shown, needs)));
                }
            }
            None => write_view(writer, 6, Shown::bare("entry", schema), 0, needs),
        }
        writer.line(5, "</li>");
        writer.line(4, "))}");
        writer.line(3, "</ul>");
    } else {
        writer.line(3, "{last === undefined ? (");
        writer.line(4, &format!("<p style={{styles.hint}}>{WAITING}</p>"));
        writer.line(3, ") : (");
        writer.line(4, "<div>");
        write_view(writer, 5, Shown::bare("last", schema), 0, needs);
        writer.line(4, "</div>");
        writer.line(3, ")}");
    }
    writer.line(3, "{complete && <span style={styles.badge}>{\"Complete\"}</span>}");
    writer.line(2, "</section>");
    writer.line(1, ");");
    writer.line(0, "}");
}

/// The fields of an append channel's items when each is a record of scalars (a log line).
fn log_fields(schema: &Value) -> Option<Vec<(&str, &Value)>> {
    match classify(schema) {
        SchemaKind::Object(properties) if properties.values().all(|field| is_scalar(classify(field))) => {
            Some(declared_entries(properties))
        }
        _ => None,
    }
}
