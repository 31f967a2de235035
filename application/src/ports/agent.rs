//! Ports of the agent plane: apps, handshakes, sessions, events, blueprints and the live bus.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::Value;
use svc_domain::contract::Contract;
use svc_domain::handshake::{HandshakeAction, HandshakeLifecycle, Origin};
use svc_domain::session::{FrozenCard, SessionHead, SessionStatus};

use super::RepositoryError;
use super::retention::ReplayWindow;

type Result<T> = std::result::Result<T, RepositoryError>;

/// An app: the tenancy unit of sessions and blueprints (the domain's entity, stored as is).
pub use svc_domain::app::App as AppRecord;

/// Mints the id of an app about to be created.
pub type NewAppId<'a> = &'a (dyn Fn() -> String + Send + Sync);

#[async_trait::async_trait]
pub trait AppRepository: Send + Sync {
    /// The owner's default app, created on first use with the id `new_app_id` mints (called only
    /// then: minting an id per request was a measurable part of authenticating one, issue 18).
    /// Shared, not copied: every authenticated request asks for it.
    async fn default_app(
        &self,
        owner_id: &str,
        new_app_id: NewAppId<'_>,
        now: DateTime<Utc>,
    ) -> Result<std::sync::Arc<AppRecord>>;
    async fn get(&self, app_id: &str) -> Result<Option<AppRecord>>;
    /// The owner's apps, oldest first.
    async fn list_by_owner(&self, owner_id: &str) -> Result<Vec<AppRecord>>;
    /// Stores a new app that is not its owner's default. An existing id is a `Conflict`.
    async fn insert(&self, record: &AppRecord) -> Result<()>;
    /// Like [`AppRepository::insert`], unless the owner already holds `max` apps. The count and
    /// the insert are one step: concurrent creations never pass `max`.
    async fn insert_bounded(&self, record: &AppRecord, max: u64) -> Result<super::BoundedInsert>;
    /// Writes `display_name`, `system_prompt` and `updated_at` of `record` if the app exists and
    /// belongs to `record.owner_id`; `false` otherwise.
    async fn update(&self, record: &AppRecord) -> Result<bool>;
    /// Makes the owner's app the owner's only default, atomically; `false` (nothing changed)
    /// when the owner has no such app.
    async fn set_default(&self, owner_id: &str, app_id: &str) -> Result<bool>;
    /// Deletes the owner's app; another owner's or a missing one is left alone. When the default
    /// goes, the owner's oldest remaining app becomes the default.
    async fn delete(&self, owner_id: &str, app_id: &str) -> Result<()>;
}

/// A cache match found at handshake time.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheMatch {
    pub blueprint_id: String,
    /// 1.0 for an exact (intent, contractHash, variantKey) match.
    pub similarity: f64,
    /// `exact` or `semantic`.
    pub kind: String,
    pub reason: String,
}

#[derive(Debug, Clone, PartialEq)]
pub struct HandshakeRecord {
    pub handshake_id: String,
    pub app_id: String,
    pub intent: String,
    /// The agreed contract.
    pub contract: Contract,
    pub variance: Value,
    pub generator: Option<String>,
    pub origin: Origin,
    pub action: HandshakeAction,
    /// The blueprint the render will serve: the cached one, or the id a generation will take.
    pub blueprint_id: String,
    pub cache: Option<CacheMatch>,
    pub lifecycle: HandshakeLifecycle,
}

#[async_trait::async_trait]
pub trait HandshakeRepository: Send + Sync {
    async fn insert(&self, record: &HandshakeRecord) -> Result<()>;
    async fn get(&self, handshake_id: &str) -> Result<Option<HandshakeRecord>>;
    /// Marks the handshake consumed if nobody did first; `false` when another render won.
    async fn consume(&self, handshake_id: &str, at: DateTime<Utc>) -> Result<bool>;
    /// Undoes a consumption whose render ended before committing anything. Only the render
    /// holding the consumption calls it, so no other render's consumption can be undone.
    async fn release(&self, handshake_id: &str) -> Result<()>;
    /// Consumes the handshake and inserts the session rendered from it in one transaction, both
    /// or neither (a cache hit's render); `false`, with nothing written, when another render
    /// consumed it first.
    async fn consume_for_session(&self, handshake_id: &str, at: DateTime<Utc>, session: &SessionRecord)
    -> Result<bool>;
}

pub use super::blueprints::{BlueprintRecord, BlueprintRepository};

