//! The agent plane: handshake, render, consume, update, amend, emit, the session reads and the
//! live channel. Each use case is its own service holding only the ports it uses
//! ([`HandshakeService`], [`RenderService`], [`ConsumeService`], [`PropsService`],
//! [`SessionService`], [`LiveService`]); [`AgentService`] is the facade the transports call.

mod app_render_limit;
mod blueprint_cache;
mod catalogs;
mod component_code;
mod consume;
#[cfg(all(test, feature = "testing"))]
mod consume_tests;
mod emit;
mod error;
mod facade;
mod generation_limit;
mod generation_queue;
mod handshake;
mod handshake_claim;
mod held_polls;
mod lifecycle;
mod live;
#[cfg(all(test, feature = "testing"))]
mod live_bus_tests;
mod live_reads;
#[cfg(all(test, feature = "testing"))]
mod live_reads_tests;
mod negotiation_memo;
mod render;
#[cfg(all(test, feature = "testing"))]
mod render_tests;
#[cfg(all(test, feature = "testing"))]
mod replay_tests;
mod schema_cache;
#[cfg(all(test, feature = "testing"))]
mod schema_compile_tests;
mod session_access;
#[cfg(all(test, feature = "testing"))]
mod session_tests;
mod session_variants;
mod sessions;
mod untrusted_contract;
mod update;
#[cfg(all(test, feature = "testing"))]
mod update_tests;

use std::sync::Arc;

pub use app_render_limit::AppRenderLimit;
pub use blueprint_cache::CachedBlueprints;
pub use component_code::ComponentCode;
pub use consume::{ConsumeReply, ConsumeService, Consumption, DRAIN_BOUND, LongPoll, MAX_CONSUME_TIMEOUT_SECONDS};
pub use error::AgentError;
pub use generation_limit::GenerationLimit;
pub use generation_queue::{GenerationQueue, QueueDepth, QueueFull, QueueSlot};
pub use handshake::{HandshakeCommand, HandshakeOutcome, HandshakeReply, HandshakeService};
pub use held_polls::{DEFAULT_LONG_POLLS_PER_CALLER, HeldPoll, HeldPolls, PollHolder};
pub use lifecycle::{ProgressObserver, STREAMING_INTERVAL};
pub use live::{IncomingAction, LiveService, LiveSnapshot, MountSnapshot, REPLAY_MAX_PAYLOAD_BYTES, Replay};
pub use live_reads::{SharedFrames, SharedStreamReads};
pub use render::{
    CacheReport, FirstPaint, Refusal, RenderCommand, RenderIdentity, RenderOverride, RenderResult, RenderService,
};
pub use schema_cache::{Checked, SchemaCache};
pub use session_access::SessionAccess;
pub use session_variants::SessionVariants;
pub use sessions::{DEFAULT_SESSION_LIST, MAX_SESSION_LIST};
pub use sessions::{RenderSource, SessionService, SessionView};
pub use update::{PropsChange, PropsService, UpdateReply};

use crate::ports::agent::{
    AppRepository, BlueprintRepository, EventBus, EventRepository, HandshakeRepository, SessionRepository,
};
use crate::ports::generation::{Compiler, Generator};
use crate::ports::telemetry::GenerationTelemetry;
use crate::ports::{Clock, Ids};
use crate::services::cpu_gate::CpuGate;

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

impl Caller {
    /// Who the caller acts as: its user id, else (single-tenant, `--dev-allow-all`) its app id.
    /// Per-caller bounds (the generation queue's per-principal cap) count by it.
    pub fn principal(&self) -> &str {
        if self.principal_id.is_empty() {
            &self.app_id
        } else {
            &self.principal_id
        }
    }
}

/// Weight of the compiled validators kept (a schema's compact JSON bytes plus
/// `PATTERN_COMPILED_BYTES` per pattern, see `schema_cache`): thousands of a few kilobytes, or
/// a contract holding all the patterns it may (64, 16 MiB) several times over, so it is not
/// compiled again on every check.
const SCHEMA_CACHE_CAPACITY: u64 = 64 << 20;

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

/// The agent plane's facade: what the transports call. Each method hands the call to its use
/// case (handshake, render, consume, props, sessions, live), assembled from only the ports that use
/// case needs; the catalog tools (gadgets, themes, blueprint search) stay here.
#[derive(Clone)]
pub struct AgentService {
    ports: AgentPorts,
    settings: Arc<AgentSettings>,
    schemas: SchemaCache,
    /// The gate every CPU-heavy step on untrusted input goes through (the schema cache's too).
    cpu: CpuGate,
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
    telemetry: Arc<dyn GenerationTelemetry>,
    /// Hosted mode: who pays for a cold generation, and with which provider keys.
    account: Option<crate::services::hosted::GenerationAccount>,
    /// Each blueprint's session variant, for the session reads.
    variants: SessionVariants,
    /// Drafts already agreed, for the handshakes that send them again.
    negotiations: negotiation_memo::NegotiationMemo,
    /// Long-polls each caller holds (`svc_consume`, the live channel's HTTP polls).
    held_polls: Arc<HeldPolls>,
    /// The live tail's store reads every socket of a session makes at once, made once.
    live_reads: SharedStreamReads,
}

