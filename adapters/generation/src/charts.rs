//! Which chart a numeric series gets: a bar chart for categories and short lists, a line chart for
//! a series over dates, a sparkline beside a KPI tile. The agent may choose with the hint keyword
//! `x-svc-chart` (`bar`, `line`, `sparkline`, `none`) on the array; otherwise the shape decides.
//! Every chart is inline SVG with `role="img"` and an `aria-label` naming every point; the list or
//! table under it stays as the readable fallback (a sparkline's fallback is its label).

use serde_json::{Map, Value};

use crate::schema_kind::{SchemaKind, TextFormat, classify, declared_entries};
use crate::tsx_text::name_words;

/// `"x-svc-chart": "bar" | "line" | "sparkline" | "none"` on an array property.
pub(crate) const CHART_KEYWORD: &str = "x-svc-chart";

/// Last words of a column that makes its rows a series over time.
const PERIOD_WORDS: &[&str] = &["day", "date", "week", "month", "quarter", "year", "period", "hour"];
/// Last words of an array of numbers that is a history of a value: a line, not bars.
const TREND_WORDS: &[&str] = &["trend", "history", "series", "sparkline", "timeline"];

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ChartKind {
    Bar,
    Line,
    Sparkline,
}

impl ChartKind {
    /// Its `kind` on the kit's `Chart`.
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Bar => "bar",
            Self::Line => "line",
            Self::Sparkline => "sparkline",
        }
    }
}

/// The agent's choice, when it made one: `Some(None)` for `none`.
fn hinted(schema: &Value) -> Option<Option<ChartKind>> {
    match schema.get(CHART_KEYWORD).and_then(Value::as_str)? {
        "bar" => Some(Some(ChartKind::Bar)),
        "line" => Some(Some(ChartKind::Line)),
        "sparkline" => Some(Some(ChartKind::Sparkline)),
        "none" => Some(None),
        _ => None,
    }
}

/// The chart of an array of numbers named `name`: a line for a trend or history, bars otherwise.
pub(crate) fn chart_for_numbers(name: &str, schema: &Value) -> Option<ChartKind> {
    if let Some(choice) = hinted(schema) {
        return choice;
    }
    let words = name_words(name);
    let trend = words.last().is_some_and(|word| TREND_WORDS.contains(&word.as_str()));
    Some(if trend { ChartKind::Line } else { ChartKind::Bar })
}

/// A column of a table: its name and schema.
pub(crate) type Column<'a> = (&'a str, &'a Value);

/// A series table (its first column a date or a period such as `day` or `month`, then a numeric
/// column): the chart, the column naming each point, and the first numeric column. Dates are a
/// line; named periods (`week: "W47"`) are bars.
pub(crate) fn series_chart<'a>(array: &Value, columns: &'a Map<String, Value>) -> Option<(ChartKind, [Column<'a>; 2])> {
    let entries = declared_entries(columns);
    let (first, first_schema) = *entries.first()?;
    let dated = matches!(
        classify(first_schema),
        SchemaKind::Text(TextFormat::Date | TextFormat::DateTime)
    );
    let period = name_words(first)
        .last()
        .is_some_and(|word| PERIOD_WORDS.contains(&word.as_str()));
    if !dated && !period {
        return None;
    }
    let value = entries
        .iter()
        .copied()
        .find(|(_, schema)| matches!(classify(schema), SchemaKind::Number { .. }))?;
    let kind = match hinted(array) {
        Some(choice) => choice?,
        None if dated => ChartKind::Line,
        None => ChartKind::Bar,
    };
    Some((kind, [(first, first_schema), value]))
}

/// The array of numbers among `siblings` that is the history of the number `name`
/// (`revenue_trend`, `revenue_history`, `revenue_series` beside `revenue`), drawn as a
/// sparkline in its KPI tile.
pub(crate) fn sparkline_of<'a>(name: &str, siblings: &'a Map<String, Value>) -> Option<&'a str> {
    TREND_WORDS.iter().find_map(|word| {
        let candidate = format!("{name}_{word}");
        let (key, schema) = siblings.get_key_value(&candidate)?;
        let numbers = matches!(classify(schema), SchemaKind::ArrayOfScalars(items) if matches!(classify(items), SchemaKind::Number { .. }));
        (numbers && hinted(schema) != Some(None)).then_some(key.as_str())
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_shape_chooses_the_chart_unless_the_agent_did() {
        let numbers = json!({ "type": "array", "items": { "type": "number" } });
        assert_eq!(chart_for_numbers("scores", &numbers), Some(ChartKind::Bar));
        assert_eq!(chart_for_numbers("latency_trend", &numbers), Some(ChartKind::Line));
        let hinted = json!({ "type": "array", "items": { "type": "number" }, "x-svc-chart": "sparkline" });
        assert_eq!(chart_for_numbers("scores", &hinted), Some(ChartKind::Sparkline));
        let none = json!({ "type": "array", "items": { "type": "number" }, "x-svc-chart": "none" });
        assert_eq!(chart_for_numbers("scores", &none), None);

        let dated = json!({ "day": { "type": "string", "format": "date" }, "visits": { "type": "integer" } });
        let dated = dated.as_object().unwrap();
        assert_eq!(
            series_chart(&json!({}), dated).map(|(kind, _)| kind),
            Some(ChartKind::Line)
        );
        assert_eq!(
            series_chart(&json!({ "x-svc-chart": "bar" }), dated).map(|(kind, _)| kind),
            Some(ChartKind::Bar)
        );
        let weeks = json!({ "week": { "type": "string" }, "visits": { "type": "integer" } });
        assert_eq!(
            series_chart(&json!({}), weeks.as_object().unwrap())
                .map(|(kind, [period, value])| (kind, period.0, value.0)),
            Some((ChartKind::Bar, "week", "visits"))
        );
        let people = json!({ "name": { "type": "string" }, "age": { "type": "integer" } });
        assert!(series_chart(&json!({}), people.as_object().unwrap()).is_none());
    }

    #[test]
    fn a_numeric_history_beside_a_number_is_its_sparkline() {
        let siblings = json!({
            "revenue": { "type": "number" },
            "revenue_trend": { "type": "array", "items": { "type": "number" } },
            "visits": { "type": "integer" },
            "visits_history": { "type": "array", "items": { "type": "string" } }
        });
        let siblings = siblings.as_object().unwrap();
        assert_eq!(sparkline_of("revenue", siblings), Some("revenue_trend"));
        assert_eq!(
            sparkline_of("visits", siblings),
            None,
            "a history of texts is no sparkline"
        );
    }
}