/// Why a render failed, kept on the error session.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderFailure {
    pub code: String,
    pub message: String,
}

/// The host conversation a render was created in (`_meta['ai.svc/host-session']`).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct HostSession {
    pub host_name: Option<String>,
    pub host_session_id: Option<String>,
}

#[derive(Debug, Clone, PartialEq)]
pub struct SessionRecord {
    pub session_id: String,
    pub app_id: String,
    pub intent: String,
    pub blueprint_id: Option<String>,
    pub contract: Contract,
    pub theme_id: Option<String>,
    pub head: SessionHead,
    pub failure: Option<RenderFailure>,
    pub host: HostSession,
    pub context_snapshot: Value,
    pub event_sequence: i64,
    pub created_at: DateTime<Utc>,
    /// Optimistic-concurrency counter: bumped by every head write.
    pub revision: i64,
}

/// A session as `svc_list_sessions` shows it: none of its JSON (props, contract, context), which
/// a list of 200 sessions of 4 MiB props each would otherwise read and parse at once.
#[derive(Debug, Clone, PartialEq)]
pub struct SessionListing {
    pub session_id: String,
    pub app_id: String,
    pub created_at: DateTime<Utc>,
    /// As stored: `Active` or `Failed` ([`SessionListing::status_at`] tells an expired one).
    pub stored_status: SessionStatus,
    pub last_activity_at: DateTime<Utc>,
    pub ttl_seconds: u64,
    pub host: HostSession,
}

impl SessionListing {
    /// What a store that holds whole records lists.
    pub fn of(record: &SessionRecord) -> Self {
        Self {
            session_id: record.session_id.clone(),
            app_id: record.app_id.clone(),
            created_at: record.created_at,
            stored_status: record.head.status,
            last_activity_at: record.head.last_activity_at,
            ttl_seconds: record.head.ttl_seconds,
            host: record.host.clone(),
        }
    }

    pub fn status_at(&self, now: DateTime<Utc>) -> SessionStatus {
        let expires_at = svc_domain::session::expires_at(self.last_activity_at, self.ttl_seconds);
        svc_domain::session::status_at(self.stored_status, expires_at, now)
    }
}

/// Filter of `svc_list_sessions`.
#[derive(Debug, Clone, Default)]
pub struct SessionQuery {
    pub host_name: Option<String>,
    pub host_session_id: Option<String>,
    pub limit: u64,
}

#[async_trait::async_trait]
pub trait SessionRepository: Send + Sync {
    async fn insert(&self, record: &SessionRecord) -> Result<()>;
    async fn get(&self, session_id: &str) -> Result<Option<SessionRecord>>;
    /// [`Self::get`], shared: a store that keeps rows in memory hands out the one it keeps,
    /// where a copy of its strings and JSON costs a read path about a twentieth of its work.
    async fn get_shared(&self, session_id: &str) -> Result<Option<Arc<SessionRecord>>> {
        Ok(self.get(session_id).await?.map(Arc::new))
    }
    /// The session and whether a gesture of it waits to be drained, in one look where the store
    /// answers both at once (a server database: one round trip instead of two). `None` for the
    /// second when this store does not know: [`EventRepository::drain`] then looks.
    async fn get_with_undrained(&self, session_id: &str) -> Result<Option<(Arc<SessionRecord>, Option<bool>)>> {
        Ok(self.get_shared(session_id).await?.map(|session| (session, None)))
    }
    /// Writes a new head if `revision` is still current, freezing `frozen` as history in the same
    /// transaction; `false` when another writer moved the session first.
    async fn save_head(
        &self,
        session_id: &str,
        revision: i64,
        head: &SessionHead,
        frozen: Option<&FrozenCard>,
    ) -> Result<bool>;
    async fn frozen_props(&self, session_id: &str, epoch: u32) -> Result<Option<Value>>;
    /// Replaces the stored context snapshot (contextSpec slots and the `_host` observation).
    async fn set_context_snapshot(&self, session_id: &str, snapshot: &Value) -> Result<()>;
    /// Newest last, at most `limit` rows.
    async fn list(&self, app_id: &str, query: &SessionQuery) -> Result<Vec<SessionListing>>;
}

/// A stored user gesture.
#[derive(Debug, Clone, PartialEq)]
pub struct ActionEventRecord {
    pub session_id: String,
    pub sequence: i64,
    pub client_seq: Option<i64>,
    pub intent: String,
    pub action_data: Value,
    pub ui_context: Value,
    pub action_id: String,
    pub fired_at: DateTime<Utc>,
}

