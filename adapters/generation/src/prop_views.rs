//! Read-only views of values by schema: tables for arrays of objects, lists for arrays of
//! scalars, key/value lists for objects, links, dates, numbers and booleans formatted for people.

use serde_json::Value;

use crate::helpers::Helper;
use crate::needs::{Hook, Needs};
use crate::schema_kind::{SchemaKind, TextFormat, classify, schema_text, sorted_entries};
use crate::tsx_text::{Writer, humanize, js_string, jsx_text};

/// Past this nesting depth values are shown by the generic JSON view.
const MAX_DEPTH: usize = 3;

/// Top-level props shown as the card's heading, in order of preference.
const TITLE_PROPS: &[&str] = &["title", "name", "heading"];

/// The prop to show as the card's heading: a string-like `title`, `name` or `heading`.
pub(crate) fn title_prop(props_spec: &Value) -> Option<&str> {
    let properties = props_spec.get("properties")?.as_object()?;
    TITLE_PROPS.iter().copied().find(|name| {
        properties.get(*name).is_some_and(|schema| {
            matches!(
                classify(schema),
                SchemaKind::Text(TextFormat::Plain) | SchemaKind::Unknown
            )
        })
    })
}

/// One section per top-level prop except the heading prop, in sorted key order. Returns whether
/// any section was written.
pub(crate) fn write_prop_sections(
    writer: &mut Writer,
    indent: usize,
    props_spec: &Value,
    heading: Option<&str>,
    needs: &mut Needs,
) -> bool {
    let Some(properties) = props_spec.get("properties").and_then(Value::as_object) else {
        return false;
    };
    let mut wrote_any = false;
    for (name, schema) in sorted_entries(properties) {
        if Some(name) == heading {
            continue;
        }
        needs.hook(Hook::Props);
        needs.helper(Helper::At);
        writer.line(indent, "<section style={styles.section}>");
        writer.line(
            indent + 1,
            &format!(
                "<h2 style={{styles.sectionTitle}}>{}</h2>",
                jsx_text(&label(name, schema))
            ),
        );
        if let Some(description) = schema_text(schema, "description") {
            writer.line(
                indent + 1,
                &format!("<p style={{styles.hint}}>{}</p>", jsx_text(description)),
            );
        }
        write_view(
            writer,
            indent + 1,
            &format!("at(props, {})", js_string(name)),
            schema,
            0,
            needs,
        );
        writer.line(indent, "</section>");
        wrote_any = true;
    }
    wrote_any
}

/// Writes JSX children showing the value of the expression `expression`, shaped by `schema`.
pub(crate) fn write_view(
    writer: &mut Writer,
    indent: usize,
    expression: &str,
    schema: &Value,
    depth: usize,
    needs: &mut Needs,
) {
    let formatted = |helper: Helper, function: &str, needs: &mut Needs| {
        needs.helper(helper);
        format!("{{{function}({expression})}}")
    };
    let line = match classify(schema) {
        SchemaKind::Text(TextFormat::Uri) => {
            needs.helper(Helper::SafeLink);
            format!("<SafeLink href={{{expression}}} />")
        }
        SchemaKind::Text(TextFormat::DateTime) => formatted(Helper::FormatDateTime, "formatDateTime", needs),
        SchemaKind::Text(TextFormat::Date) => formatted(Helper::FormatDate, "formatDate", needs),
        SchemaKind::Text(_) | SchemaKind::Enum(_) => formatted(Helper::AsText, "asText", needs),
        SchemaKind::Number { .. } => formatted(Helper::FormatNumber, "formatNumber", needs),
        SchemaKind::Boolean => formatted(Helper::FormatBoolean, "formatBoolean", needs),
        SchemaKind::Object(properties) if depth < MAX_DEPTH => {
            return write_fields(writer, indent, expression, properties, depth, needs);
        }
        SchemaKind::ArrayOfObjects(properties) if depth < MAX_DEPTH => {
            return write_table(writer, indent, expression, properties, depth, needs);
        }
        SchemaKind::ArrayOfScalars(items) if depth < MAX_DEPTH => {
            return write_list(writer, indent, expression, items, depth, needs);
        }
        _ => {
            needs.helper(Helper::JsonValue);
            format!("<JsonValue value={{{expression}}} />")
        }
    };
    writer.line(indent, &line);
}

