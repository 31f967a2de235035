//! The in-memory store's handshakes and sessions (`HandshakeRepository`, `SessionRepository`):
//! one file because consuming a handshake for a session writes both under the one lock.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;
use svc_domain::session::{FrozenCard, SessionHead};

use super::{InMemoryAgentStore, Result};
use crate::ports::RepositoryError;
use crate::ports::agent::{
    HandshakeRecord, HandshakeRepository, SessionListing, SessionQuery, SessionRecord, SessionRepository,
};
use crate::testing::lock;

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
