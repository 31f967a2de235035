//! serde_json's raw-value marker in untrusted JSON. The build has serde_json's `raw_value`
//! feature (sqlx turns it on), with which a `Value` parse reads an object whose member is named
//! [`RAW_VALUE_KEY`] as the JSON text its string holds, parsed by a reader with a recursion limit
//! of its own: markers nested in each other's strings take the parse past any stack (a 3 KiB
//! body overflowed a worker's stack and aborted the whole server). No message of ours has a
//! member of that name, so text holding it is refused before it is parsed into a `Value`.

use serde::de::{DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};

/// The member name (`serde_json::raw::TOKEN`, which is not public).
pub const RAW_VALUE_KEY: &str = "$serde_json::private::RawValue";

/// Why a text holding [`RAW_VALUE_KEY`] is refused (as a parse error).
pub const RAW_VALUE_REFUSAL: &str = "the member name `$serde_json::private::RawValue` is reserved";

/// serde_json's error for `text` when it is not one JSON value, or one naming [`RAW_VALUE_KEY`]
/// when a member of any object in it has that name (its escapes decoded). Reads without
/// allocating for strings without escapes, and no deeper than serde_json's recursion limit.
pub fn refuse_raw_value_marker(text: &[u8]) -> Result<(), serde_json::Error> {
    let mut reader = serde_json::Deserializer::from_slice(text);
    reader.deserialize_any(NoMarker)?;
    reader.end()
}

/// Whether a member name is the marker; for weighing visitors that read names themselves.
pub fn is_raw_value_key(name: &str) -> bool {
    name == RAW_VALUE_KEY
}

struct NoMarker;

impl<'de> DeserializeSeed<'de> for NoMarker {
    type Value = ();

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<(), D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for NoMarker {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_bool<E>(self, _: bool) -> Result<(), E> {
        Ok(())
    }

    fn visit_i64<E>(self, _: i64) -> Result<(), E> {
        Ok(())
    }

    fn visit_u64<E>(self, _: u64) -> Result<(), E> {
        Ok(())
    }

    fn visit_f64<E>(self, _: f64) -> Result<(), E> {
        Ok(())
    }

    fn visit_str<E>(self, _: &str) -> Result<(), E> {
        Ok(())
    }

    fn visit_unit<E>(self) -> Result<(), E> {
        Ok(())
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        while seq.next_element_seed(NoMarker)?.is_some() {}
        Ok(())
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(marker) = map.next_key_seed(MarkerName)? {
            if marker {
                return Err(serde::de::Error::custom(RAW_VALUE_REFUSAL));
            }
            map.next_value_seed(NoMarker)?;
        }
        Ok(())
    }
}

/// A member name: whether it is the marker.
struct MarkerName;

impl<'de> DeserializeSeed<'de> for MarkerName {
    type Value = bool;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<bool, D::Error> {
        deserializer.deserialize_str(self)
    }
}

impl<'de> Visitor<'de> for MarkerName {
    type Value = bool;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string key")
    }

    fn visit_str<E>(self, name: &str) -> Result<bool, E> {
        Ok(is_raw_value_key(name))
    }
}

/// The hostile input every guard of this rule is tested with: markers nested in each other's
/// strings, `levels` deep, each string's text 120 arrays deep (each level is read by a fresh
/// reader, so no recursion limit bounds the whole; 10 levels are under 16 KiB).
pub fn nested_raw_value_markers(levels: usize) -> String {
    let mut text = format!("{}0{}", "[".repeat(120), "]".repeat(120));
    for _ in 0..levels {
        let inner = serde_json::to_string(&text).unwrap_or_default();
        text = format!(r#"{}{{"{RAW_VALUE_KEY}":{inner}}}{}"#, "[".repeat(120), "]".repeat(120));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_marker_is_refused_wherever_it_is_and_nothing_else_is() {
        let nested = nested_raw_value_markers(12);
        let refused = [
            r#"{"$serde_json::private::RawValue":"[0]"}"#.to_owned(),
            r#"{"a":1,"$serde_json::private::RawValue":"[0,0]"}"#.to_owned(),
            r#"{"params":{"props":[{"\u0024serde_json::private::RawValue":"1"}]}}"#.to_owned(),
            nested,
        ];
        let answers = std::thread::Builder::new()
            .stack_size(256 * 1024)
            .spawn(move || refused.map(|text| refuse_raw_value_marker(text.as_bytes()).map_err(|e| e.to_string())))
            .unwrap()
            .join()
            .expect("no stack overflow");
        for answer in answers {
            let message = answer.unwrap_err();
            assert!(message.starts_with(RAW_VALUE_REFUSAL), "{message}");
        }
        for fine in [
            r#"{"$serde_json::private::RawValues":"[0]"}"#,
            r#"["$serde_json::private::RawValue"]"#,
            "1",
        ] {
            assert!(refuse_raw_value_marker(fine.as_bytes()).is_ok(), "{fine}");
        }
        for invalid in ["", "[1,", "{} {}"] {
            let ours = refuse_raw_value_marker(invalid.as_bytes()).unwrap_err().to_string();
            let theirs = serde_json::from_str::<serde_json::Value>(invalid)
                .unwrap_err()
                .to_string();
            assert_eq!(ours, theirs, "{invalid}");
        }
    }
}
