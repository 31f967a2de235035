//! The message replicas exchange on a scale-out event bus (PostgreSQL NOTIFY, NATS): the
//! sender's origin and the event, as JSON. One encoding for every bus, a mirror of `LiveEvent`
//! with serde, so the port keeps no wire format and old and new replicas agree on field names.

use crate::ports::agent::{LiveEvent, StreamEnvelope};
use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// One event on the bus; `origin` is the sending replica's id (a replica drops its own).
#[derive(Debug, Serialize, Deserialize)]
pub struct BusMessage {
    pub origin: String,
    pub event: WireEvent,
}

impl BusMessage {
    pub fn new(origin: &str, event: LiveEvent) -> Self {
        Self {
            origin: origin.to_owned(),
            event: event.into(),
        }
    }

    /// The JSON text every bus carries.
    pub fn encode(&self) -> String {
        serde_json::to_string(self).expect("a bus message is plain JSON")
    }

    /// A message read off the bus, or `None` for anything that is not one.
    /// Any client of the broker can publish, and events carry `Value`s: the raw-value marker is
    /// refused first (`svc_domain::json_marker`).
    pub fn decode(bytes: &[u8]) -> Option<Self> {
        svc_domain::json_marker::refuse_raw_value_marker(bytes).ok()?;
        serde_json::from_slice(bytes).ok()
    }
}

/// The event as it travels: short keys, tagged by `k`.

#[derive(Debug, Serialize, Deserialize)]
#[serde(tag = "k", rename_all = "snake_case")]
pub enum WireEvent {
    Props {
        s: String,
        props: Value,
        epoch: u32,
    },
    /// [`LiveEvent::PropsStored`]: props too large to travel, read from the store.
    PropsStored {
        s: String,
        epoch: u32,
    },
    Data {
        s: String,
        channel: String,
        seq: i64,
        mode: String,
        payload: Value,
        complete: bool,
        timestamp: DateTime<Utc>,
    },
    /// [`LiveEvent::DataStored`]: a payload too large to travel, read from the store.
    DataStored {
        s: String,
        seq: i64,
    },
    Action {
        s: String,
    },
    Drain {
        s: String,
        ids: Vec<String>,
    },
    Render {
        topic: String,
        s: String,
        at: DateTime<Utc>,
    },
    Revoked {
        key: String,
    },
    Blueprints,
    Missed,
}

impl From<LiveEvent> for WireEvent {
    fn from(event: LiveEvent) -> Self {
        match event {
            LiveEvent::PropsUpdate {
                session_id,
                props,
                epoch,
            } => Self::Props {
                s: session_id,
                props,
                epoch,
            },
            LiveEvent::PropsStored { session_id, epoch } => Self::PropsStored { s: session_id, epoch },
            LiveEvent::DataStored { session_id, seq } => Self::DataStored { s: session_id, seq },
            LiveEvent::Data(e) => Self::Data {
                s: e.session_id,
                channel: e.channel,
                seq: e.seq,
                mode: e.mode,
                payload: e.payload,
                complete: e.complete,
                timestamp: e.timestamp,
            },
            LiveEvent::ActionStored { session_id } => Self::Action { s: session_id },
            LiveEvent::DrainAck { session_id, action_ids } => Self::Drain {
                s: session_id,
                ids: action_ids,
            },
            LiveEvent::Render {
                topic,
                session_id,
                created_at,
            } => Self::Render {
                topic,
                s: session_id,
                at: created_at,
            },
            LiveEvent::KeyRevoked { key_id } => Self::Revoked { key: key_id },
            LiveEvent::BlueprintsChanged => Self::Blueprints,
            LiveEvent::MissedEvents => Self::Missed,
        }
    }
}

