//! A `/mcp` POST body as a typed JSON-RPC 2.0 message, or the JSON-RPC error that refuses it.
//! Pure (bytes in, no I/O): the HTTP adapter answers a refusal with status 400, and the fuzz
//! target `jsonrpc_request` runs it on arbitrary bytes.

use serde_json::Value;

use crate::json_weight::Weight;
use crate::{INVALID_REQUEST, PARSE_ERROR};

/// One parsed message.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    Request {
        id: Value,
        method: String,
        params: Value,
    },
    /// A notification: answered 202 with no body.
    Notification {
        method: String,
        params: Value,
    },
    /// A client's response: answered 202 with no body.
    NoReply,
}

/// Why a body is not a JSON-RPC request: `PARSE_ERROR` or `INVALID_REQUEST`, and the message.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RequestRefusal {
    pub code: i64,
    pub message: String,
}

/// Longest string `id` a request may have. A request's id is kept while it runs (a held
/// long-poll keeps it for up to 25 s, in the map that cancels it and in its answer), so an id
/// of megabytes would be kept as long; clients send numbers or UUIDs.
pub const MAX_ID_BYTES: usize = 1024;

/// Parses a POST body. Batches are not part of current MCP revisions and are refused.
pub fn parse_request(body: &[u8]) -> Result<Incoming, RequestRefusal> {
    let envelope: Envelope = serde_json::from_slice(body).map_err(|e| RequestRefusal {
        code: PARSE_ERROR,
        message: format!("Parse error: {e}"),
    })?;
    let invalid = |why: &str| RequestRefusal {
        code: INVALID_REQUEST,
        message: format!("Invalid Request: {why}"),
    };
    let Envelope(Some(members)) = envelope else {
        return Err(invalid("the body must be a JSON-RPC 2.0 object"));
    };
    if members.jsonrpc.as_ref().and_then(Value::as_str) != Some("2.0") {
        return Err(invalid("`jsonrpc` must be \"2.0\""));
    }
    let Some(method) = members.method else {
        if members.answers {
            return Ok(Incoming::NoReply);
        }
        return Err(invalid("`method` is missing"));
    };
    let Value::String(method) = method else {
        return Err(invalid("`method` must be a string"));
    };
    let params = members.params.unwrap_or(Value::Null);
    let Some(id) = members.id else {
        return Ok(Incoming::Notification { method, params });
    };
    if !(id.is_string() || id.is_number()) {
        return Err(invalid("`id` must be a string or a number"));
    }
    if id.as_str().is_some_and(|text| text.len() > MAX_ID_BYTES) {
        return Err(invalid("`id` must be at most 1024 bytes"));
    }
    if !(params.is_object() || params.is_null()) {
        return Err(invalid("`params` must be an object"));
    }
    Ok(Incoming::Request { id, method, params })
}

/// What the members of a POST body that [`parse_request`] keeps (`jsonrpc`, `method`, `params`,
/// `id`) will take in memory once parsed ([`crate::json_weight`]), read without parsing them:
/// the server reserves it before it parses. Members read and dropped weigh nothing (a member
/// given twice is weighed twice); a body that is not JSON is refused as [`parse_request`] refuses
/// it.
pub fn request_weight(body: &[u8]) -> Result<usize, RequestRefusal> {
    let mut reader = serde_json::Deserializer::from_slice(body);
    let weighed = serde::Deserializer::deserialize_any(&mut reader, EnvelopeWeightVisitor).and_then(|weight| {
        reader.end()?;
        Ok(weight)
    });
    weighed.map_err(|e| RequestRefusal {
        code: PARSE_ERROR,
        message: format!("Parse error: {e}"),
    })
}

/// [`EnvelopeVisitor`]'s reading of a body, weighing what it keeps.
struct EnvelopeWeightVisitor;

impl<'de> serde::de::Visitor<'de> for EnvelopeWeightVisitor {
    type Value = usize;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<usize, A::Error> {
        let mut weight = 0_usize;
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Jsonrpc | Member::Method | Member::Params | Member::Id => {
                    let Weight(kept) = map.next_value()?;
                    weight = weight.saturating_add(kept);
                }
                Member::Result | Member::Error | Member::Other => {
                    map.next_value::<Checked>()?;
                }
            }
        }
        Ok(weight)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<usize, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(0)
    }

    fn visit_bool<E>(self, _: bool) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_i64<E>(self, _: i64) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_u64<E>(self, _: u64) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_f64<E>(self, _: f64) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_str<E>(self, _: &str) -> Result<usize, E> {
        Ok(0)
    }

    fn visit_unit<E>(self) -> Result<usize, E> {
        Ok(0)
    }
}

/// A body read straight into the members JSON-RPC gives meaning to, without building the object
/// as a map first (its keys, their hashes and the map's table were most of a small request's
/// parse: issue 18). Any JSON is accepted here; what is not a JSON-RPC message is refused after.
/// `None`: an array (a batch), a string, a number, `true`, `false` or `null`.
struct Envelope(Option<Members>);

