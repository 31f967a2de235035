//! What the live channel needs from the agent plane: the subscribe snapshot, stored gestures,
//! host observations and replay.

use serde_json::{Map, Value};
use svc_domain::contract::{Contract, EntrySchema};
use svc_domain::session::SessionStatus;

use std::future::Future;
use std::sync::Arc;

use super::live_reads::{SharedFrames, SharedStreamReads};
use super::{AgentError, Caller, ComponentCode, SchemaCache, SessionAccess};
use crate::ports::agent::{
    ActionEventRecord, BlueprintRepository, EventBus, EventRepository, LiveEvent, NewActionEvent, SessionRecord,
    SessionRepository, StreamEnvelope,
};
use crate::ports::retention::ReplayWindow;

/// Stored bytes (their JSON) one read of past events carries at most: a stream replay's payloads,
/// a gesture replay's or a `svc_consume` drain's action data and context. `svc_emit` takes
/// payloads up to a request body and a gesture carries its whole context, so a replay of the
/// whole buffer of those, once per `subscribe` frame or poll, was gigabytes held at once.
pub const REPLAY_MAX_PAYLOAD_BYTES: usize = 8 * 1024 * 1024;

/// Everything the `ack` frame carries.
#[derive(Debug, Clone)]
pub struct LiveSnapshot {
    pub session: Arc<SessionRecord>,
    pub component_code: Option<ComponentCode>,
    pub variant: svc_domain::session::SessionVariant,
    pub last_stream_seq: i64,
}

/// What mounting a session's card needs (`resources/read`): the snapshot without the stream
/// cursor, which only a subscriber uses (one statement fewer per read on a server database).
#[derive(Debug, Clone)]
pub struct MountSnapshot {
    pub session: Arc<SessionRecord>,
    pub component_code: Option<ComponentCode>,
    pub variant: svc_domain::session::SessionVariant,
}

/// A replay: the frames to send, and whether the cursor was older than the buffer.
#[derive(Debug, Clone)]
pub struct Replay<T> {
    pub items: Vec<T>,
    pub gap: bool,
    /// Only the oldest were read (a replay's head): newer items wait for a read from past these.
    pub cut: bool,
}

/// A gesture as the card sent it.
#[derive(Debug, Clone)]
pub struct IncomingAction {
    pub intent: String,
    pub data: Value,
    pub ui_context: Option<Value>,
    pub client_seq: Option<i64>,
}

/// Key of the host observation inside the context snapshot.
pub(super) const HOST_KEY: &str = "_host";

/// What the live channel needs from the agent plane.
#[derive(Clone)]
pub struct LiveService {
    pub access: SessionAccess,
    pub sessions: Arc<dyn SessionRepository>,
    pub events: Arc<dyn EventRepository>,
    pub blueprints: Arc<dyn BlueprintRepository>,
    pub bus: Arc<dyn EventBus>,
    pub schemas: SchemaCache,
    /// Stream envelopes and gestures one live subscriber may replay; an older cursor is a gap.
    pub replay_buffer: u64,
    /// The live tail's reads every socket of a session makes at once (a large event's marker).
    pub shared_reads: SharedStreamReads,
}

impl LiveService {
    /// The session a live subscriber of `caller`'s app binds to.
    pub async fn live_snapshot(&self, caller: &Caller, session_id: &str) -> Result<LiveSnapshot, AgentError> {
        let MountSnapshot {
            session,
            component_code,
            variant,
        } = self.mount_snapshot(caller, session_id).await?;
        let last_stream_seq = self.events.last_stream_seq(session_id).await?;
        Ok(LiveSnapshot {
            session,
            component_code,
            variant,
            last_stream_seq,
        })
    }

    /// The session `caller`'s app mounts, and its component.
    pub async fn mount_snapshot(&self, caller: &Caller, session_id: &str) -> Result<MountSnapshot, AgentError> {
        let session = self.access.owned(caller, session_id).await?;
        let blueprint = match &session.blueprint_id {
            Some(id) => self.blueprints.get(id).await?,
            None => None,
        };
        let variant = blueprint
            .as_ref()
            .map_or(svc_domain::session::SessionVariant::Render, |bp| bp.session_variant());
        Ok(MountSnapshot {
            session,
            component_code: blueprint.map(ComponentCode::from),
            variant,
        })
    }

    /// Live events of a topic: a session id, or a host conversation's topic.
    pub fn live_events(&self, topic: &str) -> tokio::sync::broadcast::Receiver<crate::ports::agent::Published> {
        self.bus.subscribe(topic)
    }