impl From<WireEvent> for LiveEvent {
    fn from(event: WireEvent) -> Self {
        match event {
            WireEvent::Props { s, props, epoch } => Self::PropsUpdate {
                session_id: s,
                props,
                epoch,
            },
            WireEvent::PropsStored { s, epoch } => Self::PropsStored { session_id: s, epoch },
            WireEvent::DataStored { s, seq } => Self::DataStored { session_id: s, seq },
            WireEvent::Data {
                s,
                channel,
                seq,
                mode,
                payload,
                complete,
                timestamp,
            } => Self::Data(StreamEnvelope {
                session_id: s,
                channel,
                seq,
                mode,
                payload,
                complete,
                timestamp,
            }),
            WireEvent::Action { s } => Self::ActionStored { session_id: s },
            WireEvent::Drain { s, ids } => Self::DrainAck {
                session_id: s,
                action_ids: ids,
            },
            WireEvent::Render { topic, s, at } => Self::Render {
                topic,
                session_id: s,
                created_at: at,
            },
            WireEvent::Revoked { key } => Self::KeyRevoked { key_id: key },
            WireEvent::Blueprints => Self::BlueprintsChanged,
            WireEvent::Missed => Self::MissedEvents,
        }
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn every_event_survives_the_wire() {
        let at = DateTime::parse_from_rfc3339("2026-12-04T10:00:00.123Z")
            .unwrap()
            .to_utc();
        let events = [
            LiveEvent::PropsUpdate {
                session_id: "s".into(),
                props: json!({ "a": [1, 2] }),
                epoch: 3,
            },
            LiveEvent::Data(StreamEnvelope {
                session_id: "s".into(),
                channel: "log".into(),
                seq: 9,
                mode: "append".into(),
                payload: json!("x"),
                complete: true,
                timestamp: at,
            }),
            LiveEvent::PropsStored {
                session_id: "s".into(),
                epoch: 4,
            },
            LiveEvent::DataStored {
                session_id: "s".into(),
                seq: 10,
            },
            LiveEvent::ActionStored { session_id: "s".into() },
            LiveEvent::DrainAck {
                session_id: "s".into(),
                action_ids: vec!["0badf00d".into()],
            },
            LiveEvent::Render {
                topic: "host\u{1f}a\u{1f}b".into(),
                session_id: "s2".into(),
                created_at: at,
            },
            LiveEvent::KeyRevoked { key_id: "01K".into() },
            LiveEvent::BlueprintsChanged,
            LiveEvent::MissedEvents,
        ];
        for event in events {
            let text = BusMessage::new("o", event.clone()).encode();
            let back = BusMessage::decode(text.as_bytes()).unwrap();
            assert_eq!(back.origin, "o");
            assert_eq!(LiveEvent::from(back.event), event);
        }
    }

    #[test]
    fn an_offset_timestamp_is_read_as_utc() {
        // Earlier PostgreSQL buses wrote RFC 3339 with `+00:00`; replicas of both kinds agree.
        let raw = json!({ "origin": "o", "event": { "k": "render", "topic": "t", "s": "s", "at": "2026-11-25T10:00:00.123+00:00" } });
        let back = BusMessage::decode(raw.to_string().as_bytes()).unwrap();
        let LiveEvent::Render { created_at, .. } = LiveEvent::from(back.event) else {
            panic!("not a render event");
        };
        assert_eq!(created_at.to_rfc3339(), "2026-11-25T10:00:00.123+00:00");
    }

    /// serde_json's raw-value marker in an event's `Value` would be read as the text it holds
    /// (nested, past any stack): a message holding it is not a message.
    #[test]
    fn a_message_holding_the_raw_value_marker_is_not_a_message() {
        let event = LiveEvent::PropsUpdate {
            session_id: "s".into(),
            props: json!({ "a": [1, 2] }),
            epoch: 3,
        };
        let text = BusMessage::new("o", event).encode();
        assert!(text.contains(r#"{"a":[1,2]}"#), "{text}");
        let marked = text.replace(
            r#"{"a":[1,2]}"#,
            r#"{"$serde_json::private::RawValue":"{\"a\":[1,2]}"}"#,
        );
        assert!(BusMessage::decode(marked.as_bytes()).is_none(), "{marked}");
    }

    #[test]
    fn an_unknown_kind_is_not_an_event() {
        let raw = json!({ "origin": "o", "event": { "k": "telepathy", "s": "x" } });
        assert!(BusMessage::decode(raw.to_string().as_bytes()).is_none());
    }
}
