//! What a scalar value means to a person, beyond its JSON type: money, a percentage, a quantity
//! in a unit, a status, or running text. Read from the schema's hint keywords first (JSON Schema
//! cannot say these things; docs/builtin-generator.md lists the vocabulary), then inferred from
//! the property's name and its siblings (`amount` beside `currency` is money).

use serde_json::{Map, Value};

use crate::schema_kind::{SchemaKind, TextFormat, classify};
use crate::tsx_text::name_words;

/// `"x-svc-hint": "currency" | "percent" | "unit" | "status" | "text"`.
pub(crate) const HINT_KEYWORD: &str = "x-svc-hint";
/// ISO 4217 code for a `currency` hint whose value has no `currency` sibling: `"EUR"`.
pub(crate) const CURRENCY_KEYWORD: &str = "x-svc-currency";
/// An `Intl` unit for a `unit` hint: `"kilogram"`, `"hour"`, `"megabyte"`.
pub(crate) const UNIT_KEYWORD: &str = "x-svc-unit";

/// Sibling property names that carry the currency code of money beside them.
const CURRENCY_SIBLINGS: &[&str] = &["currency", "currency_code", "currencyCode"];
/// Last words of a number that is money when a currency is known.
const MONEY_WORDS: &[&str] = &[
    "amount", "price", "total", "subtotal", "cost", "balance", "revenue", "fee", "tax", "spend", "budget", "salary",
    "value", "due", "paid", "refund", "discount",
];
/// Last words of a number that is a fixed currency: `revenue_usd`.
const CURRENCY_SUFFIXES: &[&str] = &["usd", "eur", "gbp", "jpy", "chf", "cad", "aud"];
/// Words of a number already in percent points: `change_percent` of `-1.8` is -1.8 %.
const PERCENT_POINT_WORDS: &[&str] = &["percent", "percentage", "pct"];
/// Last words of a number that is a ratio when it never exceeds 1: `conversion_rate` of `0.012`.
const RATIO_WORDS: &[&str] = &["rate", "ratio", "share"];
/// Last words of a text that reads as a status badge.
const STATUS_WORDS: &[&str] = &["status", "state", "priority", "severity", "level", "health", "stage"];
/// Last words of a text that is running prose (kept with its line breaks, full width).
const PROSE_WORDS: &[&str] = &[
    "description",
    "body",
    "notes",
    "note",
    "summary",
    "details",
    "message",
    "comment",
    "comments",
    "text",
    "content",
    "reason",
    "bio",
    "justification",
];
/// A `maxLength` above this makes a text prose.
const PROSE_MIN_LENGTH: u64 = 160;