    /// Validates a gesture against the contract and stores it durably (deduplicated by
    /// `clientSeq`); a waiting `svc_consume` wakes. Returns the stored event and whether it is new.
    pub async fn record_action(
        &self,
        caller: &Caller,
        session_id: &str,
        action: IncomingAction,
    ) -> Result<(ActionEventRecord, bool), AgentError> {
        let session = self.access.owned(caller, session_id).await?;
        let now = self.access.clock.now();
        if session.head.status_at(now) != SessionStatus::Active {
            return Err(AgentError::SessionNotFound);
        }
        let contract = &session.contract;
        let intent = EntrySchema::Action(action.intent.clone());
        if contract.entry_schema(&intent).is_none() {
            return Err(AgentError::invalid(
                "payload.action",
                format!("`{}` is not an intent of the contract's actionSpec", action.intent),
            ));
        }
        let action_data = self
            .schemas
            .check_entry(contract, intent, action.data)
            .await?
            .map_err(|violations| AgentError::ContractViolation {
                target: "actionData".into(),
                violations,
            })?;
        let ui_context = self.checked_context(contract, &session, action.ui_context).await?;
        let event = NewActionEvent {
            session_id: session_id.to_owned(),
            client_seq: action.client_seq,
            intent: action.intent,
            action_data,
            ui_context: ui_context.clone(),
            fired_at: now,
        };
        let (stored, fresh) = self.events.append_action(&event).await?;
        if fresh {
            let mut snapshot = session.context_snapshot.as_object().cloned().unwrap_or_default();
            snapshot.extend(ui_context.as_object().cloned().unwrap_or_default());
            self.sessions
                .set_context_snapshot(session_id, &Value::Object(snapshot))
                .await?;
            self.bus.publish(LiveEvent::ActionStored {
                session_id: session_id.to_owned(),
            });
        }
        Ok((stored, fresh))
    }

    /// The gesture-time context: the stored snapshot overlaid with the card's, each slot checked.
    async fn checked_context(
        &self,
        contract: &Contract,
        session: &SessionRecord,
        sent: Option<Value>,
    ) -> Result<Value, AgentError> {
        let mut context: Map<String, Value> = session
            .context_snapshot
            .as_object()
            .map(|m| {
                m.iter()
                    .filter(|(k, _)| k.as_str() != HOST_KEY)
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect()
            })
            .unwrap_or_default();
        let slots = contract.context_slots();
        if let Some(Value::Object(sent)) = sent {
            for (slot, value) in sent {
                if !slots.contains(&slot) {
                    continue;
                }
                let schema = EntrySchema::Context(slot.clone());
                let value = self
                    .schemas
                    .check_entry(contract, schema, value)
                    .await?
                    .map_err(|violations| AgentError::ContractViolation {
                        target: format!("uiContext/{slot}"),
                        violations,
                    })?;
                context.insert(slot, value);
            }
        }
        Ok(Value::Object(context))
    }

    /// `svc_runtime_sync_context`: validates and stores the card's slot values; returns the snapshot.
    pub async fn sync_context(&self, caller: &Caller, session_id: &str, context: Value) -> Result<Value, AgentError> {
        let session = self.access.unexpired(caller, session_id).await?;
        let contract = &session.contract;
        let slots = self.checked_context(contract, &session, Some(context)).await?;
        let mut snapshot = session.context_snapshot.as_object().cloned().unwrap_or_default();
        snapshot.extend(slots.as_object().cloned().unwrap_or_default());
        self.sessions
            .set_context_snapshot(session_id, &Value::Object(snapshot))
            .await?;
        Ok(slots)
    }

    /// Stores the host context a card observed; `svc_consume` echoes it as `client`.
    pub async fn observe_host_context(
        &self,
        caller: &Caller,
        session_id: &str,
        observed: Value,
    ) -> Result<(), AgentError> {
        let session = self.access.owned(caller, session_id).await?;
        let mut snapshot = session.context_snapshot.as_object().cloned().unwrap_or_default();
        snapshot.insert(HOST_KEY.to_owned(), observed);
        self.sessions
            .set_context_snapshot(session_id, &Value::Object(snapshot))
            .await?;
        Ok(())
    }

    /// Stream envelopes after `after_seq`: the newest `replay_buffer` of them, and no more than
    /// [`REPLAY_MAX_PAYLOAD_BYTES`] of payloads (the newest always). Sequence numbers of a session
    /// have no holes, so envelopes left out either way are a gap.
    pub async fn replay_streams(&self, session_id: &str, after_seq: i64) -> Result<Replay<StreamEnvelope>, AgentError> {
        self.replay_streams_until(session_id, after_seq, None).await
    }

    /// [`LiveService::replay_streams`] of the envelopes up to `until` (a live tail filling what
    /// it missed before the envelope it just heard).
    pub async fn replay_streams_until(
        &self,
        session_id: &str,
        after_seq: i64,
        until: Option<i64>,
    ) -> Result<Replay<StreamEnvelope>, AgentError> {
        let fetched = self
            .events
            .streams_since(
                session_id,
                after_seq,
                until,
                self.replay_buffer + 1,
                REPLAY_MAX_PAYLOAD_BYTES,
            )
            .await?;
        let mut replay = self.bounded(fetched);
        replay.gap |= starts_after(replay.items.first().map(|oldest| oldest.seq), after_seq);
        Ok(replay)
    }

