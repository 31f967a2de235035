//! Hygiene of text callers send: what no store can hold, and how much of it an error message may
//! quote back. One rule each, used by every route and every error that quotes input.

use std::borrow::Cow;

use serde_json::Value;

/// Why a string is refused wherever it appears: PostgreSQL `text` cannot hold U+0000, so SQLite
/// must not store it either (both backends answer the same).
pub const NUL_RULE: &str = "must not contain U+0000 (NUL)";

/// The most characters of a caller's input an error message quotes.
pub const ECHO_MAX_CHARS: usize = 100;

/// The longest error message sent, in characters: a backstop for messages that quote input
/// through a path [`excerpt`] did not see.
pub const MESSAGE_MAX_CHARS: usize = 1_000;

/// The dotted path (`options.persona`, `items.0`) of the first string or object key in `value`
/// holding U+0000; `""` names `value` itself.
pub fn nul_path(value: &Value) -> Option<String> {
    match value {
        Value::String(s) => s.contains('\0').then(String::new),
        Value::Array(items) => items
            .iter()
            .enumerate()
            .find_map(|(i, item)| nul_path(item).map(|rest| join(&i.to_string(), &rest))),
        Value::Object(fields) => fields.iter().find_map(|(key, item)| {
            if key.contains('\0') {
                return Some(excerpt(&key.replace('\0', "\\u0000")).into_owned());
            }
            nul_path(item).map(|rest| join(key, &rest))
        }),
        _ => None,
    }
}

fn join(head: &str, rest: &str) -> String {
    if rest.is_empty() {
        head.to_owned()
    } else {
        format!("{head}.{rest}")
    }
}

/// At most [`ECHO_MAX_CHARS`] characters of `text`, marked with `…` when cut.
pub fn excerpt(text: &str) -> Cow<'_, str> {
    cut(text, ECHO_MAX_CHARS)
}

/// At most `max_chars` characters of `text`, marked with `…` when cut (what a listing keeps of
/// a long text).
pub fn excerpt_of(text: &str, max_chars: usize) -> Cow<'_, str> {
    cut(text, max_chars)
}

/// An error message cut to [`MESSAGE_MAX_CHARS`].
pub fn bounded_message(message: String) -> String {
    match cut(&message, MESSAGE_MAX_CHARS) {
        Cow::Borrowed(_) => message,
        Cow::Owned(cut) => cut,
    }
}

fn cut(text: &str, max_chars: usize) -> Cow<'_, str> {
    match text.char_indices().nth(max_chars) {
        None => Cow::Borrowed(text),
        Some((end, _)) => Cow::Owned(format!("{}…", &text[..end])),
    }
}

/// The length of `value` as compact JSON, counted without writing it anywhere.
pub fn json_len(value: &Value) -> usize {
    json_len_at_most(value, usize::MAX).unwrap_or(usize::MAX)
}

/// [`json_len`] when it is at most `max`; `None` (having counted little more than `max`) when
/// it is longer.
pub fn json_len_at_most(value: &Value, max: usize) -> Option<usize> {
    struct Counter {
        bytes: usize,
        max: usize,
    }
    impl std::io::Write for Counter {
        fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
            self.bytes += bytes.len();
            if self.bytes > self.max {
                return Err(std::io::ErrorKind::FileTooLarge.into());
            }
            Ok(bytes.len())
        }
        fn flush(&mut self) -> std::io::Result<()> {
            Ok(())
        }
    }
    let mut counter = Counter { bytes: 0, max };
    // The counter is the only writer that fails, and only past `max`.
    serde_json::to_writer(&mut counter, value).ok()?;
    Some(counter.bytes)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn json_len_is_the_length_of_the_compact_text() {
        for value in [
            json!(null),
            json!({ "a": [1, 2.5, "é\"\n<", { "b": true }], "": "" }),
            json!("x".repeat(10_000)),
        ] {
            let len = value.to_string().len();
            assert_eq!(json_len(&value), len);
            assert_eq!(json_len_at_most(&value, len), Some(len));
            assert_eq!(json_len_at_most(&value, len - 1), None);
        }
    }

    #[test]
    fn nul_paths_name_the_field() {
        let rows = [
            (json!({ "intent": "ok" }), None),
            (json!({ "intent": "a\u{0}b" }), Some("intent")),
            (json!({ "options": { "persona": "\u{0}" } }), Some("options.persona")),
            (json!({ "items": ["ok", "x\u{0}"] }), Some("items.1")),
            (json!({ "a\u{0}": 1 }), Some("a\\u0000")),
            (json!("\u{0}"), Some("")),
            (json!({ "n": 1, "b": true, "z": null }), None),
        ];
        for (value, path) in rows {
            assert_eq!(nul_path(&value).as_deref(), path, "{value}");
        }
    }

    #[test]
    fn excerpts_are_cut_on_character_boundaries() {
        assert_eq!(excerpt("short"), "short");
        assert_eq!(excerpt_of("éééé", 3), "ééé…");
        assert_eq!(excerpt_of("ééé", 3), "ééé");
        let long = "é".repeat(ECHO_MAX_CHARS + 1);
        let cut = excerpt(&long);
        assert_eq!(cut.chars().count(), ECHO_MAX_CHARS + 1);
        assert!(cut.ends_with('…'));
        assert_eq!(bounded_message("x".repeat(MESSAGE_MAX_CHARS)).len(), MESSAGE_MAX_CHARS);
        assert!(bounded_message("x".repeat(MESSAGE_MAX_CHARS + 1)).ends_with('…'));
    }
}
