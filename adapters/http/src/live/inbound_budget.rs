//! A client's frames under the budget of parsed JSON (`parsed_json_budget.rs`): a `/ws` text frame
//! and a polling POST's body are at most 256 KiB, but parsed a frame of `[0,0,...]` takes some
//! 10 MiB, and every socket of the replica may send one at once. So each is weighed from its
//! text before it is parsed (`svc_protocol::json_weight`) and its reservation held while it is
//! answered, from the same budget as the JSON-RPC messages of `/mcp` and `/ops`.
//!
//! Refused in each transport's words: the polling POST as `/mcp` is ([`ParsedJsonBudget::refusal`],
//! 503 `SERVER_BUSY` with `Retry-After: 1`, or 413); a socket's frame with an `error` frame:
//! `SERVER_BUSY` with `retryAfterSeconds` (and the action's `clientSeq`, read without parsing the
//! frame, so the card sends that action again) while others hold the budget, the socket kept;
//! `FRAME_TOO_LARGE` and the 1009 close when the frame alone is heavier than the whole budget.

use serde::Deserialize;
use serde_json::json;
use serde_json::value::RawValue;

use super::frames;
use crate::ParsedJsonBudget;
use crate::parsed_json_budget::{OverBudget, ParsedJsonReservation};

/// The wait a socket's `SERVER_BUSY` asks for, as the POST's `Retry-After`.
const RETRY_AFTER_SECONDS: u64 = 1;

/// A socket's frame weighing at most this is taken without a reservation: a `ping`, a
/// `subscribe`, a `channel_subscribe` (a few hundred bytes parsed) must not be refused while large
/// messages hold the budget (the card runtime resends only actions). Each socket handles one
/// frame at a time, so these hold at most this much per socket.
const LIGHT_FRAME_WEIGHT: usize = 4 * 1024;

/// What a socket does with a text frame, weighed.
#[derive(Debug)]
pub(super) enum Admitted {
    /// Parse and answer it, holding this (none for a light frame) until the answer is made.
    Reserved(Option<ParsedJsonReservation>),
    /// Answer it with this `error` frame, unparsed, and read on.
    Refused(String),
    /// Answer it with this `error` frame and close the socket (1009): it can never be taken.
    TooHeavy(String),
}

/// Weighs a socket's text frame and reserves its weight from `budget`.
pub(super) fn admit_text(budget: &ParsedJsonBudget, text: &str) -> Admitted {
    // Not JSON: refused as `parse_frame` refuses it, without building what precedes the error.
    let Ok(weight) = svc_protocol::json_weight::parsed_weight(text.as_bytes()) else {
        return Admitted::Refused(frames::error("BAD_FRAME", "not JSON"));
    };
    if weight <= LIGHT_FRAME_WEIGHT {
        return Admitted::Reserved(None);
    }
    match budget.reserve(weight) {
        Ok(reserved) => Admitted::Reserved(Some(reserved)),
        Err(OverBudget::Busy) => Admitted::Refused(busy_frame(client_seq(text))),
        Err(OverBudget::Never) => Admitted::TooHeavy(frames::error(
            "FRAME_TOO_LARGE",
            &format!(
                "the frame would take more than the server's {} MiB for parsed frames once parsed",
                budget.mib()
            ),
        )),
    }
}

/// Weighs a polling POST's frame (JSON already: poem's extractor checked it) and reserves its
/// weight; the error answering it otherwise. JSON nested deeper than a parse allows is refused as
/// parsing it would be.
pub(super) fn admit_posted(budget: &ParsedJsonBudget, frame: &RawValue) -> poem::Result<ParsedJsonReservation> {
    let weight = svc_protocol::json_weight::parsed_weight(frame.get().as_bytes())
        .map_err(|e| poem::Error::from(poem::error::ParseJsonError::Parse(e)))?;
    budget
        .reserve(weight)
        .map_err(|over| poem::Error::from_response(budget.refusal(over)))
}

/// The `error` frame of a frame refused while the budget is held: like an action the CPU gate
/// refused (`SERVER_BUSY`, not stored), with the action's `clientSeq` when it names one.
fn busy_frame(client_seq: Option<i64>) -> String {
    let mut payload = json!({
        "code": "SERVER_BUSY",
        "message": "the server is holding as many parsed frames as it has memory for; send it again in a second",
        "retryAfterSeconds": RETRY_AFTER_SECONDS,
    });
    if let Some(client_seq) = client_seq {
        payload["clientSeq"] = client_seq.into();
    }
    frames::frame("error", payload)
}

/// A frame's members as far as [`client_seq`] reads them: the rest is skipped, not built.
#[derive(Deserialize)]
struct FrameHead<'a> {
    #[serde(borrow)]
    payload: Option<&'a RawValue>,
}

#[derive(Deserialize)]
struct PayloadHead<'a> {
    #[serde(rename = "clientSeq", borrow)]
    client_seq: Option<&'a RawValue>,
}

/// `payload.clientSeq` of a frame when it is an integer, read without building the frame: the
/// card matches a refusal to its action by it.
fn client_seq(text: &str) -> Option<i64> {
    let head: FrameHead = serde_json::from_str(text).ok()?;
    let payload: PayloadHead = serde_json::from_str(head.payload?.get()).ok()?;
    serde_json::from_str(payload.client_seq?.get()).ok()
}