/// A new gesture before the store gives it a sequence.
#[derive(Debug, Clone, PartialEq)]
pub struct NewActionEvent {
    pub session_id: String,
    pub client_seq: Option<i64>,
    pub intent: String,
    pub action_data: Value,
    pub ui_context: Value,
    pub fired_at: DateTime<Utc>,
}

/// A server-stamped delivery on a stream channel.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamEnvelope {
    pub session_id: String,
    pub channel: String,
    pub seq: i64,
    pub mode: String,
    pub payload: Value,
    pub complete: bool,
    pub timestamp: DateTime<Utc>,
}

/// How much one drain takes: at most `gestures` of the oldest undrained gestures, and of those
/// only as many as fit in `bytes` of stored action data and context together (the oldest always,
/// since it was admitted when it was stored).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DrainBound {
    pub gestures: u64,
    pub bytes: usize,
}

#[async_trait::async_trait]
pub trait EventRepository: Send + Sync {
    /// Stores a gesture durably; a repeated `client_seq` returns the stored one instead.
    async fn append_action(&self, event: &NewActionEvent) -> Result<(ActionEventRecord, bool)>;
    /// Returns the session's oldest undrained gestures and marks them drained `at`, atomically:
    /// as many as `bound` allows (the oldest always), the rest left for the next drain.
    async fn drain(&self, session_id: &str, at: DateTime<Utc>, bound: DrainBound) -> Result<Vec<ActionEventRecord>>;
    /// Stores a delivery with the session's next stream sequence number.
    async fn append_stream(
        &self,
        session_id: &str,
        channel: &str,
        mode: &str,
        payload: &Value,
        complete: bool,
        at: DateTime<Utc>,
    ) -> Result<StreamEnvelope>;
    /// Envelopes with `seq > after_seq` (and `seq <= until` when given), oldest first: the newest
    /// ones, at most `limit` of them and no more than `max_payload_bytes` of payload JSON together
    /// (the newest one always).
    async fn streams_since(
        &self,
        session_id: &str,
        after_seq: i64,
        until: Option<i64>,
        limit: u64,
        max_payload_bytes: usize,
    ) -> Result<Vec<StreamEnvelope>>;
    /// The envelopes [`EventRepository::streams_since`] returns for `window` (no `until`), read
    /// from the oldest on and only as far as `read_bytes` of payload JSON (see [`WindowHead`]).
    async fn streams_window_head(
        &self,
        session_id: &str,
        after_seq: i64,
        window: ReplayWindow,
        read_bytes: usize,
    ) -> Result<WindowHead<StreamEnvelope>>;
    /// The session's highest stream `seq` (0 when none).
    async fn last_stream_seq(&self, session_id: &str) -> Result<i64>;
    /// Stored gestures with `sequence > after_sequence`, oldest first: the newest ones, at most
    /// `limit` of them and no more than `max_bytes` of action data and context together (the
    /// newest one always).
    async fn actions_since(
        &self,
        session_id: &str,
        after_sequence: i64,
        limit: u64,
        max_bytes: usize,
    ) -> Result<Vec<ActionEventRecord>>;
    /// The gestures [`EventRepository::actions_since`] returns for `window`, read from the oldest
    /// on and only as far as `read_bytes` of action data and context (see [`WindowHead`]).
    async fn actions_window_head(
        &self,
        session_id: &str,
        after_sequence: i64,
        window: ReplayWindow,
        read_bytes: usize,
    ) -> Result<WindowHead<ActionEventRecord>>;
}

/// The oldest rows of a replay window, for a reader that carries only so many bytes at once (a
/// polling answer): the window is the one a whole replay gets (the newest `window.count` rows
/// after the cursor, of them the newest within `window.bytes`), and of it the rows are taken in
/// order while their stored JSON together stays within `read_bytes`, the first always. Stored
/// JSON is the compact text a frame embeds, so a reader whose frames fit in `read_bytes` never
/// needs a row past the head.
#[derive(Debug, Clone, PartialEq)]
pub struct WindowHead<T> {
    pub items: Vec<T>,
    /// Rows of the window after the last item were left for a later read (not lost).
    pub cut: bool,
    /// More than `window.count` rows were after the cursor: the oldest were left out of the
    /// window (a gap, as a whole replay would report it).
    pub overflowed: bool,
}

