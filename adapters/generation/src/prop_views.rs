//! Read-only views of values by schema and meaning: the card's key facts in a compact grid, KPI
//! tiles for numbers, prose with its line breaks, tables that stack on narrow widths, and money,
//! percentages, units, dates, times and statuses formatted for people.

use serde_json::{Map, Value};

use crate::chart_views::{write_numbers_chart, write_series_chart, write_sparkline};
use crate::charts::{chart_for_numbers, series_chart, sparkline_of};
use crate::helpers::Helper;
use crate::meaning::{Currency, Meaning, meaning_of};
use crate::needs::{Hook, Kit, Needs};
use crate::row_actions::RowAction;
use crate::schema_kind::{SchemaKind, TextFormat, classify, declared_entries, is_scalar, schema_text};
use crate::stepper::{find_stepper, write_stepper};
use crate::tsx_text::{Writer, humanize, js_string, jsx_text};

/// Past this nesting depth values are shown by the generic JSON view.
const MAX_DEPTH: usize = 3;

/// Top-level props shown as the card's heading, in order of preference.
const TITLE_PROPS: &[&str] = &["title", "name", "heading"];

/// A value to show: the TS expression reading it, its property name and schema, and the object
/// it sits in (for siblings such as a `currency` beside an `amount`).
#[derive(Clone, Copy)]
pub(crate) struct Shown<'a> {
    pub expression: &'a str,
    pub name: &'a str,
    pub schema: &'a Value,
    pub parent: Option<(&'a str, &'a Map<String, Value>)>,
}

impl<'a> Shown<'a> {
    /// A value with no name or siblings (a stream payload, a list item).
    pub(crate) fn bare(expression: &'a str, schema: &'a Value) -> Self {
        Self {
            expression,
            name: "",
            schema,
            parent: None,
        }
    }

    fn meaning(&self) -> Meaning {
        meaning_of(self.name, self.schema, self.parent.map(|(_, siblings)| siblings))
    }
}

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

/// Where a top-level prop goes in the card.
enum Place {
    /// A short scalar in the key-facts grid under the title.
    Fact,
    /// A number as a KPI tile.
    Tile,
    /// Its own titled block, full width, in declared order.
    Block,
}

fn place_of(name: &str, schema: &Value, siblings: &Map<String, Value>) -> Place {
    let kind = classify(schema);
    if matches!(kind, SchemaKind::Number { .. }) {
        return Place::Tile;
    }
    if is_scalar(kind) && meaning_of(name, schema, Some(siblings)) != Meaning::Prose {
        return Place::Fact;
    }
    Place::Block
}

