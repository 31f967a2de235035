//! In-memory fakes of the agent plane's ports: one store for apps, handshakes, sessions, events
//! and blueprints (one mutex, so `consume` and `drain` are atomic as the SQL adapter's are).
//! [`AgentFakes`] wires it and the fakes of `agent_pipeline.rs` into
//! [`AgentPorts`] and builds the use cases over them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use svc_domain::session::{FrozenCard, SessionHead};

use super::agent_pipeline::{LocalBus, ScriptedGenerator, StubCompiler};
use super::window_head::head_of;
use super::{ManualClock, SequentialIds, lock};
use crate::ports::agent::{
    ActionEventRecord, AppRecord, AppRepository, BlueprintRecord, BlueprintRepository, DrainBound, EventRepository,
    HandshakeRecord, HandshakeRepository, NewActionEvent, NewAppId, SessionListing, SessionQuery, SessionRecord,
    SessionRepository, StreamEnvelope, WindowHead,
};
use crate::ports::blueprints::{
    BlueprintChange, BlueprintFilter, BlueprintListing, BlueprintSummary, ListingPosition, SHARED_POOL_APP_ID,
    StoredEmbedding,
};
use crate::ports::retention::ReplayWindow;
use crate::ports::{BoundedInsert, RepositoryError};
use crate::services::agent::{AgentPorts, AgentService, AgentSettings, Caller, GenerationQueue};

type Result<T> = std::result::Result<T, RepositoryError>;

#[derive(Default)]
struct AgentState {
    apps: Vec<AppRecord>,
    defaults: HashMap<String, String>,
    handshakes: HashMap<String, HandshakeRecord>,
    sessions: HashMap<String, SessionRecord>,
    /// In insertion order, which is creation order.
    session_order: Vec<String>,
    frozen: HashMap<(String, u32), Value>,
    actions: Vec<(ActionEventRecord, bool)>,
    streams: Vec<StreamEnvelope>,
    /// In insertion order, which is creation order.
    blueprints: Vec<BlueprintRecord>,
}

/// Every agent-plane repository, in memory.
#[derive(Default)]
pub struct InMemoryAgentStore(Mutex<AgentState>);

impl InMemoryAgentStore {
    /// Sessions stored, in creation order.
    pub fn sessions(&self) -> Vec<SessionRecord> {
        let state = lock(&self.0);
        state
            .session_order
            .iter()
            .map(|id| state.sessions[id].clone())
            .collect()
    }

    /// Blueprints stored, in creation order.
    pub fn blueprints(&self) -> Vec<BlueprintRecord> {
        lock(&self.0).blueprints.clone()
    }

    /// Gestures stored and not drained yet.
    pub fn undrained(&self, session_id: &str) -> usize {
        lock(&self.0)
            .actions
            .iter()
            .filter(|(a, drained)| a.session_id == session_id && !drained)
            .count()
    }

    /// Stream deliveries of a session's channel, oldest first.
    pub fn deliveries(&self, session_id: &str, channel: &str) -> Vec<StreamEnvelope> {
        lock(&self.0)
            .streams
            .iter()
            .filter(|s| s.session_id == session_id && s.channel == channel)
            .cloned()
            .collect()
    }
}

#[async_trait::async_trait]
impl AppRepository for InMemoryAgentStore {
    async fn default_app(
        &self,
        owner_id: &str,
        new_app_id: NewAppId<'_>,
        now: DateTime<Utc>,
    ) -> Result<Arc<AppRecord>> {
        let mut state = lock(&self.0);
        if let Some(id) = state.defaults.get(owner_id).cloned() {
            return Ok(Arc::new(
                state
                    .apps
                    .iter()
                    .find(|a| a.app_id == id)
                    .cloned()
                    .expect("default app"),
            ));
        }
        let new_app_id = new_app_id();
        let app = AppRecord::new(new_app_id.clone(), owner_id.to_owned(), None, now).expect("default name");
        state.apps.push(app.clone());
        state.defaults.insert(owner_id.to_owned(), new_app_id);
        Ok(Arc::new(app))
    }