/// Bytes of JSON a props update's props or a stream envelope's payload may have to travel on the
/// live bus inside the event; a larger one travels as a marker ([`LiveEvent::PropsStored`],
/// [`LiveEvent::DataStored`]) and whoever forwards it reads it from the store. A bus holds
/// every event until its slowest subscriber took it (a broadcast channel's slot, a scale-out
/// bus's outbox and broker message), so an event carrying a payload of megabytes, parsed, pinned
/// gigabytes behind one stalled socket, and a broker with a message limit (NATS: 1 MiB) could
/// not carry it at all.
pub const LIVE_EVENT_INLINE_BYTES: usize = 64 * 1024;

/// What travels on the live bus to subscribers of a topic.
#[derive(Debug, Clone, PartialEq)]
pub enum LiveEvent {
    /// New props (small ones; see [`LiveEvent::props_stored`]).
    PropsUpdate {
        session_id: String,
        props: Value,
        epoch: u32,
    },
    /// Props over [`LIVE_EVENT_INLINE_BYTES`] were stored at `epoch`: a subscriber reads the
    /// session's current props and epoch from the store.
    PropsStored { session_id: String, epoch: u32 },
    /// A stored stream envelope (a small one; see [`LiveEvent::data_stored`]).
    Data(StreamEnvelope),
    /// A stream envelope whose payload is over [`LIVE_EVENT_INLINE_BYTES`] was stored at `seq`:
    /// a subscriber reads it from the store.
    DataStored { session_id: String, seq: i64 },
    /// A gesture was stored: a waiting `svc_consume` wakes.
    ActionStored { session_id: String },
    DrainAck {
        session_id: String,
        action_ids: Vec<String>,
    },
    /// The agent committed a new render in a host conversation; published on that
    /// conversation's topic ([`host_topic`]) so the cards already mounted there hear of it.
    Render {
        topic: String,
        session_id: String,
        created_at: DateTime<Utc>,
    },
    /// A bearer key was revoked: the live channels opened under it end, on every replica
    /// (published on [`key_topic`]), and every replica's authentication cache forgets the key
    /// (each bus also delivers it to subscribers of [`KEY_REVOCATIONS_TOPIC`]).
    KeyRevoked { key_id: String },
    /// A blueprint was stored, edited or deleted on some replica: every replica's kept blueprint
    /// reads are forgotten (published on [`BLUEPRINT_CHANGES_TOPIC`]).
    BlueprintsChanged,
    /// This replica's bus lost its connection to the others and has it back, or another replica
    /// dropped events its bus could not send in time (`bus_outbox`): whatever was announced
    /// meanwhile may be lost. Published by a bus on this replica and delivered to every topic
    /// (see [`LiveEvent::heard_on_every_topic`]): the caches that follow announcements forget
    /// everything, a live socket tells its card to resubscribe (`lagged`: the current props and
    /// the streams from its cursor), a waiting `svc_consume` looks at the store again.
    MissedEvents,
}

/// The bus topic of [`LiveEvent::BlueprintsChanged`]: the blueprint read cache listens here.
pub const BLUEPRINT_CHANGES_TOPIC: &str = "blueprints\u{1f}changed";

/// The bus topic that hears every [`LiveEvent::KeyRevoked`], whatever the key: the
/// authentication cache listens here.
pub const KEY_REVOCATIONS_TOPIC: &str = "keys\u{1f}revoked";

/// The bus topic of one bearer key, where its revocation is announced.
pub fn key_topic(key_id: &str) -> String {
    format!("key\u{1f}{key_id}")
}

/// The bus topic of a host conversation (`_meta['ai.svc/host-session']`).
pub fn host_topic(host: &HostSession) -> Option<String> {
    match (&host.host_name, &host.host_session_id) {
        (Some(name), Some(id)) => Some(format!("host\u{1f}{name}\u{1f}{id}")),
        _ => None,
    }
}

impl LiveEvent {
    /// The announcement of a stream envelope already stored: the envelope itself, or
    /// [`LiveEvent::DataStored`] when its payload is over [`LIVE_EVENT_INLINE_BYTES`].
    pub fn data_stored(envelope: StreamEnvelope) -> Self {
        if svc_domain::text::json_len_at_most(&envelope.payload, LIVE_EVENT_INLINE_BYTES).is_some() {
            return Self::Data(envelope);
        }
        Self::DataStored {
            session_id: envelope.session_id,
            seq: envelope.seq,
        }
    }

