use chrono::{DateTime, Utc};
use serde_json::Value;
use svc_domain::session::{SessionStatus, SessionVariant};

use std::sync::Arc;

use super::session_variants::SessionVariants;
use super::{AgentError, Caller, SessionAccess};
use crate::ports::agent::{AppRepository, BlueprintRepository, SessionListing, SessionQuery, SessionRecord};

/// How often a heartbeat that lost its race to another writer is tried again (each try re-reads).
const HEARTBEAT_ATTEMPTS: usize = 5;

/// Bounds of `svc_list_sessions`' `limit`.
pub const MAX_SESSION_LIST: u64 = 200;
pub const DEFAULT_SESSION_LIST: u64 = 50;

/// The `svc_get_session` projection.
#[derive(Debug, Clone)]
pub struct SessionView {
    pub session_id: String,
    pub app_id: String,
    pub event_sequence: i64,
    pub created_at: DateTime<Utc>,
    pub last_activity_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub status: SessionStatus,
    pub variant: SessionVariant,
    /// The last-known context slots; `None` for a variant that keeps none.
    pub context_snapshot: Option<Value>,
}

/// The `svc_get_render_source` body.
#[derive(Debug, Clone)]
pub struct RenderSource {
    pub session_id: String,
    pub source: String,
    pub contract: svc_domain::contract::Contract,
    pub fixture_props: Value,
}

/// The session reads (`svc_get_session`, `svc_get_render_source`, `svc_list_sessions`, frozen
/// props) and the app's system prompt.
#[derive(Clone)]
pub struct SessionService {
    pub access: SessionAccess,
    pub blueprints: Arc<dyn BlueprintRepository>,
    pub apps: Arc<dyn AppRepository>,
    pub variants: SessionVariants,
}

impl SessionService {
    /// Reads a session and bumps its activity heartbeat (at its resolution: a read within a
    /// second of the last recorded activity writes nothing and reports the stored times).
    pub async fn get_session(&self, caller: &Caller, session_id: &str) -> Result<SessionView, AgentError> {
        // An expired session is not revived by a read.
        let mut session = self.access.unexpired(caller, session_id).await?;
        let now = self.access.clock.now();
        // When another writer moves the session first (a heartbeat or an update), read what it
        // stored and beat again if that is still a second behind: a read never reports a state
        // that is not on disk, nor loses its own heartbeat to a slower writer.
        for _ in 0..HEARTBEAT_ATTEMPTS {
            // The kept row is shared: only a read that beats takes its own copy.
            if !session.head.heartbeat_due(now) {
                break;
            }
            Arc::make_mut(&mut session).head.touch(now);
            let saved = self
                .access
                .sessions
                .save_head(session_id, session.revision, &session.head, None)
                .await?;
            if saved {
                break;
            }
            session = self.access.unexpired(caller, session_id).await?;
        }
        let variant = self.session_variant(&session).await?;
        Ok(view(&session, variant, now))
    }

    /// Which mount a session is: its blueprint's (a failed render, which has none, is `render`).
    async fn session_variant(&self, session: &SessionRecord) -> Result<SessionVariant, AgentError> {
        self.variants
            .of(&self.blueprints, session.blueprint_id.as_deref())
            .await
    }

    /// The TSX behind a render; does not bump the heartbeat.
    pub async fn get_render_source(&self, caller: &Caller, session_id: &str) -> Result<RenderSource, AgentError> {
        let session = self.access.unexpired(caller, session_id).await?;
        let Some(blueprint_id) = &session.blueprint_id else {
            return Err(AgentError::NoSource(
                "the render failed and produced no component".into(),
            ));
        };
        let Some(blueprint) = self.blueprints.get(blueprint_id).await? else {
            return Err(AgentError::NoSource(
                "the render's component is no longer stored".into(),
            ));
        };
        let variant = blueprint.session_variant();
        if !variant.has_component() {
            return Err(AgentError::NoSource(format!(
                "a non-component variant: this {} render is an HTML document, not a component",
                variant.as_str()
            )));
        }
        Ok(RenderSource {
            session_id: session.session_id.clone(),
            source: blueprint.source.clone(),
            contract: session.contract.clone(),
            fixture_props: session.head.props.clone(),
        })
    }

    pub async fn list_sessions(
        &self,
        caller: &Caller,
        mut query: SessionQuery,
    ) -> Result<Vec<(SessionListing, SessionStatus)>, AgentError> {
        if query.limit == 0 {
            query.limit = DEFAULT_SESSION_LIST;
        }
        if query.limit > MAX_SESSION_LIST {
            return Err(AgentError::invalid(
                "limit",
                format!("must be an integer from 1 to {MAX_SESSION_LIST}"),
            ));
        }
        let now = self.access.clock.now();
        let rows = self.access.sessions.list(&caller.app_id, &query).await?;
        Ok(rows
            .into_iter()
            .map(|s| {
                let status = s.status_at(now);
                (s, status)
            })
            .collect())
    }

    /// Props of a frozen epoch, or of the head when `epoch` is the head.
    pub async fn props_at(&self, caller: &Caller, session_id: &str, epoch: u32) -> Result<Option<Value>, AgentError> {
        let session = self.access.owned(caller, session_id).await?;
        if epoch == session.head.epoch {
            return Ok(Some(session.head.props.clone()));
        }
        Ok(self.access.sessions.frozen_props(session_id, epoch).await?)
    }
}

fn view(session: &SessionRecord, variant: SessionVariant, now: DateTime<Utc>) -> SessionView {
    SessionView {
        session_id: session.session_id.clone(),
        app_id: session.app_id.clone(),
        event_sequence: session.event_sequence,
        created_at: session.created_at,
        last_activity_at: session.head.last_activity_at,
        expires_at: session.head.expires_at(),
        status: session.head.status_at(now),
        variant,
        context_snapshot: variant.keeps_context_snapshot().then(|| session.ui_context()),
    }
}

impl SessionService {
    /// The app's system prompt, appended to the agent instructions by `initialize`.
    pub async fn app_system_prompt(&self, caller: &Caller) -> Result<Option<String>, AgentError> {
        Ok(self
            .apps
            .get(&caller.app_id)
            .await?
            .and_then(|a| a.system_prompt)
            .filter(|p| !p.is_empty()))
    }
}