    /// [`LiveService::replay_streams_until`], rendered by `render`: read and rendered once for all
    /// the callers asking for the same envelopes at about the same time (every socket of a
    /// session hearing a large event's marker; [`SharedStreamReads`]). The caller that reads
    /// awaits `share` first (its transport's share of a read budget) and holds it until the
    /// frames are rendered; the others wait for those frames and take no share. Every caller must
    /// pass the same renderer.
    pub async fn stream_frames_until<S>(
        &self,
        session_id: &str,
        after_seq: i64,
        until: i64,
        share: impl Future<Output = S>,
        render: impl FnOnce(Replay<StreamEnvelope>) -> Vec<String>,
    ) -> Result<SharedFrames, AgentError> {
        let read = || async move {
            let _share = share.await;
            let replay = self.replay_streams_until(session_id, after_seq, Some(until)).await?;
            Ok(render(replay))
        };
        self.shared_reads.frames(session_id, after_seq, until, read).await
    }

    /// The oldest envelopes of [`LiveService::replay_streams`]' replay, only as far as
    /// `read_bytes` of payload JSON (the first always): a reader that carries no more at once
    /// (a polling answer) reads no more of a window of megabytes. `cut` says newer ones wait.
    pub async fn replay_streams_head(
        &self,
        session_id: &str,
        after_seq: i64,
        read_bytes: usize,
    ) -> Result<Replay<StreamEnvelope>, AgentError> {
        let head = self
            .events
            .streams_window_head(session_id, after_seq, self.window(), read_bytes)
            .await?;
        let gap = head.overflowed || starts_after(head.items.first().map(|oldest| oldest.seq), after_seq);
        Ok(Replay {
            items: head.items,
            gap,
            cut: head.cut,
        })
    }

    /// Gestures after `after_sequence`: the newest `replay_buffer` of them, and no more than
    /// [`REPLAY_MAX_PAYLOAD_BYTES`] of action data and context (the newest always). A session's
    /// gesture sequence has no holes either, so gestures left out either way are a gap.
    pub async fn replay_actions(
        &self,
        session_id: &str,
        after_sequence: i64,
    ) -> Result<Replay<ActionEventRecord>, AgentError> {
        let fetched = self
            .events
            .actions_since(
                session_id,
                after_sequence,
                self.replay_buffer + 1,
                REPLAY_MAX_PAYLOAD_BYTES,
            )
            .await?;
        let mut replay = self.bounded(fetched);
        replay.gap |= starts_after(replay.items.first().map(|oldest| oldest.sequence), after_sequence);
        Ok(replay)
    }

    /// The oldest gestures of [`LiveService::replay_actions`]' replay, only as far as
    /// `read_bytes` of action data and context (the first always), as
    /// [`LiveService::replay_streams_head`] reads envelopes.
    pub async fn replay_actions_head(
        &self,
        session_id: &str,
        after_sequence: i64,
        read_bytes: usize,
    ) -> Result<Replay<ActionEventRecord>, AgentError> {
        let head = self
            .events
            .actions_window_head(session_id, after_sequence, self.window(), read_bytes)
            .await?;
        let oldest = head.items.first().map(|oldest| oldest.sequence);
        Ok(Replay {
            gap: head.overflowed || starts_after(oldest, after_sequence),
            items: head.items,
            cut: head.cut,
        })
    }

    /// What a replay serves: the newest `replay_buffer` items, within [`REPLAY_MAX_PAYLOAD_BYTES`].
    fn window(&self) -> ReplayWindow {
        ReplayWindow {
            count: self.replay_buffer,
            bytes: REPLAY_MAX_PAYLOAD_BYTES,
        }
    }

    /// The store returns one item more than the buffer when the cursor is older than the buffer:
    /// that is the gap, and the oldest item goes.
    fn bounded<T>(&self, mut items: Vec<T>) -> Replay<T> {
        let gap = items.len() as u64 > self.replay_buffer;
        if gap {
            items.remove(0);
        }
        Replay { items, gap, cut: false }
    }
}

/// Whether a replay whose oldest item is at `oldest` left out items after `after`: positions of
/// a session have no holes and start at 1 (a cursor below 0 asks for everything).
fn starts_after(oldest: Option<i64>, after: i64) -> bool {
    let first_wanted = after.max(0).saturating_add(1);
    oldest.is_some_and(|oldest| oldest > first_wanted)
}

impl SessionRecord {
    /// The contextSpec snapshot without the host observation.
    pub fn ui_context(&self) -> Value {
        Value::Object(
            self.context_snapshot
                .as_object()
                .map(|m| {
                    m.iter()
                        .filter(|(k, _)| k.as_str() != HOST_KEY)
                        .map(|(k, v)| (k.clone(), v.clone()))
                        .collect()
                })
                .unwrap_or_default(),
        )
    }
}