    async fn get(&self, app_id: &str) -> Result<Option<AppRecord>> {
        Ok(lock(&self.0).apps.iter().find(|a| a.app_id == app_id).cloned())
    }

    async fn list_by_owner(&self, owner_id: &str) -> Result<Vec<AppRecord>> {
        Ok(lock(&self.0)
            .apps
            .iter()
            .filter(|a| a.owner_id == owner_id)
            .cloned()
            .collect())
    }

    async fn insert(&self, record: &AppRecord) -> Result<()> {
        let mut state = lock(&self.0);
        if state.apps.iter().any(|a| a.app_id == record.app_id) {
            return Err(RepositoryError::Conflict(record.app_id.clone()));
        }
        state.apps.push(record.clone());
        Ok(())
    }

    async fn insert_bounded(&self, record: &AppRecord, max: u64) -> Result<BoundedInsert> {
        let mut state = lock(&self.0);
        let stored = state.apps.iter().filter(|a| a.owner_id == record.owner_id).count() as u64;
        if stored >= max {
            return Ok(BoundedInsert::Full { stored });
        }
        if state.apps.iter().any(|a| a.app_id == record.app_id) {
            return Err(RepositoryError::Conflict(record.app_id.clone()));
        }
        state.apps.push(record.clone());
        Ok(BoundedInsert::Inserted)
    }

    async fn update(&self, record: &AppRecord) -> Result<bool> {
        let mut state = lock(&self.0);
        match state
            .apps
            .iter_mut()
            .find(|a| a.app_id == record.app_id && a.owner_id == record.owner_id)
        {
            Some(app) => {
                app.display_name = record.display_name.clone();
                app.system_prompt = record.system_prompt.clone();
                app.updated_at = record.updated_at;
                Ok(true)
            }
            None => Ok(false),
        }
    }

    async fn set_default(&self, owner_id: &str, app_id: &str) -> Result<bool> {
        let mut state = lock(&self.0);
        if !state.apps.iter().any(|a| a.app_id == app_id && a.owner_id == owner_id) {
            return Ok(false);
        }
        state.defaults.insert(owner_id.to_owned(), app_id.to_owned());
        Ok(true)
    }