#[cfg(test)]
mod tests {
    use serde_json::Value;

    use super::*;

    fn payload(frame: &str) -> Value {
        serde_json::from_str::<Value>(frame).unwrap()["payload"].take()
    }

    /// `[0,0,...]` of `len` zeros.
    fn zeros(len: usize) -> String {
        format!("[{}0]", "0,".repeat(len - 1))
    }

    #[test]
    fn a_frame_is_refused_while_the_budget_is_held_and_taken_once_it_is_given_back() {
        let budget = ParsedJsonBudget::of_mib(2);
        // 8192 zeros: 576 KiB parsed, 1152 KiB reserved.
        let frame = format!(
            r#"{{"type":"action","payload":{{"clientSeq":7,"data":{}}}}}"#,
            zeros(8192)
        );
        let Admitted::Reserved(held) = admit_text(&budget, &frame) else {
            panic!("fits")
        };
        let Admitted::Refused(refusal) = admit_text(&budget, &frame) else {
            panic!("busy")
        };
        assert_eq!(
            payload(&refusal),
            json!({ "code": "SERVER_BUSY", "clientSeq": 7, "retryAfterSeconds": 1, "message":
                "the server is holding as many parsed frames as it has memory for; send it again in a second" })
        );
        assert!(
            matches!(admit_text(&budget, r#"{"type":"ping"}"#), Admitted::Reserved(_)),
            "a light one fits"
        );
        // With every unit held, a light frame is still taken (without a reservation).
        // Every unit left taken, one at a time.
        let rest: Vec<_> = std::iter::from_fn(|| budget.reserve(512).ok()).collect();
        assert!(!rest.is_empty());
        assert!(matches!(admit_text(&budget, &frame), Admitted::Refused(_)));
        for light in [
            r#"{"type":"ping"}"#,
            r#"{"type":"subscribe","payload":{"sessionId":"s","wsToken":"t"}}"#,
            r#"{"type":"channel_subscribe","payload":{"channel":"prices"}}"#,
        ] {
            assert!(
                matches!(admit_text(&budget, light), Admitted::Reserved(None)),
                "{light}"
            );
        }
        drop((held, rest));
        assert!(matches!(admit_text(&budget, &frame), Admitted::Reserved(_)));
    }

    #[test]
    fn a_frame_heavier_than_the_whole_budget_and_text_that_is_not_json_are_refused_unparsed() {
        let budget = ParsedJsonBudget::of_mib(2);
        let Admitted::TooHeavy(refusal) = admit_text(&budget, &zeros(20_000)) else {
            panic!("too heavy")
        };
        assert_eq!(
            payload(&refusal),
            json!({ "code": "FRAME_TOO_LARGE", "message":
                "the frame would take more than the server's 2 MiB for parsed frames once parsed" })
        );
        // Unterminated: a parse would build the whole array before it failed.
        let Admitted::Refused(refusal) = admit_text(&budget, &zeros(20_000)[1..]) else {
            panic!("refused")
        };
        let Admitted::Refused(unclosed) = admit_text(&budget, &format!("[{}", "0,".repeat(20_000))) else {
            panic!("refused")
        };
        for refusal in [refusal, unclosed] {
            assert_eq!(payload(&refusal), json!({ "code": "BAD_FRAME", "message": "not JSON" }));
        }
    }

    #[test]
    fn the_client_seq_is_read_only_where_an_action_names_it() {
        assert_eq!(
            client_seq(r#"{"type":"action","payload":{"clientSeq":3,"data":[1,2]},"x":{}}"#),
            Some(3)
        );
        for text in [
            r#"{"type":"action","payload":{"clientSeq":"3"}}"#,
            r#"{"type":"action","payload":{"clientSeq":1.5}}"#,
            r#"{"type":"channel_subscribe","payload":"log"}"#,
            r#"{"type":"ping"}"#,
            r#"[{"payload":{"clientSeq":3}}]"#,
            r#"{"type":"action","clientSeq":3}"#,
        ] {
            assert_eq!(client_seq(text), None, "{text}");
        }
    }

    #[tokio::test]
    async fn a_posted_frame_is_refused_as_mcp_refuses_a_message() {
        let budget = ParsedJsonBudget::of_mib(2);
        let frame = RawValue::from_string(format!(r#"{{"type":"action","pad":{}}}"#, zeros(8192))).unwrap();
        let held = admit_posted(&budget, &frame).expect("fits");
        let busy = admit_posted(&budget, &frame).unwrap_err().into_response();
        assert_eq!(busy.status(), poem::http::StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(busy.headers()[poem::http::header::RETRY_AFTER], "1");
        drop(held);
        let heavy = RawValue::from_string(zeros(20_000)).unwrap();
        let never = admit_posted(&budget, &heavy).unwrap_err().into_response();
        assert_eq!(never.status(), poem::http::StatusCode::PAYLOAD_TOO_LARGE);
        // Deeper than a parse goes: refused as poem's `Json` refused it before.
        let deep = RawValue::from_string(format!("{}{}", "[".repeat(200), "]".repeat(200))).unwrap();
        let refused = admit_posted(&budget, &deep).unwrap_err().into_response();
        assert_eq!(refused.status(), poem::http::StatusCode::BAD_REQUEST);
        let text = refused.into_body().into_string().await.unwrap();
        assert!(text.starts_with("parse error: recursion limit exceeded"), "{text}");
    }
}
