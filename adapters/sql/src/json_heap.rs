//! What a parsed JSON value holds on the heap, for caches that weigh what they keep: its text's
//! length understates it up to forty times (`[0,0,...]` is two bytes an element as text and a
//! 72-byte `Value` each once parsed, its array's spare capacity besides).

use std::mem::size_of;

use serde_json::Value;

/// An object member's share of the map beside its key and value: the map's index and the
/// entry's hash.
const MEMBER_OVERHEAD: usize = 2 * size_of::<usize>();

/// The heap bytes `value` owns (not counting the `Value` itself, which its owner holds).
pub(crate) fn heap_bytes(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        Value::String(text) => text.capacity(),
        Value::Array(items) => items.capacity() * size_of::<Value>() + items.iter().map(heap_bytes).sum::<usize>(),
        Value::Object(members) => members
            .iter()
            .map(|(key, member)| {
                size_of::<String>() + key.capacity() + size_of::<Value>() + MEMBER_OVERHEAD + heap_bytes(member)
            })
            .sum(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_of_small_numbers_weighs_far_more_than_its_text() {
        let text = format!("[{}0]", "0,".repeat(9_999));
        let value: Value = serde_json::from_str(&text).unwrap();
        let heap = heap_bytes(&value);
        assert!(heap >= 10_000 * size_of::<Value>(), "{heap}");
        assert!(heap > 20 * text.len(), "{heap} against {} bytes of text", text.len());
    }

    #[test]
    fn strings_and_members_count_their_bytes() {
        let long = "x".repeat(1_000);
        let value = serde_json::json!({ "title": long, "tags": ["a", "b"] });
        let heap = heap_bytes(&value);
        assert!(
            heap >= 1_000 + "title".len() + "tags".len() + 2 * size_of::<Value>(),
            "{heap}"
        );
        assert_eq!(heap_bytes(&Value::Null), 0);
    }
}
