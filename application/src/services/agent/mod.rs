//! The agent plane: handshake, render, consume, update, amend, emit and the session reads.

mod app_render_limit;
mod blueprint_cache;
mod catalogs;
mod consume;
mod emit;
mod error;
mod generation_limit;
mod generation_queue;
mod handshake;
mod handshake_claim;
mod lifecycle;
mod live;
mod operator_default;
mod render;
mod schema_cache;
mod sessions;
mod untrusted_contract;
mod update;

use std::sync::Arc;

pub use app_render_limit::AppRenderLimit;
pub use consume::{ConsumeReply, MAX_CONSUME_TIMEOUT_SECONDS};
pub use error::AgentError;
pub use generation_limit::GenerationLimit;
pub use generation_queue::{GenerationQueue, QueueDepth, QueueFull};
pub use handshake::{HandshakeCommand, HandshakeOutcome, HandshakeReply};
pub use lifecycle::{ProgressObserver, STREAMING_INTERVAL};
pub use live::{IncomingAction, LiveSnapshot, Replay};
pub use render::{CacheReport, FirstPaint, Refusal, RenderCommand, RenderIdentity, RenderOverride, RenderResult};
pub use schema_cache::SchemaCache;
pub use sessions::{DEFAULT_SESSION_LIST, MAX_SESSION_LIST};
pub use sessions::{RenderSource, SessionView};
pub use update::{PropsChange, UpdateReply};

use crate::ports::agent::{
    AppRepository, BlueprintRepository, EventBus, EventRepository, HandshakeRepository, SessionRepository,
};
use crate::ports::generation::{Compiler, Generator};
use crate::ports::{Clock, Ids};

/// The authenticated caller of a tool, resolved by the transport.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Caller {
    /// User id (or the app id on single-tenant servers).
    pub principal_id: String,
    /// The app the call is scoped to.
    pub app_id: String,
    /// The bearer key behind the call (none in `--dev-allow-all`): live-channel tokens minted
    /// for this caller carry it, and its revocation ends them.
    pub key_id: Option<String>,
}

/// Deployment settings the agent plane needs.
#[derive(Debug, Clone)]
pub struct AgentSettings {
    /// Sliding lifetime of a session without an explicit `ttlSeconds`.
    pub default_session_ttl_seconds: u64,
    /// Canonical `provider:model` routes accepted in `infra.model`.
    pub model_registry: Vec<String>,
    /// Themes an app may use; empty means the whole catalog.
    pub available_theme_ids: Vec<String>,
    pub default_theme_id: String,
    /// Stream envelopes and gestures one live subscriber may replay; an older cursor is a gap.
    pub replay_buffer: u64,
}

/// Every port the agent plane uses.
#[derive(Clone)]
pub struct AgentPorts {
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn Ids>,
    pub apps: Arc<dyn AppRepository>,
    pub handshakes: Arc<dyn HandshakeRepository>,
    pub sessions: Arc<dyn SessionRepository>,
    pub events: Arc<dyn EventRepository>,
    pub blueprints: Arc<dyn BlueprintRepository>,
    pub bus: Arc<dyn EventBus>,
    pub generator: Arc<dyn Generator>,
    pub compiler: Arc<dyn Compiler>,
}

#[derive(Clone)]
pub struct AgentService {
    ports: AgentPorts,
    settings: Arc<AgentSettings>,
    schemas: SchemaCache,
    queue: GenerationQueue,
    /// `--public-demo`: cold generations per remote address; absent, generations are unlimited.
    generation_limit: Option<GenerationLimit>,
    /// Hosted per-app render rates; absent, apps are not limited.
    app_render_limit: Option<AppRenderLimit>,
    /// Gadgets declared by the app manifest (`svc.json#app.gadgets`), layered over the standard package.
    declared_gadgets: Vec<svc_domain::gadgets::GadgetDescriptor>,
    /// Semantic lookup, search and the UI registry; without it the cache matches exactly only.
    catalog: Option<crate::services::blueprints::BlueprintCatalog>,
    /// Cache lookups, queue waits and generation outcomes, for the operator's metrics.
    telemetry: Arc<dyn crate::ports::telemetry::GenerationTelemetry>,
}

impl AgentService {
    pub fn new(ports: AgentPorts, settings: AgentSettings, queue: GenerationQueue) -> Self {
        Self {
            ports,
            settings: Arc::new(settings),
            schemas: SchemaCache::new(1024),
            queue,
            generation_limit: None,
            app_render_limit: None,
            declared_gadgets: Vec::new(),
            catalog: None,
            telemetry: Arc::new(crate::ports::telemetry::NoTelemetry),
        }
    }

    /// Reports cache lookups, queue waits and generation outcomes to `telemetry`.
    pub fn with_telemetry(mut self, telemetry: Arc<dyn crate::ports::telemetry::GenerationTelemetry>) -> Self {
        self.telemetry = telemetry;
        self
    }

    /// Generations running and waiting now.
    pub fn queue_depth(&self) -> QueueDepth {
        self.queue.depth()
    }

    pub fn settings(&self) -> &AgentSettings {
        &self.settings
    }

    /// Limits the renders of each app to its configured rate.
    pub fn with_app_render_limit(mut self, limit: AppRenderLimit) -> Self {
        self.app_render_limit = Some(limit);
        self
    }

    /// Limits cold generations per remote address (public-demo mode).
    pub fn with_generation_limit(mut self, limit: GenerationLimit) -> Self {
        self.generation_limit = Some(limit);
        self
    }

    /// The caller's session, or `SessionNotFound` for a missing or foreign one alike.
    async fn owned_session(
        &self,
        caller: &Caller,
        session_id: &str,
    ) -> Result<crate::ports::agent::SessionRecord, AgentError> {
        match self.ports.sessions.get(session_id).await? {
            Some(s) if s.app_id == caller.app_id => Ok(s),
            _ => Err(AgentError::SessionNotFound),
        }
    }

    /// The caller's session unless it expired: agent and runtime tools answer an expired session
    /// like a missing one (-32002, Document 1). A failed render stays readable.
    pub(super) async fn unexpired_session(
        &self,
        caller: &Caller,
        session_id: &str,
    ) -> Result<crate::ports::agent::SessionRecord, AgentError> {
        let session = self.owned_session(caller, session_id).await?;
        if session.head.status_at(self.ports.clock.now()) == svc_domain::session::SessionStatus::Expired {
            return Err(AgentError::SessionNotFound);
        }
        Ok(session)
    }
}