/// Where money finds its currency code.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Currency {
    /// A fixed ISO 4217 code.
    Code(String),
    /// The string value of a sibling property.
    Sibling(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Meaning {
    Plain,
    Money(Currency),
    /// `points`: the value is already in percent (`-1.8` is -1.8 %); otherwise a ratio (`0.012`).
    Percent {
        points: bool,
    },
    Unit(String),
    Status,
    Prose,
}

/// The meaning of the property `name` with `schema`, among `siblings` (its object's properties).
pub(crate) fn meaning_of(name: &str, schema: &Value, siblings: Option<&Map<String, Value>>) -> Meaning {
    let hint = schema.get(HINT_KEYWORD).and_then(Value::as_str);
    let words = name_words(name);
    let last = words.last().map(String::as_str).unwrap_or("");
    let kind = classify(schema);
    match kind {
        SchemaKind::Number { .. } => number_meaning(hint, schema, &words, last, siblings),
        SchemaKind::Enum(_) | SchemaKind::Text(TextFormat::Plain) => {
            let hinted = |wanted: &str| hint == Some(wanted);
            if hinted("status") || (!hinted("text") && STATUS_WORDS.contains(&last)) {
                Meaning::Status
            } else if hinted("text")
                || (matches!(kind, SchemaKind::Text(_))
                    && (PROSE_WORDS.contains(&last)
                        || schema
                            .get("maxLength")
                            .and_then(Value::as_u64)
                            .is_some_and(|max| max > PROSE_MIN_LENGTH)))
            {
                Meaning::Prose
            } else {
                Meaning::Plain
            }
        }
        _ => Meaning::Plain,
    }
}

fn number_meaning(
    hint: Option<&str>,
    schema: &Value,
    words: &[String],
    last: &str,
    siblings: Option<&Map<String, Value>>,
) -> Meaning {
    let sibling_currency = || {
        let siblings = siblings?;
        CURRENCY_SIBLINGS
            .iter()
            .find(|name| {
                siblings
                    .get(**name)
                    .is_some_and(|schema| matches!(classify(schema), SchemaKind::Text(_) | SchemaKind::Enum(_)))
            })
            .map(|name| Currency::Sibling((*name).to_string()))
    };
    let fixed_currency = || {
        schema
            .get(CURRENCY_KEYWORD)
            .and_then(Value::as_str)
            .filter(|code| code.len() == 3 && code.chars().all(|c| c.is_ascii_alphabetic()))
            .map(|code| Currency::Code(code.to_ascii_uppercase()))
    };
    match hint {
        Some("currency") => {
            return fixed_currency()
                .or_else(sibling_currency)
                .map_or(Meaning::Plain, Meaning::Money);
        }
        Some("percent") => return Meaning::Percent { points: false },
        Some("unit") => {
            return schema
                .get(UNIT_KEYWORD)
                .and_then(Value::as_str)
                .map_or(Meaning::Plain, |unit| Meaning::Unit(unit.to_string()));
        }
        Some(_) => return Meaning::Plain,
        None => {}
    }
    if let Some(code) = CURRENCY_SUFFIXES.iter().find(|code| **code == last) {
        return Meaning::Money(Currency::Code(code.to_ascii_uppercase()));
    }
    if MONEY_WORDS.contains(&last)
        && let Some(currency) = fixed_currency().or_else(sibling_currency)
    {
        return Meaning::Money(currency);
    }
    if words.iter().any(|word| PERCENT_POINT_WORDS.contains(&word.as_str())) {
        return Meaning::Percent { points: true };
    }
    // A declared maximum of 1 settles it; without one, a rate beside a currency is money-like
    // (`hourly_rate`), not a ratio.
    let ratio_like = match schema.get("maximum").and_then(Value::as_f64) {
        Some(maximum) => maximum <= 1.0,
        None => sibling_currency().is_none(),
    };
    if RATIO_WORDS.contains(&last) && ratio_like {
        return Meaning::Percent { points: false };
    }
    Meaning::Plain
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn object(properties: Value) -> Map<String, Value> {
        properties.as_object().unwrap().clone()
    }

    #[test]
    fn amount_beside_currency_is_money_in_that_currency() {
        let siblings = object(json!({ "amount": { "type": "number" }, "currency": { "type": "string" } }));
        assert_eq!(
            meaning_of("amount", &siblings["amount"], Some(&siblings)),
            Meaning::Money(Currency::Sibling("currency".into()))
        );
        assert_eq!(meaning_of("amount", &json!({ "type": "number" }), None), Meaning::Plain);
        assert_eq!(
            meaning_of("revenue_usd", &json!({ "type": "number" }), None),
            Meaning::Money(Currency::Code("USD".into()))
        );
    }

    #[test]
    fn percent_points_and_ratios() {
        assert_eq!(
            meaning_of("change_percent", &json!({ "type": "number" }), None),
            Meaning::Percent { points: true }
        );
        assert_eq!(
            meaning_of("conversion_rate", &json!({ "type": "number" }), None),
            Meaning::Percent { points: false }
        );
        assert_eq!(
            meaning_of("heart_rate", &json!({ "type": "number", "maximum": 220 }), None),
            Meaning::Plain
        );
    }

    #[test]
    fn hints_win_over_names() {
        let hinted = json!({ "type": "number", "x-svc-hint": "currency", "x-svc-currency": "eur" });
        assert_eq!(
            meaning_of("x", &hinted, None),
            Meaning::Money(Currency::Code("EUR".into()))
        );
        let unit = json!({ "type": "number", "x-svc-hint": "unit", "x-svc-unit": "kilogram" });
        assert_eq!(meaning_of("weight", &unit, None), Meaning::Unit("kilogram".into()));
        let ratio = json!({ "type": "number", "x-svc-hint": "percent" });
        assert_eq!(meaning_of("score", &ratio, None), Meaning::Percent { points: false });
        let prose = json!({ "type": "string", "x-svc-hint": "text" });
        assert_eq!(meaning_of("state", &prose, None), Meaning::Prose);
    }

    #[test]
    fn statuses_and_prose_by_name() {
        assert_eq!(
            meaning_of("status", &json!({ "enum": ["open", "closed"] }), None),
            Meaning::Status
        );
        assert_eq!(
            meaning_of("description", &json!({ "type": "string" }), None),
            Meaning::Prose
        );
        assert_eq!(meaning_of("city", &json!({ "type": "string" }), None), Meaning::Plain);
    }
}
