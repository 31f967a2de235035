//! What JSON text will weigh once parsed into a `serde_json::Value`, read from the text without
//! building anything. The text understates it up to forty times (`[0,0,...]` is two bytes an
//! element as text and a 72-byte `Value` each once parsed, with its array's spare capacity
//! besides), so a server that bounds request bodies by their bytes must weigh them again before
//! parsing them (`/mcp` and `/ops`: `jsonrpc::request_weight`).
//!
//! The weight is the heap a parse allocates and keeps, by the rule the SQL adapter's
//! `json_heap::heap_bytes` weighs a parsed value with (that file is compiled here as a module of
//! this crate: an adapter does not depend on another): an array's slots at the capacity its
//! growth leaves, a string's bytes, and an object's keys beside its map's entries and index table
//! at the capacity their growth leaves (serde_json is built with `preserve_order`: a map is an
//! `IndexMap`). It is never below what a parse holds, as an allocator counts it, and at most about
//! half again above it (`tests/parsed_heap.rs`). The pass is serde_json's own reader driven by a
//! visitor that only adds: strings without escapes are read borrowed, nothing is allocated;
//! nesting deeper than serde_json's recursion limit (128) is a parse error, as it is for a
//! `Value`, so the pass cannot run out of stack. Invalid JSON is refused exactly as parsing it
//! into a `Value` would refuse it.
//!
//! One member name is refused wherever it is: serde_json reads `{"$serde_json::private::RawValue": s}`
//! (its `raw_value` feature's marker, which sqlx turns on for the whole build) as the JSON text
//! the string `s` holds, parsed by a reader of its own with a recursion limit of its own, so
//! markers nested in each other's strings took a parse past any stack (a 3 KiB body overflowed a
//! worker's stack and aborted the server). No message of ours has a member of that name.

use serde::Deserializer;
use serde::de::{DeserializeSeed, MapAccess, SeqAccess, Visitor};

// The rule of a parsed value's heap; outside the tests only its weighing functions are used.
#[path = "../../sql/src/json_heap.rs"]
#[cfg_attr(not(test), allow(dead_code))]
mod json_heap;

use json_heap::{array_slots_bytes, object_members_bytes};

use svc_domain::json_marker::{RAW_VALUE_REFUSAL, is_raw_value_key};

/// The heap the JSON text `body` would take parsed into a `Value` (not counting the `Value`
/// itself), or serde_json's error for it when it is not one JSON value.
pub fn parsed_weight(body: &[u8]) -> Result<usize, serde_json::Error> {
    let mut reader = serde_json::Deserializer::from_slice(body);
    let Weight(weight) = Weight::read(&mut reader)?;
    reader.end()?;
    Ok(weight)
}

/// The heap one JSON value read by a deserializer would take parsed into a `Value`: read it with
/// [`Weight::read`], or as a member of something larger by deserializing a `Weight`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Weight(pub usize);

impl Weight {
    /// Weighs the next value `deserializer` reads.
    pub fn read<'de, D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(WeightVisitor)
    }
}

impl<'de> serde::Deserialize<'de> for Weight {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Self::read(deserializer)
    }
}

struct WeightVisitor;

