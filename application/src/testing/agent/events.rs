//! The in-memory store's gestures and stream deliveries (`EventRepository`), numbered per session
//! and read back newest first within a count and a byte budget, as the SQL repositories read them.

use chrono::{DateTime, Utc};
use serde_json::Value;

use super::{InMemoryAgentStore, Result};
use crate::ports::agent::{ActionEventRecord, DrainBound, EventRepository, NewActionEvent, StreamEnvelope, WindowHead};
use crate::ports::retention::ReplayWindow;
use crate::testing::lock;
use crate::testing::window_head::head_of;

#[async_trait::async_trait]
impl EventRepository for InMemoryAgentStore {
    async fn append_action(&self, event: &NewActionEvent) -> Result<(ActionEventRecord, bool)> {
        let mut state = lock(&self.0);
        if let Some(seq) = event.client_seq
            && let Some((stored, _)) = state
                .actions
                .iter()
                .find(|(a, _)| a.session_id == event.session_id && a.client_seq == Some(seq))
        {
            return Ok((stored.clone(), false));
        }
        let sequence = state
            .actions
            .iter()
            .filter(|(a, _)| a.session_id == event.session_id)
            .count() as i64
            + 1;
        let stored = ActionEventRecord {
            session_id: event.session_id.clone(),
            sequence,
            client_seq: event.client_seq,
            intent: event.intent.clone(),
            action_data: event.action_data.clone(),
            ui_context: event.ui_context.clone(),
            action_id: format!("{}-action-{sequence}", event.session_id),
            fired_at: event.fired_at,
        };
        state.actions.push((stored.clone(), false));
        Ok((stored, true))
    }

    async fn drain(&self, session_id: &str, _at: DateTime<Utc>, bound: DrainBound) -> Result<Vec<ActionEventRecord>> {
        let mut state = lock(&self.0);
        let mut taken = Vec::new();
        let mut bytes = 0;
        for (action, drained) in state.actions.iter_mut() {
            if action.session_id != session_id || *drained {
                continue;
            }
            bytes += gesture_bytes(action);
            let full = taken.len() as u64 >= bound.gestures || bytes > bound.bytes;
            if full && !taken.is_empty() {
                break;
            }
            *drained = true;
            taken.push(action.clone());
        }
        Ok(taken)
    }

    async fn append_stream(
        &self,
        session_id: &str,
        channel: &str,
        mode: &str,
        payload: &Value,
        complete: bool,
        at: DateTime<Utc>,
    ) -> Result<StreamEnvelope> {
        let mut state = lock(&self.0);
        let seq = state.streams.iter().filter(|s| s.session_id == session_id).count() as i64 + 1;
        let envelope = StreamEnvelope {
            session_id: session_id.to_owned(),
            channel: channel.to_owned(),
            seq,
            mode: mode.to_owned(),
            payload: payload.clone(),
            complete,
            timestamp: at,
        };
        state.streams.push(envelope.clone());
        Ok(envelope)
    }

    async fn streams_since(
        &self,
        session_id: &str,
        after_seq: i64,
        until: Option<i64>,
        limit: u64,
        max_payload_bytes: usize,
    ) -> Result<Vec<StreamEnvelope>> {
        let rows: Vec<StreamEnvelope> = lock(&self.0)
            .streams
            .iter()
            .filter(|s| s.session_id == session_id && s.seq > after_seq && until.is_none_or(|u| s.seq <= u))
            .cloned()
            .collect();
        Ok(newest_within(rows, limit, max_payload_bytes, payload_bytes))
    }

    async fn streams_window_head(
        &self,
        session_id: &str,
        after_seq: i64,
        window: ReplayWindow,
        read_bytes: usize,
    ) -> Result<WindowHead<StreamEnvelope>> {
        let after_cursor = lock(&self.0)
            .streams
            .iter()
            .filter(|s| s.session_id == session_id && s.seq > after_seq)
            .count();
        let whole = self
            .streams_since(session_id, after_seq, None, window.count, window.bytes)
            .await?;
        Ok(head_of(whole, after_cursor, window, read_bytes, payload_bytes))
    }

    async fn last_stream_seq(&self, session_id: &str) -> Result<i64> {
        Ok(lock(&self.0)
            .streams
            .iter()
            .filter(|s| s.session_id == session_id)
            .map(|s| s.seq)
            .max()
            .unwrap_or(0))
    }

    async fn actions_since(
        &self,
        session_id: &str,
        after_sequence: i64,
        limit: u64,
        max_bytes: usize,
    ) -> Result<Vec<ActionEventRecord>> {
        let rows: Vec<ActionEventRecord> = lock(&self.0)
            .actions
            .iter()
            .map(|(a, _)| a)
            .filter(|a| a.session_id == session_id && a.sequence > after_sequence)
            .cloned()
            .collect();
        Ok(newest_within(rows, limit, max_bytes, gesture_bytes))
    }

    async fn actions_window_head(
        &self,
        session_id: &str,
        after_sequence: i64,
        window: ReplayWindow,
        read_bytes: usize,
    ) -> Result<WindowHead<ActionEventRecord>> {
        let after_cursor = lock(&self.0)
            .actions
            .iter()
            .filter(|(a, _)| a.session_id == session_id && a.sequence > after_sequence)
            .count();
        let whole = self
            .actions_since(session_id, after_sequence, window.count, window.bytes)
            .await?;
        Ok(head_of(whole, after_cursor, window, read_bytes, gesture_bytes))
    }
}

/// A gesture's stored size, as the SQL repositories measure it: action data and context as JSON.
fn gesture_bytes(action: &ActionEventRecord) -> usize {
    action.action_data.to_string().len() + action.ui_context.to_string().len()
}

/// A delivery's stored size, as the SQL repositories measure it: its payload as JSON.
fn payload_bytes(envelope: &StreamEnvelope) -> usize {
    envelope.payload.to_string().len()
}

/// The newest of `rows` (oldest first), oldest first: at most `limit` of them and no more than
/// `max_bytes` of `size` together (the newest always), as the SQL repositories read a replay.
fn newest_within<T>(rows: Vec<T>, limit: u64, max_bytes: usize, size: impl Fn(&T) -> usize) -> Vec<T> {
    let mut newest = Vec::new();
    let mut bytes = 0;
    for row in rows.into_iter().rev().take(limit as usize) {
        bytes += size(&row);
        if bytes > max_bytes && !newest.is_empty() {
            break;
        }
        newest.push(row);
    }
    newest.reverse();
    newest
}