/// A key/value list of an object's declared properties.
fn write_fields(
    writer: &mut Writer,
    indent: usize,
    expression: &str,
    properties: &serde_json::Map<String, Value>,
    depth: usize,
    needs: &mut Needs,
) {
    needs.helper(Helper::At);
    writer.line(indent, "<dl style={styles.fields}>");
    for (name, schema) in sorted_entries(properties) {
        writer.line(indent + 1, "<div style={styles.fieldRow}>");
        writer.line(
            indent + 2,
            &format!("<dt style={{styles.fieldName}}>{}</dt>", jsx_text(&label(name, schema))),
        );
        writer.line(indent + 2, "<dd style={styles.fieldValue}>");
        let child = format!("at({expression}, {})", js_string(name));
        write_view(writer, indent + 3, &child, schema, depth + 1, needs);
        writer.line(indent + 2, "</dd>");
        writer.line(indent + 1, "</div>");
    }
    writer.line(indent, "</dl>");
}

/// A table whose columns are the item schema's properties.
fn write_table(
    writer: &mut Writer,
    indent: usize,
    expression: &str,
    columns: &serde_json::Map<String, Value>,
    depth: usize,
    needs: &mut Needs,
) {
    needs.helper(Helper::AsRows);
    needs.helper(Helper::At);
    let (row, index) = (format!("row{depth}"), format!("index{depth}"));
    let columns = sorted_entries(columns);
    writer.line(indent, "<div style={styles.scroll}>");
    writer.line(indent + 1, "<table style={styles.table}>");
    writer.line(indent + 2, "<thead>");
    writer.line(indent + 3, "<tr>");
    for (name, schema) in &columns {
        writer.line(
            indent + 4,
            &format!("<th style={{styles.th}}>{}</th>", jsx_text(&label(name, schema))),
        );
    }
    writer.line(indent + 3, "</tr>");
    writer.line(indent + 2, "</thead>");
    writer.line(indent + 2, "<tbody>");
    writer.line(indent + 3, &format!("{{asRows({expression}).map(({row}, {index}) => ("));
    writer.line(indent + 4, &format!("<tr key={{{index}}}>"));
    for (name, schema) in &columns {
        writer.line(indent + 5, "<td style={styles.td}>");
        write_view(
            writer,
            indent + 6,
            &format!("at({row}, {})", js_string(name)),
            schema,
            depth + 1,
            needs,
        );
        writer.line(indent + 5, "</td>");
    }
    writer.line(indent + 4, "</tr>");
    writer.line(indent + 3, "))}");
    writer.line(indent + 2, "</tbody>");
    writer.line(indent + 1, "</table>");
    writer.line(
        indent + 1,
        &format!("{{asRows({expression}).length === 0 && <p style={{styles.hint}}>{{\"No rows yet.\"}}</p>}}"),
    );
    writer.line(indent, "</div>");
}

/// A bulleted list of scalar items.
fn write_list(writer: &mut Writer, indent: usize, expression: &str, items: &Value, depth: usize, needs: &mut Needs) {
    needs.helper(Helper::AsRows);
    let (item, index) = (format!("item{depth}"), format!("index{depth}"));
    writer.line(indent, "<ul style={styles.list}>");
    writer.line(
        indent + 1,
        &format!("{{asRows({expression}).map(({item}, {index}) => ("),
    );
    writer.line(indent + 2, &format!("<li key={{{index}}}>"));
    write_view(writer, indent + 3, &item, items, depth + 1, needs);
    writer.line(indent + 2, "</li>");
    writer.line(indent + 1, "))}");
    writer.line(indent, "</ul>");
    writer.line(
        indent,
        &format!("{{asRows({expression}).length === 0 && <span style={{styles.muted}}>{{\"None\"}}</span>}}"),
    );
}

/// A schema's `title`, or the property name made readable.
pub(crate) fn label(name: &str, schema: &Value) -> String {
    schema_text(schema, "title").map_or_else(|| humanize(name), str::to_string)
}