/// The top-level props except the heading: key facts, then KPI tiles, then one block per
/// remaining prop, each group in the contract's declared order. Returns whether any was written.
pub(crate) fn write_prop_sections(
    writer: &mut Writer,
    indent: usize,
    props_spec: &Value,
    heading: Option<&str>,
    row_actions: &[RowAction<'_>],
    needs: &mut Needs,
) -> bool {
    let Some(properties) = props_spec.get("properties").and_then(Value::as_object) else {
        return false;
    };
    let stepper = find_stepper(props_spec);
    if let Some(stepper) = stepper {
        write_stepper(writer, indent, stepper, needs);
    }
    // A number's history (`revenue_trend` beside `revenue`) is drawn in the number's tile.
    let sparklines: Vec<&str> = declared_entries(properties)
        .into_iter()
        .filter(|(name, schema)| matches!(classify(schema), SchemaKind::Number { .. }) && Some(*name) != heading)
        .filter_map(|(name, _)| sparkline_of(name, properties))
        .collect();
    let shown: Vec<(&str, &Value)> = declared_entries(properties)
        .into_iter()
        .filter(|(name, _)| {
            Some(*name) != heading && !stepper.is_some_and(|stepper| stepper.owns(name)) && !sparklines.contains(name)
        })
        .collect();
    if shown.is_empty() {
        return stepper.is_some();
    }
    needs.hook(Hook::Props);
    needs.helper(Helper::At);
    let expressions: Vec<String> = shown
        .iter()
        .map(|(name, _)| format!("at(props, {})", js_string(name)))
        .collect();
    let with_place = |wanted: fn(&Place) -> bool| {
        shown
            .iter()
            .zip(&expressions)
            .filter(move |((name, schema), _)| wanted(&place_of(name, schema, properties)))
            .map(|((name, schema), expression)| Shown {
                expression: expression.as_str(),
                name,
                schema,
                parent: Some(("props", properties)),
            })
            .collect::<Vec<_>>()
    };
    let facts = with_place(|place| matches!(place, Place::Fact));
    if !facts.is_empty() {
        write_fact_grid(writer, indent, &facts, 0, needs);
    }
    let tiles = with_place(|place| matches!(place, Place::Tile));
    if !tiles.is_empty() {
        writer.line(indent, "<div style={styles.tiles}>");
        for tile in &tiles {
            writer.line(indent + 1, "<div style={styles.tile}>");
            writer.line(
                indent + 2,
                &format!(
                    "<span style={{styles.factName}}>{}</span>",
                    jsx_text(&label(tile.name, tile.schema))
                ),
            );
            let value = scalar_child(tile, needs);
            writer.line(indent + 2, &format!("<span style={{styles.tileValue}}>{value}</span>"));
            if let Some(history) = sparkline_of(tile.name, properties) {
                let history_label = label(history, &properties[history]);
                // The tile's own formatting (money, percent, unit) names each point of its history.
                let point = scalar_child(
                    &Shown {
                        expression: "point",
                        ..*tile
                    },
                    needs,
                );
                let format = point
                    .strip_prefix('{')
                    .and_then(|call| call.strip_suffix('}'))
                    .map(|call| format!("(point: unknown): string => {call}"));
                let expression = format!("at(props, {})", js_string(history));
                write_sparkline(
                    writer,
                    indent + 2,
                    &expression,
                    &history_label,
                    format.as_deref(),
                    needs,
                );
            }
            writer.line(indent + 1, "</div>");
        }
        writer.line(indent, "</div>");
    }
    for block in with_place(|place| matches!(place, Place::Block)) {
        writer.line(indent, "<section style={styles.section}>");
        writer.line(
            indent + 1,
            &format!(
                "<h2 style={{styles.sectionTitle}}>{}</h2>",
                jsx_text(&label(block.name, block.schema))
            ),
        );
        if let Some(description) = schema_text(block.schema, "description") {
            writer.line(
                indent + 1,
                &format!("<p style={{styles.hint}}>{}</p>", jsx_text(description)),
            );
        }
        let actions: Vec<&RowAction<'_>> = row_actions.iter().filter(|action| action.prop == block.name).collect();
        match classify(block.schema) {
            SchemaKind::ArrayOfObjects(columns) if !actions.is_empty() => {
                write_rows(
                    writer,
                    indent + 1,
                    block.expression,
                    block.schema,
                    columns,
                    0,
                    &actions,
                    needs,
                );
            }
            _ => write_view(writer, indent + 1, block, 0, needs),
        }
        writer.line(indent, "</section>");
    }
    true
}

/// Writes JSX children showing one value, shaped by its schema and meaning.
pub(crate) fn write_view(writer: &mut Writer, indent: usize, shown: Shown<'_>, depth: usize, needs: &mut Needs) {
    let kind = classify(shown.schema);
    match kind {
        SchemaKind::Object(properties) if depth < MAX_DEPTH => {
            let children: Vec<String> = declared_entries(properties)
                .iter()
                .map(|(name, _)| format!("at({}, {})", shown.expression, js_string(name)))
                .collect();
            let fields: Vec<Shown<'_>> = declared_entries(properties)
                .into_iter()
                .zip(&children)
                .map(|((name, schema), expression)| Shown {
                    expression,
                    name,
                    schema,
                    parent: Some((shown.expression, properties)),
                })
                .collect();
            needs.helper(Helper::At);
            write_fact_grid(writer, indent, &fields, depth, needs);
        }
        SchemaKind::ArrayOfObjects(columns) if depth < MAX_DEPTH => {
            write_rows(
                writer,
                indent,
                shown.expression,
                shown.schema,
                columns,
                depth,
                &[],
                needs,
            );
        }
        SchemaKind::ArrayOfScalars(items) if depth < MAX_DEPTH => {
            write_list(writer, indent, &shown, items, depth, needs);
        }
        // Running text as a paragraph in a block; inside a table cell or a field it is plain text
        // (those keep line breaks too).
        _ if depth == 0 && is_scalar(kind) && shown.meaning() == Meaning::Prose => {
            needs.helper(Helper::AsText);
            writer.line(
                indent,
                &format!("<p style={{styles.prose}}>{{asText({})}}</p>", shown.expression),
            );
        }
        _ => {
            let child = scalar_child(&shown, needs);
            writer.line(indent, &child);
        }
    }
}

/// A JSX child for a scalar (or, past the depth limit, any) value.
pub(crate) fn scalar_child(shown: &Shown<'_>, needs: &mut Needs) -> String {
    let expression = shown.expression;
    let call = |helper: Helper, function: &str, extra: &str, needs: &mut Needs| {
        needs.helper(helper);
        format!("{{{function}({expression}{extra})}}")
    };
    match classify(shown.schema) {
        SchemaKind::Text(TextFormat::Uri) => {
            needs.helper(Helper::SafeLink);
            format!("<SafeLink href={{{expression}}} />")
        }
        SchemaKind::Text(TextFormat::DateTime) => call(Helper::FormatDateTime, "formatDateTime", "", needs),
        SchemaKind::Text(TextFormat::Date) => call(Helper::FormatDate, "formatDate", "", needs),
        SchemaKind::Text(TextFormat::Time) => call(Helper::FormatTime, "formatTime", "", needs),
        SchemaKind::Text(_) | SchemaKind::Enum(_) if shown.meaning() == Meaning::Status => {
            needs.kit(Kit::StatusBadge);
            needs.helper(Helper::AsText);
            format!("<StatusBadge value={{asText({expression})}} />")
        }
        SchemaKind::Text(_) | SchemaKind::Enum(_) => call(Helper::AsText, "asText", "", needs),
        SchemaKind::Number { .. } => match shown.meaning() {
            Meaning::Money(currency) => {
                let code = match (currency, shown.parent) {
                    (Currency::Code(code), _) => js_string(&code),
                    (Currency::Sibling(sibling), Some((parent, _))) => {
                        needs.helper(Helper::At);
                        format!("at({parent}, {})", js_string(&sibling))
                    }
                    (Currency::Sibling(_), None) => "undefined".to_string(),
                };
                call(Helper::FormatMoney, "formatMoney", &format!(", {code}"), needs)
            }
            Meaning::Percent { points } => call(Helper::FormatPercent, "formatPercent", &format!(", {points}"), needs),
            Meaning::Unit(unit) => call(
                Helper::FormatUnit,
                "formatUnit",
                &format!(", {}", js_string(&unit)),
                needs,
            ),
            _ => call(Helper::FormatNumber, "formatNumber", "", needs),
        },
        SchemaKind::Boolean => call(Helper::FormatBoolean, "formatBoolean", "", needs),
        _ => {
            needs.helper(Helper::JsonValue);
            format!("<JsonValue value={{{expression}}} />")
        }
    }
}

/// A compact grid of labelled values: the card's key facts, or an object's fields.
fn write_fact_grid(writer: &mut Writer, indent: usize, facts: &[Shown<'_>], depth: usize, needs: &mut Needs) {
    writer.line(indent, "<dl style={styles.facts}>");
    for fact in facts {
        let wide = !is_scalar(classify(fact.schema)) || fact.meaning() == Meaning::Prose;
        let style = if wide {
            "{{ ...styles.fact, gridColumn: \"1 / -1\" }}"
        } else {
            "{styles.fact}"
        };
        writer.line(indent + 1, &format!("<div style={style}>"));
        writer.line(
            indent + 2,
            &format!(
                "<dt style={{styles.factName}}>{}</dt>",
                jsx_text(&label(fact.name, fact.schema))
            ),
        );
        writer.line(indent + 2, "<dd style={styles.fieldValue}>");
        write_view(writer, indent + 3, *fact, depth + 1, needs);
        writer.line(indent + 2, "</dd>");
        writer.line(indent + 1, "</div>");
    }
    writer.line(indent, "</dl>");
}

/// Rows of objects: the kit's `DataTable`, a table with right-aligned numbers that stacks on
/// narrow widths.
#[allow(clippy::too_many_arguments)]
fn write_rows(
    writer: &mut Writer,
    indent: usize,
    expression: &str,
    array: &Value,
    columns: &Map<String, Value>,
    depth: usize,
    row_actions: &[&RowAction<'_>],
    needs: &mut Needs,
) {
    needs.helper(Helper::AsRows);
    needs.helper(Helper::At);
    needs.kit(Kit::DataTable);
    let row = format!("row{depth}");
    if let Some((kind, series)) = series_chart(array, columns) {
        write_series_chart(writer, indent, kind, expression, &row, series, needs);
    }
    writer.line(indent, &format!("<DataTable rows={{asRows({expression})}} columns={{["));
    for (name, schema) in declared_entries(columns) {
        let numeric = matches!(classify(schema), SchemaKind::Number { .. });
        writer.line(indent + 1, "{");
        writer.line(indent + 2, &format!("label: {},", js_string(&label(name, schema))));
        writer.line(indent + 2, &format!("numeric: {numeric},"));
        writer.line(indent + 2, &format!("cell: ({row}: unknown): ReactNode => ("));
        writer.line(indent + 3, "<>");
        let cell = format!("at({row}, {})", js_string(name));
        let shown = Shown {
            expression: &cell,
            name,
            schema,
            parent: Some((&row, columns)),
        };
        write_view(writer, indent + 4, shown, depth + 1, needs);
        writer.line(indent + 3, "</>");
        writer.line(indent + 2, "),");
        writer.line(indent + 1, "},");
    }
    for action in row_actions {
        writer.line(
            indent + 1,
            &format!(
                "{{ label: {}, numeric: false, cell: ({row}: unknown): ReactNode => <Action{} row={{{row}}} /> }},",
                js_string(&humanize(action.intent)),
                action.index
            ),
        );
    }
    writer.line(indent, "]} />");
}

/// A bulleted list of scalar items.
fn write_list(writer: &mut Writer, indent: usize, shown: &Shown<'_>, items: &Value, depth: usize, needs: &mut Needs) {
    needs.helper(Helper::AsRows);
    let expression = shown.expression;
    if matches!(classify(items), SchemaKind::Number { .. })
        && let Some(kind) = chart_for_numbers(shown.name, shown.schema)
    {
        let chart_label = if shown.name.is_empty() {
            "Chart".to_string()
        } else {
            label(shown.name, shown.schema)
        };
        write_numbers_chart(writer, indent, kind, expression, &chart_label, needs);
    }
    let (item, index) = (format!("item{depth}"), format!("index{depth}"));
    writer.line(indent, "<ul style={styles.list}>");
    writer.line(
        indent + 1,
        &format!("{{asRows({expression}).map(({item}, {index}) => ("),
    );
    writer.line(indent + 2, &format!("<li key={{{index}}}>"));
    write_view(writer, indent + 3, Shown::bare(&item, items), depth + 1, needs);
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
