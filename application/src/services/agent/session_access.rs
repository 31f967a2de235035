//! The one rule for reading a caller's session: a missing, foreign or (for agent and runtime
//! tools) expired session answers alike, so existence never leaks.

use std::sync::Arc;

use svc_domain::session::SessionStatus;

use super::{AgentError, Caller};
use crate::ports::Clock;
use crate::ports::agent::{SessionRecord, SessionRepository};

/// Longer than any session id this server issues (a UUID, 36 characters), with room to spare.
const MAX_SESSION_ID_BYTES: usize = 128;

/// Whether `session_id` could name a session: one that cannot is answered as missing without a
/// look, and never becomes a key the server keeps (a long-poll's topic on the event bus).
pub fn could_name_a_session(session_id: &str) -> bool {
    !session_id.is_empty() && session_id.len() <= MAX_SESSION_ID_BYTES
}

#[derive(Clone)]
pub struct SessionAccess {
    pub(super) sessions: Arc<dyn SessionRepository>,
    pub(super) clock: Arc<dyn Clock>,
}

impl SessionAccess {
    pub fn new(sessions: Arc<dyn SessionRepository>, clock: Arc<dyn Clock>) -> Self {
        Self { sessions, clock }
    }

    /// The caller's session, or `SessionNotFound` for a missing or foreign one alike. Shared with
    /// the store's kept row where it keeps one: a caller that changes it takes its own copy.
    pub async fn owned(&self, caller: &Caller, session_id: &str) -> Result<Arc<SessionRecord>, AgentError> {
        if !could_name_a_session(session_id) {
            return Err(AgentError::SessionNotFound);
        }
        match self.sessions.get_shared(session_id).await? {
            Some(s) if s.app_id == caller.app_id => Ok(s),
            _ => Err(AgentError::SessionNotFound),
        }
    }

    /// [`SessionAccess::owned`], and whether a gesture waits to be drained when the store knows
    /// it from the same look.
    pub async fn owned_with_undrained(
        &self,
        caller: &Caller,
        session_id: &str,
    ) -> Result<(Arc<SessionRecord>, Option<bool>), AgentError> {
        if !could_name_a_session(session_id) {
            return Err(AgentError::SessionNotFound);
        }
        match self.sessions.get_with_undrained(session_id).await? {
            Some((s, undrained)) if s.app_id == caller.app_id => Ok((s, undrained)),
            _ => Err(AgentError::SessionNotFound),
        }
    }

    /// The caller's session while it takes new props and stream payloads (`svc_update`,
    /// `svc_amend`, `svc_emit`): an expired one, and a failed render that never took props, answer
    /// like a missing one before any argument is checked, so the arguments never tell them apart.
    pub async fn active(&self, caller: &Caller, session_id: &str) -> Result<Arc<SessionRecord>, AgentError> {
        let session = self.owned(caller, session_id).await?;
        if session.head.status_at(self.clock.now()) != SessionStatus::Active {
            return Err(AgentError::SessionNotFound);
        }
        Ok(session)
    }

    /// The caller's session unless it expired: agent and runtime tools answer an expired session
    /// like a missing one (-32002, Document 1). A failed render stays readable.
    pub async fn unexpired(&self, caller: &Caller, session_id: &str) -> Result<Arc<SessionRecord>, AgentError> {
        let session = self.owned(caller, session_id).await?;
        if session.head.status_at(self.clock.now()) == SessionStatus::Expired {
            return Err(AgentError::SessionNotFound);
        }
        Ok(session)
    }
}