    async fn delete(&self, owner_id: &str, app_id: &str) -> Result<()> {
        let mut state = lock(&self.0);
        state.apps.retain(|a| !(a.app_id == app_id && a.owner_id == owner_id));
        if state.defaults.get(owner_id).is_some_and(|d| d == app_id) {
            state.defaults.remove(owner_id);
            if let Some(oldest) = state
                .apps
                .iter()
                .find(|a| a.owner_id == owner_id)
                .map(|a| a.app_id.clone())
            {
                state.defaults.insert(owner_id.to_owned(), oldest);
            }
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl HandshakeRepository for InMemoryAgentStore {
    async fn insert(&self, record: &HandshakeRecord) -> Result<()> {
        lock(&self.0)
            .handshakes
            .insert(record.handshake_id.clone(), record.clone());
        Ok(())
    }

    async fn get(&self, handshake_id: &str) -> Result<Option<HandshakeRecord>> {
        Ok(lock(&self.0).handshakes.get(handshake_id).cloned())
    }

    async fn consume(&self, handshake_id: &str, at: DateTime<Utc>) -> Result<bool> {
        let mut state = lock(&self.0);
        match state.handshakes.get_mut(handshake_id) {
            Some(h) if h.lifecycle.consumed_at.is_none() => {
                h.lifecycle.consumed_at = Some(at);
                Ok(true)
            }
            _ => Ok(false),
        }
    }

    async fn release(&self, handshake_id: &str) -> Result<()> {
        if let Some(h) = lock(&self.0).handshakes.get_mut(handshake_id) {
            h.lifecycle.consumed_at = None;
        }
        Ok(())
    }

    async fn consume_for_session(
        &self,
        handshake_id: &str,
        at: DateTime<Utc>,
        session: &SessionRecord,
    ) -> Result<bool> {
        let mut state = lock(&self.0);
        // As in SQL: the consume first, then the insert, undone together if the insert fails.
        if !matches!(state.handshakes.get(handshake_id), Some(h) if h.lifecycle.consumed_at.is_none()) {
            return Ok(false);
        }
        if state.sessions.contains_key(&session.session_id) {
            return Err(RepositoryError::Conflict(session.session_id.clone()));
        }
        if let Some(h) = state.handshakes.get_mut(handshake_id) {
            h.lifecycle.consumed_at = Some(at);
        }
        state.session_order.push(session.session_id.clone());
        state.sessions.insert(session.session_id.clone(), session.clone());
        Ok(true)
    }
}

#[async_trait::async_trait]
impl SessionRepository for InMemoryAgentStore {
    async fn insert(&self, record: &SessionRecord) -> Result<()> {
        let mut state = lock(&self.0);
        if state.sessions.contains_key(&record.session_id) {
            return Err(RepositoryError::Conflict(record.session_id.clone()));
        }
        state.session_order.push(record.session_id.clone());
        state.sessions.insert(record.session_id.clone(), record.clone());
        Ok(())
    }

    async fn get(&self, session_id: &str) -> Result<Option<SessionRecord>> {
        Ok(lock(&self.0).sessions.get(session_id).cloned())
    }

    /// As a server database answers it: both from one look.
    async fn get_with_undrained(&self, session_id: &str) -> Result<Option<(Arc<SessionRecord>, Option<bool>)>> {
        let state = lock(&self.0);
        let undrained = state
            .actions
            .iter()
            .any(|(a, drained)| a.session_id == session_id && !drained);
        Ok(state
            .sessions
            .get(session_id)
            .map(|session| (Arc::new(session.clone()), Some(undrained))))
    }

    async fn save_head(
        &self,
        session_id: &str,
        revision: i64,
        head: &SessionHead,
        frozen: Option<&FrozenCard>,
    ) -> Result<bool> {
        let mut state = lock(&self.0);
        let Some(session) = state.sessions.get_mut(session_id) else {
            return Ok(false);
        };
        if session.revision != revision {
            return Ok(false);
        }
        session.head = head.clone();
        session.revision += 1;
        if let Some(card) = frozen {
            state
                .frozen
                .insert((session_id.to_owned(), card.epoch), card.props.clone());
        }
        Ok(true)
    }

    async fn frozen_props(&self, session_id: &str, epoch: u32) -> Result<Option<Value>> {
        Ok(lock(&self.0).frozen.get(&(session_id.to_owned(), epoch)).cloned())
    }

    async fn set_context_snapshot(&self, session_id: &str, snapshot: &Value) -> Result<()> {
        if let Some(s) = lock(&self.0).sessions.get_mut(session_id) {
            s.context_snapshot = snapshot.clone();
        }
        Ok(())
    }

    async fn list(&self, app_id: &str, query: &SessionQuery) -> Result<Vec<SessionListing>> {
        let state = lock(&self.0);
        let rows: Vec<SessionListing> = state
            .session_order
            .iter()
            .map(|id| &state.sessions[id])
            .filter(|s| s.app_id == app_id)
            .filter(|s| query.host_name.is_none() || s.host.host_name == query.host_name)
            .filter(|s| query.host_session_id.is_none() || s.host.host_session_id == query.host_session_id)
            .map(SessionListing::of)
            .collect();
        let skip = rows.len().saturating_sub(query.limit as usize);
        Ok(rows.into_iter().skip(skip).collect())
    }
}

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
        let mut newest = Vec::new();
        let mut bytes = 0;
        for row in rows.into_iter().rev().take(limit as usize) {
            bytes += row.payload.to_string().len();
            if bytes > max_payload_bytes && !newest.is_empty() {
                break;
            }
            newest.push(row);
        }
        newest.reverse();
        Ok(newest)
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
        Ok(head_of(whole, after_cursor, window, read_bytes, |e| {
            e.payload.to_string().len()
        }))
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
        let mut newest = Vec::new();
        let mut bytes = 0;
        for row in rows.into_iter().rev().take(limit as usize) {
            bytes += gesture_bytes(&row);
            if bytes > max_bytes && !newest.is_empty() {
                break;
            }
            newest.push(row);
        }
        newest.reverse();
        Ok(newest)
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

fn visible_to(record: &BlueprintRecord, app_id: &str) -> bool {
    record.app_id == app_id || record.app_id == SHARED_POOL_APP_ID
}

#[async_trait::async_trait]
impl BlueprintRepository for InMemoryAgentStore {
    async fn insert(&self, record: &BlueprintRecord) -> Result<()> {
        let mut state = lock(&self.0);
        if state.blueprints.iter().any(|b| b.blueprint_id == record.blueprint_id) {
            return Err(RepositoryError::Conflict(record.blueprint_id.clone()));
        }
        state.blueprints.push(record.clone());
        Ok(())
    }

    async fn insert_bounded(&self, record: &BlueprintRecord, max: u64) -> Result<BoundedInsert> {
        // One lock for the count and the insert, as the SQL adapter's one transaction.
        let mut state = lock(&self.0);
        let stored = state.blueprints.iter().filter(|b| b.app_id == record.app_id).count() as u64;
        if stored >= max {
            return Ok(BoundedInsert::Full { stored });
        }
        if state.blueprints.iter().any(|b| b.blueprint_id == record.blueprint_id) {
            return Err(RepositoryError::Conflict(record.blueprint_id.clone()));
        }
        state.blueprints.push(record.clone());
        Ok(BoundedInsert::Inserted)
    }

    async fn insert_if_absent(&self, record: &BlueprintRecord) -> Result<bool> {
        Ok(BlueprintRepository::insert(self, record).await.is_ok())
    }

    async fn operator_default_id(&self, app_id: &str, contract_hash: &str) -> Result<Option<String>> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .find(|b| {
                b.app_id == app_id && b.contract_hash == contract_hash && b.is_operator_default && b.is_servable()
            })
            .map(|b| b.blueprint_id.clone()))
    }

    async fn upsert(&self, record: &BlueprintRecord) -> Result<()> {
        let mut state = lock(&self.0);
        state.blueprints.retain(|b| b.blueprint_id != record.blueprint_id);
        state.blueprints.push(record.clone());
        Ok(())
    }

    async fn get(&self, blueprint_id: &str) -> Result<Option<Arc<BlueprintRecord>>> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .find(|b| b.blueprint_id == blueprint_id)
            .cloned()
            .map(Arc::new))
    }

    async fn find_exact(
        &self,
        app_id: &str,
        intent: &str,
        contract_hash: &str,
        variant_key: &str,
    ) -> Result<Option<Arc<BlueprintRecord>>> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .rev()
            .find(|b| {
                visible_to(b, app_id)
                    && b.intent == intent
                    && b.contract_hash == contract_hash
                    && b.variant_key == variant_key
            })
            .cloned()
            .map(Arc::new))
    }

    async fn intent_cached(&self, app_id: &str, intent: &str) -> Result<bool> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .any(|b| visible_to(b, app_id) && b.intent == intent))
    }

    async fn list(&self, filter: &BlueprintFilter) -> Result<Vec<BlueprintRecord>> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .filter(|b| filter.app_ids.as_ref().is_none_or(|ids| ids.contains(&b.app_id)))
            .filter(|b| filter.contract_hash.as_ref().is_none_or(|h| *h == b.contract_hash))
            .filter(|b| filter.generator.as_ref().is_none_or(|g| *g == b.generator))
            .filter(|b| !filter.featured_only || b.featured)
            .cloned()
            .collect())
    }

    async fn list_page(
        &self,
        filter: &BlueprintFilter,
        after: Option<&ListingPosition>,
        limit: u64,
    ) -> Result<Vec<BlueprintListing>> {
        let mut rows: Vec<BlueprintListing> = BlueprintRepository::list(self, filter)
            .await?
            .iter()
            .map(BlueprintRecord::listing)
            .collect();
        let key = |p: &ListingPosition| (p.created_at, p.blueprint_id.clone());
        rows.sort_by_key(|r| key(&r.position()));
        rows.retain(|r| after.is_none_or(|after| key(&r.position()) > key(after)));
        rows.truncate(usize::try_from(limit).unwrap_or(usize::MAX));
        Ok(rows)
    }

    async fn count_in_app(&self, app_id: &str) -> Result<u64> {
        Ok(lock(&self.0).blueprints.iter().filter(|b| b.app_id == app_id).count() as u64)
    }

    async fn summaries(&self, _since: Option<DateTime<Utc>>) -> Result<Vec<BlueprintSummary>> {
        Ok(Vec::new())
    }

    async fn ids(&self) -> Result<Vec<String>> {
        Ok(lock(&self.0)
            .blueprints
            .iter()
            .map(|b| b.blueprint_id.clone())
            .collect())
    }

    async fn set_embedding(&self, blueprint_id: &str, embedding: &StoredEmbedding) -> Result<()> {
        if let Some(b) = lock(&self.0)
            .blueprints
            .iter_mut()
            .find(|b| b.blueprint_id == blueprint_id)
        {
            b.embedding = Some(embedding.clone());
        }
        Ok(())
    }

    async fn update(
        &self,
        app_id: &str,
        blueprint_id: &str,
        change: &BlueprintChange,
        at: DateTime<Utc>,
    ) -> Result<bool> {
        let mut state = lock(&self.0);
        let Some(b) = state
            .blueprints
            .iter_mut()
            .find(|b| b.blueprint_id == blueprint_id && b.app_id == app_id)
        else {
            return Ok(false);
        };
        if let Some((variance, key)) = &change.variance {
            b.variance = variance.clone();
            b.variant_key = key.clone();
        }
        if let Some(flag) = change.is_operator_default {
            b.is_operator_default = flag;
        }
        b.updated_at = at;
        Ok(true)
    }

    async fn delete(&self, app_id: &str, blueprint_id: &str) -> Result<bool> {
        let mut state = lock(&self.0);
        let before = state.blueprints.len();
        state
            .blueprints
            .retain(|b| !(b.blueprint_id == blueprint_id && b.app_id == app_id));
        Ok(state.blueprints.len() != before)
    }
}

