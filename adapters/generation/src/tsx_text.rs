//! Text building blocks for generated TSX: literals that are safe wherever they land, labels for
//! people, and an indenting line writer.

use serde_json::Value;

/// A JavaScript literal for any JSON value, safe inside a `{...}` JSX expression. JSON is valid
/// JavaScript; `<`, `>` and `&` are escaped as well so the source stays inert even if a page ever
/// inlines it into HTML (`</script>`), and U+2028/U+2029 so older parsers accept it.
pub(crate) fn js_literal(value: &Value) -> String {
    let json = serde_json::to_string(value).unwrap_or_else(|_| "null".to_string());
    // These characters occur only inside JSON strings, where the escapes mean the same text.
    json.replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
        .replace('\u{2028}', "\\u2028")
        .replace('\u{2029}', "\\u2029")
}

/// A JavaScript string literal for `text`.
pub(crate) fn js_string(text: &str) -> String {
    js_literal(&Value::String(text.to_string()))
}

/// `{"text"}`: contract text as a JSX child, never as raw JSX text.
pub(crate) fn jsx_text(text: &str) -> String {
    format!("{{{}}}", js_string(text))
}

/// Short words people write in capitals (`sku` reads as `SKU`, `kpis` as `KPIs`).
const ACRONYMS: &[(&str, &str)] = &[
    ("api", "API"),
    ("cpu", "CPU"),
    ("csv", "CSV"),
    ("eta", "ETA"),
    ("eur", "EUR"),
    ("gbp", "GBP"),
    ("id", "ID"),
    ("ids", "IDs"),
    ("html", "HTML"),
    ("ip", "IP"),
    ("json", "JSON"),
    ("kpi", "KPI"),
    ("kpis", "KPIs"),
    ("pdf", "PDF"),
    ("sku", "SKU"),
    ("skus", "SKUs"),
    ("sla", "SLA"),
    ("sso", "SSO"),
    ("uri", "URI"),
    ("url", "URL"),
    ("urls", "URLs"),
    ("usd", "USD"),
    ("utc", "UTC"),
    ("vat", "VAT"),
];

/// The lower-case words of a machine name: `createdAt`, `created_at` and `created-at` all give
/// `["created", "at"]`.
pub(crate) fn name_words(name: &str) -> Vec<String> {
    let mut words: Vec<String> = Vec::new();
    let mut current = String::new();
    let mut previous_lower = false;
    for character in name.chars() {
        if character.is_alphanumeric() {
            if character.is_uppercase() && previous_lower && !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
            previous_lower = character.is_lowercase() || character.is_numeric();
            current.extend(character.to_lowercase());
        } else {
            previous_lower = false;
            if !current.is_empty() {
                words.push(std::mem::take(&mut current));
            }
        }
    }
    if !current.is_empty() {
        words.push(current);
    }
    words
}

/// A label for a machine name: `createdAt`, `created_at` and `created-at` all become `Created at`;
/// known acronyms keep their capitals (`revenue_usd` is `Revenue USD`).
pub(crate) fn humanize(name: &str) -> String {
    let words = name_words(name);
    if words.is_empty() {
        return name.trim().to_string();
    }
    let spelled: Vec<String> = words
        .iter()
        .map(|word| {
            ACRONYMS
                .iter()
                .find(|(lower, _)| lower == word)
                .map_or_else(|| word.clone(), |(_, written)| (*written).to_string())
        })
        .collect();
    capitalize_first(&spelled.join(" "))
}

/// The card's title from the render intent: a sentence keeps its words, a slug is humanized.
pub(crate) fn title_from_intent(intent: &str) -> String {
    let intent = intent.trim();
    if intent.is_empty() {
        "Untitled".to_string()
    } else if intent.contains(char::is_whitespace) {
        capitalize_first(intent)
    } else {
        humanize(intent)
    }
}

fn capitalize_first(text: &str) -> String {
    let mut characters = text.chars();
    match characters.next() {
        Some(first) => first.to_uppercase().chain(characters).collect(),
        None => String::new(),
    }
}

/// Lines of source at an indent of two spaces per level.
#[derive(Default)]
pub(crate) struct Writer {
    source: String,
}

impl Writer {
    pub(crate) fn line(&mut self, indent: usize, text: &str) {
        for _ in 0..indent {
            self.source.push_str("  ");
        }
        self.source.push_str(text);
        self.source.push('\n');
    }

    pub(crate) fn blank(&mut self) {
        self.source.push('\n');
    }

    /// Appends already indented source, e.g. a fixed helper.
    pub(crate) fn raw(&mut self, source: &str) {
        self.source.push_str(source);
    }

    pub(crate) fn finish(self) -> String {
        self.source
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_escape_quotes_markup_and_line_separators() {
        let hostile = "a\"b'c`d${e}</script><!--&\u{2028}\\";
        let literal = js_string(hostile);
        assert!(!literal.contains('<') && !literal.contains('>') && !literal.contains('&'));
        assert!(!literal.contains('\u{2028}'));
        let back: String = serde_json::from_str(&literal).expect("still JSON");
        assert_eq!(back, hostile);
    }

    #[test]
    fn jsx_text_is_an_expression() {
        assert_eq!(jsx_text("Hi {there}"), "{\"Hi {there}\"}");
    }

    #[test]
    fn humanize_splits_machine_names() {
        assert_eq!(humanize("createdAt"), "Created at");
        assert_eq!(humanize("created_at"), "Created at");
        assert_eq!(humanize("order-status:v2"), "Order status v2");
        assert_eq!(humanize("URL"), "URL");
        assert_eq!(humanize("sku"), "SKU");
        assert_eq!(humanize("kpis"), "KPIs");
        assert_eq!(humanize("revenue_usd"), "Revenue USD");
        assert_eq!(humanize("orderId"), "Order ID");
        assert_eq!(humanize("???"), "???");
    }

    #[test]
    fn titles_come_from_the_intent() {
        assert_eq!(title_from_intent("order_status"), "Order status");
        assert_eq!(title_from_intent("show the weather"), "Show the weather");
        assert_eq!(title_from_intent("  "), "Untitled");
    }
}