/// The members of an object body. A member given twice counts as its last, as in a map.
#[derive(Default)]
struct Members {
    jsonrpc: Option<Value>,
    method: Option<Value>,
    params: Option<Value>,
    /// Present even when `null` (which is refused), unlike a missing one (a notification).
    id: Option<Value>,
    /// Whether `result` or `error` is there: the body is a client's response.
    answers: bool,
}

/// The member names read; every other member is checked as JSON and dropped ([`Checked`]).
#[derive(serde::Deserialize)]
#[serde(field_identifier, rename_all = "lowercase")]
enum Member {
    Jsonrpc,
    Method,
    Params,
    Id,
    Result,
    Error,
    #[serde(other)]
    Other,
}

impl<'de> serde::Deserialize<'de> for Envelope {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(EnvelopeVisitor)
    }
}

struct EnvelopeVisitor;

impl<'de> serde::de::Visitor<'de> for EnvelopeVisitor {
    type Value = Envelope;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Envelope, A::Error> {
        let mut members = Members::default();
        while let Some(member) = map.next_key::<Member>()? {
            match member {
                Member::Jsonrpc => members.jsonrpc = Some(map.next_value()?),
                Member::Method => members.method = Some(map.next_value()?),
                Member::Params => members.params = Some(map.next_value()?),
                Member::Id => members.id = Some(map.next_value()?),
                Member::Result | Member::Error => {
                    map.next_value::<Checked>()?;
                    members.answers = true;
                }
                Member::Other => {
                    map.next_value::<Checked>()?;
                }
            }
        }
        Ok(Envelope(Some(members)))
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Envelope, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Envelope(None))
    }

    fn visit_bool<E>(self, _: bool) -> Result<Envelope, E> {
        Ok(Envelope(None))
    }

    fn visit_i64<E>(self, _: i64) -> Result<Envelope, E> {
        Ok(Envelope(None))
    }

    fn visit_u64<E>(self, _: u64) -> Result<Envelope, E> {
        Ok(Envelope(None))
    }

    fn visit_f64<E>(self, _: f64) -> Result<Envelope, E> {
        Ok(Envelope(None))
    }

    fn visit_str<E>(self, _: &str) -> Result<Envelope, E> {
        Ok(Envelope(None))
    }

    fn visit_unit<E>(self) -> Result<Envelope, E> {
        Ok(Envelope(None))
    }
}

/// A value read and dropped, checked as strictly as reading it into a `Value` would: serde's
/// `IgnoredAny` lets serde_json skip past invalid UTF-8, lone surrogates, out-of-range numbers
/// and any depth, which must stay a parse error (-32700). Strings are read borrowed where they
/// have no escapes, so nothing is allocated for them.
struct Checked;

impl<'de> serde::Deserialize<'de> for Checked {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(CheckedVisitor)
    }
}

struct CheckedVisitor;

