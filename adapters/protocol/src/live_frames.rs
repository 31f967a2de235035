//! What a client's `/ws` text frame asks for, as a typed value, or the `error` frame's code and
//! message that refuse it. Pure (no state, no I/O): the connection dispatches on the result, and
//! the fuzz target `ws_frame` runs it on arbitrary text.

use serde_json::Value;

/// The largest `clientSeq`: JavaScript's `Number.MAX_SAFE_INTEGER`, the largest integer a card
/// can count to exactly.
pub const MAX_CLIENT_SEQ: i64 = (1 << 53) - 1;

/// One inbound frame by its `type`, with its `payload` (`null` when absent).
#[derive(Debug, Clone, PartialEq)]
pub enum InboundFrame {
    Ping,
    Subscribe(Value),
    /// The action envelope, checked by [`parse_action`] once the socket is bound.
    Action(Value),
    HostContextObserved(Value),
    ChannelSubscribe(String),
    ChannelUnsubscribe(String),
    /// Any other `type` (empty when absent): refused once the socket is known to be bound.
    Unknown(String),
}

/// Why a frame is refused: the `error` frame's code and message (cut like every error message
/// when the frame is sent).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FrameRefusal {
    pub code: &'static str,
    pub message: String,
}

impl FrameRefusal {
    fn bad_frame(message: impl Into<String>) -> Self {
        Self {
            code: "BAD_FRAME",
            message: message.into(),
        }
    }
}

/// A checked `data:submit` action envelope.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionFrame {
    pub intent: String,
    pub data: Value,
    pub ui_context: Option<Value>,
    pub client_seq: Option<i64>,
}

/// Parses one text frame.
pub fn parse_frame(text: &str) -> Result<InboundFrame, FrameRefusal> {
    let Ok(frame) = serde_json::from_str::<Value>(text) else {
        return Err(FrameRefusal::bad_frame("not JSON"));
    };
    // Ids in frames are looked up in text columns: the rule of every tool argument.
    if let Some(path) = svc_domain::text::nul_path(&frame) {
        return Err(FrameRefusal::bad_frame(format!(
            "{path} {}",
            svc_domain::text::NUL_RULE
        )));
    }
    let payload = frame.get("payload").cloned().unwrap_or(Value::Null);
    let channel = || {
        payload
            .as_str()
            .or_else(|| payload["channel"].as_str())
            .unwrap_or_default()
            .to_owned()
    };
    Ok(match frame["type"].as_str().unwrap_or_default() {
        "ping" => InboundFrame::Ping,
        "subscribe" => InboundFrame::Subscribe(payload),
        "action" => InboundFrame::Action(payload),
        "host_context_observed" => InboundFrame::HostContextObserved(payload),
        "channel_subscribe" => InboundFrame::ChannelSubscribe(channel()),
        "channel_unsubscribe" => InboundFrame::ChannelUnsubscribe(channel()),
        other => InboundFrame::Unknown(other.to_owned()),
    })
}

/// Checks an action envelope sent on a socket bound to `session_id`.
pub fn parse_action(envelope: &Value, session_id: &str) -> Result<ActionFrame, FrameRefusal> {
    if envelope["type"] != svc_domain::action_event::DATA_SUBMIT {
        return Err(FrameRefusal::bad_frame("ActionEnvelope.type must be `data:submit`"));
    }
    if envelope["sessionId"].as_str().is_some_and(|s| s != session_id) {
        return Err(FrameRefusal::bad_frame(
            "ActionEnvelope.sessionId is not the subscribed session",
        ));
    }
    let Some(intent) = envelope["payload"]["action"].as_str() else {
        return Err(FrameRefusal::bad_frame("payload.action (the intent) is required"));
    };
    let Ok(client_seq) = client_seq(envelope) else {
        return Err(FrameRefusal::bad_frame(format!(
            "clientSeq must be an integer from 0 to {MAX_CLIENT_SEQ}"
        )));
    };
    Ok(ActionFrame {
        intent: intent.to_owned(),
        data: envelope["payload"].get("data").cloned().unwrap_or(Value::Null),
        ui_context: envelope.get("uiContext").cloned(),
        client_seq,
    })
}

/// An action's optional `clientSeq`. It deduplicates the action, so a value the server cannot
/// keep exactly (a fraction, a negative, beyond [`MAX_CLIENT_SEQ`], not a number) is refused,
/// never dropped (which would store the action without deduplication).
fn client_seq(envelope: &Value) -> Result<Option<i64>, ()> {
    match envelope.get("clientSeq") {
        None => Ok(None),
        Some(value) => match value.as_i64() {
            Some(seq) if (0..=MAX_CLIENT_SEQ).contains(&seq) => Ok(Some(seq)),
            _ => Err(()),
        },
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn text_that_is_not_json_is_a_bad_frame() {
        let refusal = parse_frame("{nope").unwrap_err();
        assert_eq!((refusal.code, refusal.message.as_str()), ("BAD_FRAME", "not JSON"));
    }

    #[test]
    fn a_nul_byte_anywhere_is_refused_with_its_path() {
        let refusal = parse_frame(r#"{"type":"subscribe","payload":{"sessionId":"a\u0000b"}}"#).unwrap_err();
        assert_eq!(refusal.code, "BAD_FRAME");
        assert_eq!(refusal.message, "payload.sessionId must not contain U+0000 (NUL)");
    }

    #[test]
    fn frames_are_told_apart_by_type_and_carry_their_payload() {
        let subscribe = parse_frame(r#"{"type":"subscribe","payload":{"sessionId":"s"}}"#).unwrap();
        assert_eq!(subscribe, InboundFrame::Subscribe(json!({ "sessionId": "s" })));
        assert_eq!(parse_frame(r#"{"type":"ping"}"#).unwrap(), InboundFrame::Ping);
        assert_eq!(
            parse_frame(r#"{"type":"channel_subscribe","payload":"orders"}"#).unwrap(),
            InboundFrame::ChannelSubscribe("orders".into())
        );
        assert_eq!(
            parse_frame(r#"{"type":"channel_unsubscribe","payload":{"channel":"orders"}}"#).unwrap(),
            InboundFrame::ChannelUnsubscribe("orders".into())
        );
        assert_eq!(parse_frame("[1]").unwrap(), InboundFrame::Unknown(String::new()));
    }

    #[test]
    fn an_action_is_checked_field_by_field() {
        let ok = json!({ "type": "data:submit", "sessionId": "s", "payload": { "action": "save", "data": { "n": 1 } }, "clientSeq": 7 });
        let action = parse_action(&ok, "s").unwrap();
        assert_eq!((action.intent.as_str(), action.client_seq), ("save", Some(7)));
        assert_eq!(action.data, json!({ "n": 1 }));
        let other_session = parse_action(&ok, "t").unwrap_err();
        assert!(other_session.message.contains("not the subscribed session"));
        for seq in [
            json!(1e20),
            json!("x"),
            json!(-1),
            json!(1.5),
            json!(MAX_CLIENT_SEQ + 1),
        ] {
            let mut huge = ok.clone();
            huge["clientSeq"] = seq.clone();
            let refusal = parse_action(&huge, "s").unwrap_err();
            assert!(
                refusal.message.starts_with("clientSeq must be"),
                "{seq}: {}",
                refusal.message
            );
        }
    }
}