    /// The announcement of props already stored as the session's head at `epoch`: the props
    /// themselves, or [`LiveEvent::PropsStored`] when they are over [`LIVE_EVENT_INLINE_BYTES`].
    pub fn props_stored(session_id: &str, props: &Value, epoch: u32) -> Self {
        let session_id = session_id.to_owned();
        if svc_domain::text::json_len_at_most(props, LIVE_EVENT_INLINE_BYTES).is_some() {
            return Self::PropsUpdate {
                session_id,
                props: props.clone(),
                epoch,
            };
        }
        Self::PropsStored { session_id, epoch }
    }

    /// The topic subscribers listen on: a session id, a host conversation's topic or a key's.
    pub fn topic(&self) -> String {
        match self {
            Self::PropsUpdate { session_id, .. }
            | Self::PropsStored { session_id, .. }
            | Self::DataStored { session_id, .. }
            | Self::ActionStored { session_id }
            | Self::DrainAck { session_id, .. } => session_id.clone(),
            Self::Data(envelope) => envelope.session_id.clone(),
            Self::Render { topic, .. } => topic.clone(),
            Self::KeyRevoked { key_id } => key_topic(key_id),
            Self::BlueprintsChanged | Self::MissedEvents => BLUEPRINT_CHANGES_TOPIC.to_owned(),
        }
    }

    /// Topics besides [`LiveEvent::topic`] where a bus also delivers the event: the listeners
    /// that follow every event of a kind rather than one topic.
    pub fn also_heard_on(&self) -> &'static [&'static str] {
        match self {
            Self::KeyRevoked { .. } => &[KEY_REVOCATIONS_TOPIC],
            _ => &[],
        }
    }

    /// Whether a bus delivers the event to every topic it has listeners on, instead of
    /// [`LiveEvent::topic`] and [`LiveEvent::also_heard_on`]: only [`LiveEvent::MissedEvents`],
    /// which concerns every listener.
    pub fn heard_on_every_topic(&self) -> bool {
        matches!(self, Self::MissedEvents)
    }
}

/// Fan-out of live events to every subscriber of a topic (a session id or a host conversation),
/// on any replica.
///
/// Subscribers receive [`Published`]: one shared copy of the event per publish, however many
/// subscribers hear it.
pub trait EventBus: Send + Sync {
    fn publish(&self, event: LiveEvent);
    fn subscribe(&self, topic: &str) -> tokio::sync::broadcast::Receiver<Published>;
}

/// A published [`LiveEvent`] as subscribers receive it: reference-counted, so a broadcast to a
/// thousand subscribers copies a pointer, not the payload, and a broadcast channel's slots stay
/// one pointer wide; the frame a transport renders from it is rendered once and shared.
#[derive(Debug, Clone)]
pub struct Published(std::sync::Arc<PublishedInner>);

/// A transport's rendering of an event, of the transport's own type: a WebSocket keeps the
/// encoded frame it writes, so a thousand sockets share one buffer instead of a copy each.
type Rendering = Option<Box<dyn std::any::Any + Send + Sync>>;

#[derive(Debug)]
struct PublishedInner {
    event: LiveEvent,
    rendered: std::sync::OnceLock<Rendering>,
}

impl Published {
    pub fn new(event: LiveEvent) -> Self {
        Self(std::sync::Arc::new(PublishedInner {
            event,
            rendered: std::sync::OnceLock::new(),
        }))
    }

    pub fn event(&self) -> &LiveEvent {
        &self.0.event
    }

    /// The event rendered by `render` (a transport's frame), computed by the first subscriber
    /// that asks and shared with the others (`T` is cloned per subscriber: make it a shared
    /// buffer). Every subscriber must pass the same renderer; one asking for another type is
    /// answered `None`.
    pub fn rendered<T: Clone + Send + Sync + 'static>(
        &self,
        render: impl FnOnce(&LiveEvent) -> Option<T>,
    ) -> Option<T> {
        let rendering = self.0.rendered.get_or_init(|| {
            render(&self.0.event).map(|rendered| Box::new(rendered) as Box<dyn std::any::Any + Send + Sync>)
        });
        let shared = rendering.as_ref()?.downcast_ref::<T>();
        if shared.is_none() {
            // A transport's bug, not the event's: said loudly rather than a frame silently lost.
            tracing::error!(
                wanted = std::any::type_name::<T>(),
                "a live event was rendered to another type by an earlier subscriber"
            );
        }
        shared.cloned()
    }
}

impl std::ops::Deref for Published {
    type Target = LiveEvent;

    fn deref(&self) -> &LiveEvent {
        &self.0.event
    }
}
