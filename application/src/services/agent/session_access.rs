//! The one rule for reading a caller's session: a missing, foreign or (for agent and runtime
//! tools) expired session answers alike, so existence never leaks.

use std::sync::Arc;

use svc_domain::session::SessionStatus;

use super::{AgentError, Caller};
use crate::ports::Clock;
use crate::ports::agent::{SessionRecord, SessionRepository};

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
        match self.sessions.get_with_undrained(session_id).await? {
            Some((s, undrained)) if s.app_id == caller.app_id => Ok((s, undrained)),
            _ => Err(AgentError::SessionNotFound),
        }
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
