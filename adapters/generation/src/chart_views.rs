//! The JSX placing a chart (`charts.rs` chooses which) above the numbers it draws: the kit's
//! `Chart` from `@svc/gadgets`, the component a language model's card uses too.

use crate::charts::{ChartKind, Column};
use crate::helpers::Helper;
use crate::needs::{Kit, Needs};
use crate::prop_views::label;
use crate::schema_kind::{SchemaKind, TextFormat, classify};
use crate::tsx_text::{Writer, js_string, jsx_text};

/// A chart of a series table's numeric column, each point named by the period column.
pub(crate) fn write_series_chart(
    writer: &mut Writer,
    indent: usize,
    kind: ChartKind,
    expression: &str,
    row: &str,
    [(period, period_schema), (value, value_schema)]: [Column<'_>; 2],
    needs: &mut Needs,
) {
    needs.helper(Helper::AsRows);
    needs.helper(Helper::At);
    let (helper, function) = match classify(period_schema) {
        SchemaKind::Text(TextFormat::Date) => (Helper::FormatDate, "formatDate"),
        SchemaKind::Text(TextFormat::DateTime) => (Helper::FormatDateTime, "formatDateTime"),
        _ => (Helper::AsText, "asText"),
    };
    needs.helper(helper);
    let points = format!(
        "asRows({expression}).map(({row}) => ({{ label: {function}(at({row}, {})), value: at({row}, {}) }}))",
        js_string(period),
        js_string(value)
    );
    let chart_label = jsx_text(&label(value, value_schema));
    write_chart(writer, indent, kind, &points, &chart_label, needs);
}

/// A chart of an array of numbers, above its list.
pub(crate) fn write_numbers_chart(
    writer: &mut Writer,
    indent: usize,
    kind: ChartKind,
    expression: &str,
    chart_label: &str,
    needs: &mut Needs,
) {
    needs.helper(Helper::AsRows);
    let points = format!("asRows({expression}).map((value) => ({{ label: \"\", value }}))");
    write_chart(writer, indent, kind, &points, &jsx_text(chart_label), needs);
}

/// A sparkline of the array at `expression`, inside a KPI tile; `format` (a TS expression of type
/// `(value: unknown) => string`, or none for plain numbers) names its points as the tile does.
pub(crate) fn write_sparkline(
    writer: &mut Writer,
    indent: usize,
    expression: &str,
    chart_label: &str,
    format: Option<&str>,
    needs: &mut Needs,
) {
    needs.helper(Helper::AsRows);
    needs.helper(Helper::ChartPoints);
    needs.kit(Kit::Chart);
    let format = format.map(|format| format!(" format={{{format}}}")).unwrap_or_default();
    writer.line(
        indent,
        &format!(
            "<Chart kind=\"sparkline\" label={} points={{chartPoints(asRows({expression}).map((value) => ({{ label: \"\", value }})))}}{format} />",
            jsx_text(chart_label)
        ),
    );
}

fn write_chart(
    writer: &mut Writer,
    indent: usize,
    kind: ChartKind,
    points: &str,
    chart_label: &str,
    needs: &mut Needs,
) {
    needs.helper(Helper::ChartPoints);
    needs.kit(Kit::Chart);
    writer.line(
        indent,
        &format!(
            "<Chart kind={} label={chart_label} points={{chartPoints({points})}} />",
            js_string(kind.name())
        ),
    );
}