impl<'de> serde::de::Visitor<'de> for CheckedVisitor {
    type Value = Checked;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("any JSON value")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Checked, A::Error> {
        while map.next_entry::<Checked, Checked>()?.is_some() {}
        Ok(Checked)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Checked, A::Error> {
        while seq.next_element::<Checked>()?.is_some() {}
        Ok(Checked)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_str<E>(self, _: &str) -> Result<Checked, E> {
        Ok(Checked)
    }

    fn visit_unit<E>(self) -> Result<Checked, E> {
        Ok(Checked)
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn parse(body: &str) -> Result<Incoming, RequestRefusal> {
        parse_request(body.as_bytes())
    }

    #[test]
    fn a_request_a_notification_and_a_response_are_told_apart() {
        let request = parse(r#"{"jsonrpc":"2.0","id":7,"method":"ping","params":{"a":1}}"#).unwrap();
        assert_eq!(
            request,
            Incoming::Request {
                id: json!(7),
                method: "ping".into(),
                params: json!({ "a": 1 })
            }
        );
        assert!(matches!(
            parse(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            Ok(Incoming::Notification { .. })
        ));
        assert_eq!(parse(r#"{"jsonrpc":"2.0","id":1,"result":{}}"#), Ok(Incoming::NoReply));
    }

    #[test]
    fn members_read_as_an_object_would_have_them() {
        // Unknown members are skipped whatever they hold; a member given twice counts as its
        // last; escaped names and values are read decoded.
        let request = parse(
            r#"{"extra":{"deep":[1,{"x":null}]},"jsonrpc":"2.0","id":"a","id":"b","method":"p\u0069ng","p\u0061rams":{"k":"v"}}"#,
        )
        .unwrap();
        assert_eq!(
            request,
            Incoming::Request {
                id: json!("b"),
                method: "ping".into(),
                params: json!({ "k": "v" })
            }
        );
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","id":1,"error":{"code":1,"message":"m"}}"#),
            Ok(Incoming::NoReply)
        );
        assert_eq!(
            parse(r#"{"jsonrpc":"2.0","method":"n","params":null}"#),
            Ok(Incoming::Notification {
                method: "n".into(),
                params: Value::Null
            })
        );
    }

    #[test]
    fn a_request_weighs_the_members_it_keeps_as_they_will_be_parsed() {
        let zeros = format!("[{}0]", "0,".repeat(99_999));
        let kept = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"a":{zeros}}}}}"#);
        let weight = request_weight(kept.as_bytes()).unwrap();
        let params = crate::json_weight::parsed_weight(format!(r#"{{"a":{zeros}}}"#).as_bytes()).unwrap();
        assert_eq!(weight, params + "2.0".len() + "tools/call".len());
        assert!(weight > 100_000 * std::mem::size_of::<Value>(), "{weight}");
        // The same array in a member that is read and dropped, or in a batch, is never built.
        let dropped = format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","x":{zeros},"result":{zeros}}}"#);
        assert_eq!(request_weight(dropped.as_bytes()).unwrap(), "2.0".len() + "ping".len());
        assert_eq!(request_weight(format!("[{zeros}]").as_bytes()).unwrap(), 0);
    }

    #[test]
    fn a_body_weighing_refuses_what_parsing_refuses_in_the_same_words() {
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        for body in [
            "{".to_owned(),
            "{} {}".to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":"\ud800"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":1e400}}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{deep}}}"#),
        ] {
            assert_eq!(
                request_weight(body.as_bytes()),
                Err(parse(&body).unwrap_err()),
                "{body}"
            );
        }
    }

    #[test]
    fn bad_bodies_are_refused_with_the_json_rpc_code() {
        assert_eq!(parse("{").unwrap_err().code, PARSE_ERROR);
        for malformed in ["", "{\"jsonrpc\":\"2.0\",}", "[1,", "{} {}", "{\"a\":tru}"] {
            let refusal = parse(malformed).unwrap_err();
            assert_eq!(refusal.code, PARSE_ERROR, "{malformed}");
            assert!(refusal.message.starts_with("Parse error: "), "{}", refusal.message);
        }
        // Invalid JSON is a parse error wherever it is, also in members (or elements) that are
        // not read: a lone surrogate, a number out of range, nesting past the limit, bad UTF-8.
        let deep = format!("{}{}", "[".repeat(200), "]".repeat(200));
        let bodies: Vec<Vec<u8>> = [
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":"\ud800"}"#.to_owned(),
            r#"{"jsonrpc":"2.0","id":1,"method":"ping","x":1e400}"#.to_owned(),
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","x":{deep}}}"#),
            format!(r#"{{"jsonrpc":"2.0","id":1,"result":{deep}}}"#),
            format!("[{deep}]"),
        ]
        .into_iter()
        .map(String::into_bytes)
        .chain([b"{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\",\"x\":\"\xff\"}".to_vec()])
        .collect();
        for body in bodies {
            let refusal = parse_request(&body).unwrap_err();
            assert_eq!(refusal.code, PARSE_ERROR, "{}", String::from_utf8_lossy(&body));
        }
        let long_id = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"m"}}"#,
            "i".repeat(MAX_ID_BYTES + 1)
        );
        for (body, why) in [
            ("[]", "the body must be a JSON-RPC 2.0 object"),
            (
                r#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#,
                "the body must be a JSON-RPC 2.0 object",
            ),
            ("3", "the body must be a JSON-RPC 2.0 object"),
            ("-1.5", "the body must be a JSON-RPC 2.0 object"),
            (r#""text""#, "the body must be a JSON-RPC 2.0 object"),
            ("null", "the body must be a JSON-RPC 2.0 object"),
            ("true", "the body must be a JSON-RPC 2.0 object"),
            (r#"{"id":1,"method":"m"}"#, "`jsonrpc` must be \"2.0\""),
            (r#"{"jsonrpc":2.0,"id":1,"method":"m"}"#, "`jsonrpc` must be \"2.0\""),
            (
                r#"{"jsonrpc":"2.0","id":null,"method":"m"}"#,
                "`id` must be a string or a number",
            ),
            (
                r#"{"jsonrpc":"2.0","method":"m","id":1,"id":[1]}"#,
                "`id` must be a string or a number",
            ),
            (r#"{"jsonrpc":"1.0","id":1,"method":"m"}"#, "`jsonrpc` must be \"2.0\""),
            (r#"{"jsonrpc":"2.0","id":1}"#, "`method` is missing"),
            (r#"{"jsonrpc":"2.0","id":1,"method":3}"#, "`method` must be a string"),
            (
                r#"{"jsonrpc":"2.0","id":{},"method":"m"}"#,
                "`id` must be a string or a number",
            ),
            (
                r#"{"jsonrpc":"2.0","id":1,"method":"m","params":[1]}"#,
                "`params` must be an object",
            ),
            (long_id.as_str(), "`id` must be at most 1024 bytes"),
        ] {
            let refusal = parse(body).unwrap_err();
            assert_eq!(refusal.code, INVALID_REQUEST, "{body}");
            assert_eq!(refusal.message, format!("Invalid Request: {why}"), "{body}");
        }
        let longest = format!(
            r#"{{"jsonrpc":"2.0","id":"{}","method":"m"}}"#,
            "i".repeat(MAX_ID_BYTES)
        );
        assert!(matches!(parse(&longest), Ok(Incoming::Request { .. })));
    }
}
