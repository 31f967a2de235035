//! Frames the server sends, as `{ type, payload }` JSON text.

use serde_json::{Value, json};
use svc_application::ports::agent::{ActionEventRecord, LiveEvent, StreamEnvelope};

pub fn frame(kind: &str, payload: Value) -> String {
    json!({ "type": kind, "payload": payload }).to_string()
}

/// An `error` frame; a message quoting input is cut like every error message (`svc_domain::text`).
pub fn error(code: &str, message: &str) -> String {
    let message = svc_domain::text::bounded_message(message.to_owned());
    frame("error", json!({ "code": code, "message": message }))
}

/// What a replay could not carry from its cursor on: the card rebuilds only what was lost (its
/// stream data after a stream gap; nothing of its streams after an action gap).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct ReplayGaps {
    pub actions: bool,
    pub streams: bool,
}

impl ReplayGaps {
    /// A gap in the live tail's stream envelopes.
    pub const STREAMS: Self = Self {
        actions: false,
        streams: true,
    };

    pub fn any(self) -> bool {
        self.actions || self.streams
    }

    /// `lost` on the wire: the replays that left something out, `"actions"` before `"streams"`.
    pub fn lost(self) -> Value {
        let lost: Vec<&str> = [(self.actions, "actions"), (self.streams, "streams")]
            .into_iter()
            .filter_map(|(gap, name)| gap.then_some(name))
            .collect();
        json!(lost)
    }
}

/// The `system` payload that precedes a replay whose cursor is older than what it carries.
pub fn replay_gap(gaps: ReplayGaps) -> Value {
    json!({
        "event": "replay_gap",
        "lost": gaps.lost(),
        "message": "frames before the ones that follow were not replayed; refetch state",
    })
}

/// The `system` payload of a socket that fell behind its topic's channel by `skipped` events.
pub fn lagged(skipped: u64) -> Value {
    json!({ "event": "lagged", "skipped": skipped, "message": "resubscribe with fromSeq to catch up" })
}

/// The `system` payload of a socket whose replica's bus may have lost events of other replicas
/// (`LiveEvent::MissedEvents`): a `lagged` whose count nobody knows, answered the same way.
pub fn lagged_between_replicas() -> Value {
    json!({
        "event": "lagged",
        "message": "live events from another replica may have been lost; resubscribe with fromSeq to catch up",
    })
}

fn iso(t: chrono::DateTime<chrono::Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

pub fn data(envelope: &StreamEnvelope) -> String {
    frame(
        "data",
        json!({
            "sessionId": envelope.session_id,
            "channel": envelope.channel,
            "seq": envelope.seq,
            "mode": envelope.mode,
            "payload": envelope.payload,
            "complete": envelope.complete,
            "timestamp": iso(envelope.timestamp),
        }),
    )
}

pub fn props_update(session_id: &str, props: &Value, epoch: u32) -> String {
    frame(
        "props_update",
        json!({ "sessionId": session_id, "props": props, "epoch": epoch }),
    )
}

pub fn render_event(event: &ActionEventRecord) -> String {
    frame(
        "render_event",
        json!({
            "sessionId": event.session_id,
            "sequence": event.sequence,
            "type": svc_domain::action_event::DATA_SUBMIT,
            "intent": event.intent,
            "actionData": event.action_data,
            "uiContext": event.ui_context,
            "actionId": event.action_id,
            "firedAt": iso(event.fired_at),
        }),
    )
}

/// The frame a bus event becomes for a subscriber; `None` for events only the server uses.
pub fn live(event: &LiveEvent) -> Option<String> {
    match event {
        LiveEvent::PropsUpdate {
            session_id,
            props,
            epoch,
        } => Some(props_update(session_id, props, *epoch)),
        LiveEvent::Data(envelope) => Some(data(envelope)),
        LiveEvent::DrainAck { session_id, action_ids } => Some(frame(
            "drain_ack",
            json!({ "sessionId": session_id, "actionIds": action_ids }),
        )),
        // Markers of large ones: the forwarder reads what they announce from the store.
        LiveEvent::PropsStored { .. }
        | LiveEvent::DataStored { .. }
        | LiveEvent::ActionStored { .. }
        | LiveEvent::KeyRevoked { .. }
        | LiveEvent::BlueprintsChanged
        | LiveEvent::MissedEvents => None,
        LiveEvent::Render {
            session_id, created_at, ..
        } => Some(frame(
            "render",
            json!({
                "session": { "sessionId": session_id, "resourceUri": format!("ui://svc/render/{session_id}"), "createdAt": iso(*created_at) },
                "matchType": "host-session",
            }),
        )),
    }
}