/// The agent plane's fakes, wired together.
#[derive(Clone, Default)]
pub struct AgentFakes {
    pub clock: Arc<ManualClock>,
    pub ids: Arc<SequentialIds>,
    pub store: Arc<InMemoryAgentStore>,
    pub bus: Arc<LocalBus>,
    pub generator: Arc<ScriptedGenerator>,
    pub compiler: Arc<StubCompiler>,
}

impl AgentFakes {
    pub fn ports(&self) -> AgentPorts {
        AgentPorts {
            clock: self.clock.clone(),
            ids: self.ids.clone(),
            apps: self.store.clone(),
            handshakes: self.store.clone(),
            sessions: self.store.clone(),
            events: self.store.clone(),
            blueprints: self.store.clone(),
            bus: self.bus.clone(),
            generator: self.generator.clone(),
            compiler: self.compiler.clone(),
        }
    }

    pub fn settings() -> AgentSettings {
        AgentSettings {
            default_session_ttl_seconds: 3600,
            model_registry: vec!["openai:gpt-4.1".into()],
            available_theme_ids: Vec::new(),
            default_theme_id: svc_domain::themes::catalog()[0].id.clone(),
            replay_buffer: 100,
        }
    }

    /// The facade over the fakes, with a queue of two running and two waiting generations.
    pub fn service(&self) -> AgentService {
        AgentService::new(
            self.ports(),
            Self::settings(),
            GenerationQueue::new(2, 2, Duration::from_secs(5)),
        )
    }

    pub fn caller(app_id: &str) -> Caller {
        Caller {
            principal_id: format!("user-of-{app_id}"),
            app_id: app_id.to_owned(),
            key_id: None,
        }
    }
}