impl AgentService {
    pub fn new(ports: AgentPorts, settings: AgentSettings, queue: GenerationQueue) -> Self {
        Self {
            ports,
            settings: Arc::new(settings),
            schemas: SchemaCache::new(SCHEMA_CACHE_CAPACITY, CpuGate::unbounded()),
            cpu: CpuGate::unbounded(),
            queue,
            generation_limit: None,
            app_render_limit: None,
            declared_gadgets: Vec::new(),
            catalog: None,
            telemetry: Arc::new(crate::ports::telemetry::NoTelemetry),
            account: None,
            variants: SessionVariants::default(),
            negotiations: negotiation_memo::NegotiationMemo::default(),
            held_polls: HeldPolls::new(DEFAULT_LONG_POLLS_PER_CALLER),
            live_reads: SharedStreamReads::default(),
        }
    }

    /// Bounds the long-polls one holder holds at once; past it a poll is answered at once.
    pub fn with_long_polls_per_caller(mut self, per_caller: usize) -> Self {
        self.held_polls = HeldPolls::new(per_caller);
        self
    }

    /// A place for one more long-poll of `holder`, or `None` past its bound (answer at once).
    pub fn hold_long_poll(&self, holder: PollHolder) -> Option<HeldPoll> {
        self.held_polls.hold(holder)
    }

    /// Bounds the plane's CPU-heavy work (negotiation, schema checks, compilation) with `cpu`;
    /// without it nothing is refused (unit tests).
    pub fn with_cpu_gate(mut self, cpu: CpuGate) -> Self {
        self.schemas = SchemaCache::new(SCHEMA_CACHE_CAPACITY, cpu.clone());
        self.cpu = cpu;
        self
    }

    /// The plane's gate of CPU-heavy work, for a transport's own heavy steps (a card document
    /// built from large props).
    pub fn cpu_gate(&self) -> &CpuGate {
        &self.cpu
    }

    /// Hosted mode: cold generations are charged to the caller's wallet by reservation and use
    /// the caller's own provider keys.
    pub fn with_generation_account(mut self, account: crate::services::hosted::GenerationAccount) -> Self {
        self.account = Some(account);
        self
    }

    /// Reports cache lookups, queue waits and generation outcomes to `telemetry`.
    pub fn with_telemetry(mut self, telemetry: Arc<dyn GenerationTelemetry>) -> Self {
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

    /// Now, by the agent plane's clock: the transports stamp and check live tokens with it.
    pub fn now(&self) -> chrono::DateTime<chrono::Utc> {
        self.ports.clock.now()
    }

    /// The agent plane's source of ids (request ids of the access log).
    pub fn ids(&self) -> Arc<dyn Ids> {
        self.ports.ids.clone()
    }

    fn access(&self) -> SessionAccess {
        SessionAccess::new(self.ports.sessions.clone(), self.ports.clock.clone())
    }

    fn cached_blueprints(&self) -> CachedBlueprints {
        CachedBlueprints::new(self.ports.blueprints.clone(), self.catalog.clone())
    }

    /// The handshake use case.
    pub fn handshakes(&self) -> HandshakeService {
        HandshakeService {
            clock: self.ports.clock.clone(),
            ids: self.ports.ids.clone(),
            handshakes: self.ports.handshakes.clone(),
            blueprints: self.cached_blueprints(),
            telemetry: self.telemetry.clone(),
            cpu: self.cpu.clone(),
            schemas: self.schemas.clone(),
            negotiations: self.negotiations.clone(),
        }
    }

    /// The render use case.
    pub fn renders(&self) -> RenderService {
        RenderService {
            clock: self.ports.clock.clone(),
            ids: self.ports.ids.clone(),
            handshakes: self.ports.handshakes.clone(),
            sessions: self.ports.sessions.clone(),
            events: self.ports.events.clone(),
            blueprints: self.cached_blueprints(),
            bus: self.ports.bus.clone(),
            generator: self.ports.generator.clone(),
            compiler: self.ports.compiler.clone(),
            cpu: self.cpu.clone(),
            settings: self.settings.clone(),
            schemas: self.schemas.clone(),
            queue: self.queue.clone(),
            generation_limit: self.generation_limit.clone(),
            declared_gadgets: self.declared_gadgets.clone(),
            telemetry: self.telemetry.clone(),
            account: self.account.clone(),
            app_render_limit: self.app_render_limit.clone(),
        }
    }

    /// The `svc_consume` use case.
    pub fn consumption(&self) -> ConsumeService {
        ConsumeService {
            access: self.access(),
            events: self.ports.events.clone(),
            bus: self.ports.bus.clone(),
            held: self.held_polls.clone(),
        }
    }

    /// The `svc_update` / `svc_amend` / `svc_emit` use case.
    pub fn props(&self) -> PropsService {
        PropsService {
            access: self.access(),
            sessions: self.ports.sessions.clone(),
            events: self.ports.events.clone(),
            bus: self.ports.bus.clone(),
            schemas: self.schemas.clone(),
        }
    }

    /// The session reads.
    pub fn session_reads(&self) -> SessionService {
        SessionService {
            access: self.access(),
            blueprints: self.ports.blueprints.clone(),
            apps: self.ports.apps.clone(),
            variants: self.variants.clone(),
        }
    }

    /// What the live channel needs.
    pub fn live(&self) -> LiveService {
        LiveService {
            access: self.access(),
            sessions: self.ports.sessions.clone(),
            events: self.ports.events.clone(),
            blueprints: self.ports.blueprints.clone(),
            bus: self.ports.bus.clone(),
            schemas: self.schemas.clone(),
            replay_buffer: self.settings.replay_buffer,
            shared_reads: self.live_reads.clone(),
        }
    }
}