impl<'de> Visitor<'de> for WeightVisitor {
    type Value = Weight;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<Weight, E> {
        Ok(Weight(0))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Weight, E> {
        Ok(Weight(0))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Weight, E> {
        Ok(Weight(0))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Weight, E> {
        Ok(Weight(0))
    }

    /// A parsed string is allocated at its length (its escapes decoded).
    fn visit_str<E>(self, text: &str) -> Result<Weight, E> {
        Ok(Weight(text.len()))
    }

    fn visit_unit<E>(self) -> Result<Weight, E> {
        Ok(Weight(0))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Weight, A::Error> {
        let (mut len, mut elements) = (0_usize, 0_usize);
        while let Some(Weight(element)) = seq.next_element()? {
            len += 1;
            elements = elements.saturating_add(element);
        }
        Ok(Weight(array_slots_bytes(len).saturating_add(elements)))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Weight, A::Error> {
        let (mut len, mut members) = (0_usize, 0_usize);
        while let Some(Key { bytes, raw_value }) = map.next_key_seed(KeySeed)? {
            if raw_value {
                return Err(serde::de::Error::custom(RAW_VALUE_REFUSAL));
            }
            let Weight(value) = map.next_value()?;
            len += 1;
            members = members.saturating_add(bytes).saturating_add(value);
        }
        Ok(Weight(object_members_bytes(len).saturating_add(members)))
    }
}

/// A member's name: its bytes (a name given twice is weighed twice, an overestimate), and
/// whether it is serde_json's raw-value marker (`svc_domain::json_marker`).
struct Key {
    bytes: usize,
    raw_value: bool,
}

struct KeySeed;

impl<'de> DeserializeSeed<'de> for KeySeed {
    type Value = Key;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Key, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for KeySeed {
    type Value = Key;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E>(self, name: &str) -> Result<Key, E> {
        Ok(Key {
            bytes: name.len(),
            raw_value: is_raw_value_key(name),
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn heap_of(text: &str) -> usize {
        json_heap::heap_bytes(&serde_json::from_str::<Value>(text).unwrap())
    }

    /// `estimate / actual`, which the tests hold within 1 ± 5 %.
    fn ratio(text: &str) -> f64 {
        let estimate = parsed_weight(text.as_bytes()).unwrap();
        estimate as f64 / heap_of(text) as f64
    }

    #[test]
    fn an_array_of_zeros_weighs_what_it_takes_parsed_not_its_text() {
        for len in [1, 3, 4, 5, 1_000, 2_000_000] {
            let text = format!("[{}0]", "0,".repeat(len - 1));
            let weight = parsed_weight(text.as_bytes()).unwrap();
            assert!(weight >= len * size_of::<Value>(), "{len}: {weight}");
            let ratio = ratio(&text);
            assert!((0.95..=1.05).contains(&ratio), "{len} zeros: {ratio}");
        }
        // 4 MiB of text, about 150 MiB parsed.
        let text = format!("[{}0]", "0,".repeat(2 * 1024 * 1024 - 1));
        assert!(parsed_weight(text.as_bytes()).unwrap() > 30 * text.len());
    }

    #[test]
    fn an_object_of_strings_weighs_its_names_values_and_members() {
        let members: Vec<String> = (0..5_000)
            .map(|n| format!(r#""name number {n}":"{} \u00e9 \"quoted\"""#, "text ".repeat(n % 40)))
            .collect();
        let text = format!(
            r#"{{"list":["a","bb",{{"ccc":[]}},null,true,1.5,-3],"members":{{{}}}}}"#,
            members.join(",")
        );
        let ratio = ratio(&text);
        assert!((0.95..=1.05).contains(&ratio), "{ratio}");
        for scalar in ["0", "null", "true", "-1.5e3", r#""""#] {
            assert_eq!(parsed_weight(scalar.as_bytes()).unwrap(), 0, "{scalar}");
        }
        assert_eq!(parsed_weight(br#""a\nb""#).unwrap(), 3, "the string as decoded");
    }

    #[test]
    fn invalid_json_is_refused_as_parsing_it_would_refuse_it() {
        let deep = format!("{}{}", "[".repeat(129), "]".repeat(129));
        for body in [
            "",
            "[1,",
            "{} {}",
            r#"{"a":tru}"#,
            r#"["\ud800"]"#,
            "[1e400]",
            deep.as_str(),
            r#"{"a":1,}"#,
        ] {
            let weighed = parsed_weight(body.as_bytes()).unwrap_err().to_string();
            let parsed = serde_json::from_str::<Value>(body).unwrap_err().to_string();
            assert_eq!(weighed, parsed, "{body}");
        }
        assert!(parsed_weight(b"[\"\xff\"]").is_err(), "invalid UTF-8");
    }

    /// The marker's string is never parsed (markers nested in each other's strings are
    /// `svc_domain::json_marker`'s test): the name is refused wherever it is.
    #[test]
    fn the_raw_value_marker_is_refused_wherever_it_is_without_parsing_its_string() {
        let bodies = [
            r#"{"$serde_json::private::RawValue":"[0]"}"#.to_owned(),
            r#"{"a":1,"$serde_json::private::RawValue":"[0,0]"}"#.to_owned(),
            r#"{"params":{"props":[{"\u0024serde_json::private::RawValue":"1"}]}}"#.to_owned(),
            format!(
                r#"[{{"$serde_json::private::RawValue":{}}}]"#,
                serde_json::to_string(r#"{"$serde_json::private::RawValue":"[0]"}"#).unwrap()
            ),
        ];
        let refusals = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || bodies.map(|body| parsed_weight(body.as_bytes()).map_err(|e| e.to_string())))
            .unwrap()
            .join()
            .expect("no stack overflow");
        for refused in refusals {
            let message = refused.unwrap_err();
            assert!(message.starts_with(RAW_VALUE_REFUSAL), "{message}");
        }
        // The member name is otherwise free: one letter off is an ordinary key.
        let near = r#"{"$serde_json::private::RawValues":"[0]"}"#;
        assert_eq!(parsed_weight(near.as_bytes()).unwrap(), heap_of(near));
    }

    /// Nesting as deep as a `Value` may be is weighed on a small stack, and deeper nesting (a
    /// whole body of brackets) is refused at the limit instead of recursing on.
    #[test]
    fn nesting_is_bounded_by_the_recursion_limit_not_the_stack() {
        let deepest = format!("{}0{}", r#"[{"k":"#.repeat(63), "}]".repeat(63));
        assert!(
            serde_json::from_str::<Value>(&deepest).is_ok(),
            "a Value may nest so deep"
        );
        let brackets = "[".repeat(4 * 1024 * 1024);
        let weighed = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || (parsed_weight(deepest.as_bytes()), parsed_weight(brackets.as_bytes())))
            .unwrap()
            .join()
            .expect("no stack overflow");
        assert!(weighed.0.is_ok(), "{:?}", weighed.0);
        let refused = weighed.1.unwrap_err().to_string();
        assert!(refused.starts_with("recursion limit exceeded"), "{refused}");
    }
}
