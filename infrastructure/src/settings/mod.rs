//! Settings: `config/default.toml` (compiled in), then an optional file, then `SVC_*` environment
//! variables (`SVC_<SECTION>__<KEY>`), then command-line flags. A key no struct below declares is
//! refused at start-up (`catalog`, `layers`).

pub mod bounds;
mod catalog;
pub mod forms;
mod hosted;
mod layers;
mod mail;
mod retention;
mod unknown;

use std::path::PathBuf;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use svc_application::services::registry::DEFAULT_PUBLISH_QUOTA;

pub use catalog::{Catalog, SettingKey};
pub use hosted::HostedSettings;
pub use layers::SettingsError;
pub use mail::MailSettings;
pub use retention::RetentionSettings;

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct Settings {
    pub server: ServerSettings,
    pub sessions: SessionSettings,
    pub generation: GenerationSettings,
    pub live: LiveSettings,
    pub ops: OpsSettings,
    pub oauth: OAuthSettings,
    pub public_demo: PublicDemoSettings,
    /// The tool-call limiter (`[tool_calls]`); off unless `calls_per_window` is set.
    pub tool_calls: ToolCallSettings,
    /// The MCP-Apps option (`[mcp_apps]`).
    pub mcp_apps: McpAppsSettings,
    /// The blueprint catalog: manifest, seed pool, embedder, thresholds (`[blueprints]`).
    #[serde(default)]
    pub blueprints: crate::blueprints::BlueprintSettings,
    /// Connection deadlines and the connection cap (`[connections]`).
    #[serde(default)]
    pub connections: ConnectionSettings,
    /// The artifact registry server, `svc registry serve` (`[registry]`; docs/registry.md).
    #[serde(default)]
    pub registry: RegistrySettings,
    /// The hosted plane: provider keys, credits (`[hosted]`); off unless `enabled`.
    #[serde(default)]
    pub hosted: HostedSettings,
    /// The NATS broker of `live.bus = "nats"` (`[nats]`).
    #[serde(default)]
    pub nats: NatsSettings,
    /// Federated identities on per-app endpoints: how issuers' keys are fetched (`[federation]`).
    #[serde(default)]
    pub federation: FederationSettings,
    /// The SMTP server the mail outbox is delivered through (`[mail]`).
    #[serde(default)]
    pub mail: MailSettings,
    /// Bounds on CPU-heavy work of untrusted input (`[limits]`; docs/budgets.md).
    #[serde(default)]
    pub limits: LimitsSettings,
    /// How long expired sessions are kept, and the sweep that deletes them and trims what a
    /// replay no longer serves (`[retention]`).
    #[serde(default)]
    pub retention: RetentionSettings,
}

/// `[limits]`: how many CPU-heavy steps (schema compilation and validation, TSX compilation, the
/// render check) run at once, and how long a request waits for a slot before it is refused.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(default)]
pub struct LimitsSettings {
    /// Slots; 0 is one per core.
    pub cpu_heavy_concurrency: usize,
    /// Longest a request waits for a slot before -32014 `SERVER_BUSY` (HTTP 503, `Retry-After`).
    #[schemars(range(max = 600_000))]
    pub cpu_heavy_wait_ms: u64,
    /// Long-polls held at once: `svc_consume` with a timeout per caller (an app's principal),
    /// the live channel's HTTP polls per key that minted their session's token. Past it a poll
    /// is answered at once, as with no wait.
    pub long_polls_per_caller: usize,
}

impl Default for LimitsSettings {
    fn default() -> Self {
        Self {
            cpu_heavy_concurrency: 0,
            cpu_heavy_wait_ms: 2000,
            long_polls_per_caller: svc_application::services::agent::DEFAULT_LONG_POLLS_PER_CALLER,
        }
    }
}

/// `[registry]`: where `svc registry serve` listens and keeps its data. Its own server and
/// storage, apart from `[server]`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(default)]
pub struct RegistrySettings {
    pub host: String,
    pub port: u16,
    /// The registry's SQLite database and its bundles (`<data_dir>/bundles/sha384/`).
    pub data_dir: PathBuf,
    /// Empty: SQLite in the data directory; else `sqlite://...` or `postgres://...`.
    pub database_url: String,
    /// Origin written into `bundleUrl`; empty: `http://<host>:<port>`.
    pub public_base_url: String,
    /// The Sigstore trusted root (`trusted_root.json`) public artifacts verify against; empty:
    /// the public-good production instance.
    pub sigstore_trusted_root: PathBuf,
    /// Development registries only: store a public artifact whose Sigstore bundle does not
    /// verify, marked `unverified`, instead of refusing it (installers still verify).
    pub accept_unverified_sigstore: bool,
    /// Most versions one package holds, yanked ones included (`quota_exceeded` past it). At most
    /// 1000: a version listing shows that many.
    #[schemars(range(min = 1, max = 1000))]
    pub max_versions_per_package: u64,
    /// Most bytes one publisher's versions hold, each its bundle plus its manifest as compact
    /// JSON, yanked ones included (`quota_exceeded` past it).
    #[schemars(range(min = 1))]
    pub max_publisher_stored_bytes: u64,
}

impl RegistrySettings {
    /// The publish quota these settings give the registry service.
    pub fn publish_quota(&self) -> svc_application::ports::registry::PublishQuota {
        svc_application::ports::registry::PublishQuota {
            versions_per_package: self.max_versions_per_package,
            bytes_per_publisher: self.max_publisher_stored_bytes,
        }
    }
}

impl Default for RegistrySettings {
    fn default() -> Self {
        Self {
            host: "127.0.0.1".into(),
            port: 6782,
            data_dir: PathBuf::from(".svc-registry"),
            database_url: String::new(),
            public_base_url: String::new(),
            sigstore_trusted_root: PathBuf::new(),
            accept_unverified_sigstore: false,
            max_versions_per_package: DEFAULT_PUBLISH_QUOTA.versions_per_package,
            max_publisher_stored_bytes: DEFAULT_PUBLISH_QUOTA.bytes_per_publisher,
        }
    }
}

/// `[nats]`: the broker of the NATS event bus.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(default)]
pub struct NatsSettings {
    pub url: String,
    /// The subject every replica of this deployment publishes on and listens to; deployments
    /// sharing a broker use different subjects.
    pub subject: String,
}

impl Default for NatsSettings {
    fn default() -> Self {
        Self {
            url: "nats://127.0.0.1:4222".into(),
            subject: "svc.live".into(),
        }
    }
}

impl RegistrySettings {
    pub fn database_url(&self) -> String {
        if self.database_url.is_empty() {
            format!("sqlite://{}?mode=rwc", self.data_dir.join("registry.db").display())
        } else {
            self.database_url.clone()
        }
    }
}

/// `[federation]`: the cache of federation issuers' key sets (JWKS).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(default)]
pub struct FederationSettings {
    /// How long a fetched key set is used before it is fetched again.
    #[schemars(range(min = 1, max = 604_800))]
    pub jwks_ttl_seconds: u64,
    /// Shortest time between two fetches of one key set on an unknown `kid`.
    #[schemars(range(max = 86_400))]
    pub jwks_refresh_floor_seconds: u64,
    /// Deadline of one discovery or key-set fetch.
    #[schemars(range(min = 1, max = 300))]
    pub fetch_timeout_seconds: u64,
}

impl Default for FederationSettings {
    fn default() -> Self {
        Self {
            jwks_ttl_seconds: 3600,
            jwks_refresh_floor_seconds: 30,
            fetch_timeout_seconds: 5,
        }
    }
}

/// `[connections]`: how long a client may take and how many connections are served at once.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(default)]
pub struct ConnectionSettings {
    #[schemars(range(min = 1, max = 86_400))]
    pub header_read_timeout_seconds: u64,
    #[schemars(range(min = 1, max = 86_400))]
    pub idle_timeout_seconds: u64,
    #[schemars(range(min = 1, max = 86_400))]
    pub body_read_timeout_seconds: u64,
    #[schemars(range(min = 1, max = 1_048_576))]
    pub body_bytes_in_flight_mib: u64,
    /// The budget of the bodies of routes that take no credential (sign-in and the other
    /// forms), apart from `body_bytes_in_flight_mib` (`connections/unauthenticated_bodies.rs`).
    #[schemars(range(min = 1, max = 1_048_576))]
    pub unauthenticated_body_bytes_in_flight_mib: u64,
    #[schemars(range(min = 1))]
    pub max_connections: usize,
    pub health_headroom: usize,
    /// Connections one peer address (an IPv6 peer's /64) may hold at once; past it one more
    /// place serves only a health probe, and any other new one is closed at once. 0: no such
    /// cap, the default: behind a reverse proxy every connection is the proxy's (README,
    /// "Connections").
    #[schemars(range(max = 1_048_576))]
    pub max_per_address: usize,
    /// The memory the JSON-RPC messages of `/mcp` and `/ops`, and the live channel's inbound
    /// frames (WebSocket and polling), may take once parsed, all at once (`svc_http`'s
    /// `parsed_json_budget.rs`): a 4 MiB body may parse into 150 MiB.
    #[schemars(range(min = 1, max = 1_048_576))]
    pub parsed_json_mib_in_flight: u64,
}

impl Default for ConnectionSettings {
    fn default() -> Self {
        Self {
            header_read_timeout_seconds: 10,
            idle_timeout_seconds: 60,
            body_read_timeout_seconds: 60,
            body_bytes_in_flight_mib: 256,
            unauthenticated_body_bytes_in_flight_mib: 32,
            max_connections: 10_000,
            health_headroom: 16,
            max_per_address: 0,
            parsed_json_mib_in_flight: 1024,
        }
    }
}

/// The OAuth 2.1 surface for MCP hosts (Document 2); off unless `enabled`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct OAuthSettings {
    pub enabled: bool,
    /// Empty: the public base URL.
    pub issuer: String,
    /// Empty: the built-in consent form.
    pub consent_url: String,
    pub trust_proxy: bool,
    pub code_lifetime_seconds: u64,
}

/// Public-demo mode (`svc serve --public-demo`, Document 2, Limits): cold generations per remote
/// address in a fixed window, counted in memory per replica; off, generations are unlimited.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct PublicDemoSettings {
    pub enabled: bool,
    /// Document 2: 30 per 10 minutes.
    pub generations_per_window: u32,
    #[schemars(range(min = 1, max = 31_536_000))]
    pub window_seconds: u64,
    /// Count against the last `X-Forwarded-For` entry instead of the peer address.
    pub trust_proxy: bool,
}

/// The tool-call limiter (Document 2, Errors): a limited `tools/call` answers an error result
/// with code `rate_limited` and `retryAfterMs`. Off when `calls_per_window` is 0.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ToolCallSettings {
    pub calls_per_window: u32,
    #[schemars(range(min = 1, max = 31_536_000))]
    pub window_seconds: u64,
    /// `identity` (the authenticated principal, across its apps) or `app`.
    pub per: String,
}

/// The MCP-Apps option (Document 2): the UI capability, tool `_meta.ui` and render `_meta`.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct McpAppsSettings {
    pub enabled: bool,
    /// The public WebSocket URL written into bootstraps; empty: the public base URL's `/ws`.
    pub ws_url: String,
    /// An external runtime bundle instead of `/_svc/iframe-runtime.js`; empty: ours.
    pub runtime_url: String,
    /// The external bundle's Subresource Integrity digest (`sha384-...`); required with it.
    pub runtime_integrity: String,
}

/// Which domains of the operator route `/ops` are wired (all by default).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct OpsSettings {
    pub apps: bool,
    pub orgs: bool,
    pub connector_keys: bool,
    pub coupons: bool,
    /// The blueprints domain (its dependency bundle is the blueprint cache and the generators).
    #[serde(default = "defaults::enabled")]
    pub blueprints: bool,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct LiveSettings {
    /// The live channel `/ws` and its polling fallback; the MCP-Apps option needs it.
    #[serde(default = "defaults::enabled")]
    pub enabled: bool,
    pub replay_buffer: u64,
    /// `auto` (PostgreSQL LISTEN/NOTIFY when the database is PostgreSQL), `in-process`,
    /// `postgres` or `nats` (the broker at `nats.url`).
    pub bus: String,
    /// Tool channels (`channel_subscribe`): no tool is polled more often than this.
    #[serde(default = "defaults::tool_channel_min_interval_ms")]
    #[schemars(range(min = 1, max = 86_400_000))]
    pub tool_channel_min_interval_ms: u64,
    #[serde(default = "defaults::tool_channels_per_socket")]
    pub tool_channels_per_socket: usize,
    #[serde(default = "defaults::tool_channel_max_payload_bytes")]
    pub tool_channel_max_payload_bytes: usize,
    #[serde(default = "defaults::tool_poll_timeout_ms")]
    #[schemars(range(min = 1, max = 3_600_000))]
    pub tool_poll_timeout_ms: u64,
    /// A socket that has not subscribed this long after it opened is closed (1008).
    #[serde(default = "defaults::subscribe_timeout_seconds")]
    #[schemars(range(min = 1, max = 86_400))]
    pub subscribe_timeout_seconds: u64,
    /// How often each replica asks whether the keys of its subscribed sockets still authenticate
    /// (one read per key; an expired key, or one revoked in the keys file, ends its channels
    /// within this time).
    #[serde(default = "defaults::key_recheck_seconds")]
    #[schemars(range(min = 1, max = 86_400))]
    pub key_recheck_seconds: u64,
    /// Operator-declared HTTP data sources a `streamSpec[*].source.tool` may name.
    #[serde(default)]
    pub poll_tools: Vec<PollToolSettings>,
}

/// One `[[live.poll_tools]]` entry: a GET whose JSON body is the channel payload.
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct PollToolSettings {
    pub name: String,
    pub url: String,
    /// The tool's interval, and the shortest one a contract may ask for.
    #[serde(default = "defaults::poll_tool_interval_ms")]
    #[schemars(range(min = 1, max = 86_400_000))]
    pub interval_ms: u64,
    #[schemars(range(min = 1, max = 3_600_000))]
    pub timeout_ms: Option<u64>,
}

mod defaults {
    pub fn enabled() -> bool {
        true
    }
    pub fn tool_channel_min_interval_ms() -> u64 {
        1000
    }
    pub fn subscribe_timeout_seconds() -> u64 {
        30
    }
    pub fn key_recheck_seconds() -> u64 {
        60
    }
    pub fn tool_channels_per_socket() -> usize {
        8
    }
    pub fn tool_channel_max_payload_bytes() -> usize {
        64 * 1024
    }
    pub fn tool_poll_timeout_ms() -> u64 {
        5000
    }
    pub fn poll_tool_interval_ms() -> u64 {
        5000
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ServerSettings {
    pub host: String,
    pub port: u16,
    pub data_dir: PathBuf,
    pub database_url: String,
    pub dev_allow_all: bool,
    /// The operator's acknowledgement that `dev_allow_all` on a non-loopback address lets anyone
    /// who reaches the port act as `builder`; without it such a server refuses to start.
    #[serde(default)]
    pub dev_allow_all_remote: bool,
    pub public_base_url: String,
    pub allowed_hosts: Vec<String>,
    pub log_format: LogFormat,
    /// The wsToken signing secrets: the first signs, every one verifies (rotation). Empty: one is
    /// generated once and kept (`crate::secrets`).
    pub ws_secret: SecretList,
    /// Database pool bounds; 0 keeps the backend's default (SQLite 8, PostgreSQL 16).
    #[serde(default)]
    pub database_max_connections: u32,
    #[serde(default)]
    pub database_min_connections: u32,
    /// PostgreSQL: this server is the only one on its database; it claims it alone and keeps the
    /// read paths' rows in memory, as on SQLite (`svc_sql::DatabaseClaim`).
    #[serde(default)]
    pub database_sole_server: bool,
}

/// One secret or a list of them (`"s1"`, `["s1", "s0"]`, `SVC_SERVER__WS_SECRET=s1,s0`).
#[derive(Clone, Deserialize, Serialize, JsonSchema, PartialEq, Eq)]
#[serde(untagged)]
pub enum SecretList {
    One(String),
    Many(Vec<String>),
}

impl SecretList {
    /// The configured secrets in order, blanks dropped.
    pub fn secrets(&self) -> Vec<&str> {
        match self {
            Self::One(s) => vec![s.as_str()],
            Self::Many(list) => list.iter().map(String::as_str).collect(),
        }
        .into_iter()
        .filter(|s| !s.trim().is_empty())
        .collect()
    }
}

/// Never the secrets themselves: settings reach logs and error messages.
impl std::fmt::Debug for SecretList {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "<{} secret(s)>", self.secrets().len())
    }
}

impl From<&str> for SecretList {
    fn from(secret: &str) -> Self {
        Self::One(secret.to_owned())
    }
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct SessionSettings {
    pub default_ttl_seconds: u64,
}

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct GenerationSettings {
    /// Cold generations running at once; 0 would leave every render waiting for a slot.
    #[schemars(range(min = 1, max = 1024))]
    pub concurrency: usize,
    pub max_waiting: usize,
    #[schemars(range(max = 86_400))]
    pub max_wait_seconds: u64,
    /// Generator slug of renders that name neither a generator nor a model (`builtin`).
    #[serde(default = "builtin_slug")]
    pub default_generator: String,
    /// Route the language-model generators use when a render names no `infra.model`; empty: none.
    #[serde(default)]
    pub default_model: String,
    /// Output tokens asked of a provider per model call (lowered to what the model's context
    /// leaves); a reply may be 1 KiB of body per token, at least 16 MiB. At most
    /// `svc_generation::llm::MAX_OUTPUT_TOKENS` (131072).
    #[serde(default = "default_max_output_tokens")]
    #[schemars(range(min = 1, max = svc_generation::llm::MAX_OUTPUT_TOKENS))]
    pub max_output_tokens: u32,
    #[serde(default = "default_temperature")]
    pub temperature: f32,
    /// Deadline of one model call, request to last byte.
    #[serde(default = "default_attempt_timeout")]
    #[schemars(range(min = 1, max = 86_400))]
    pub attempt_timeout_seconds: u64,
    /// Longest silence inside a reply stream.
    #[serde(default = "default_idle_timeout")]
    #[schemars(range(min = 1, max = 86_400))]
    pub idle_timeout_seconds: u64,
    /// Attempts per model call on transient provider errors, the first included.
    #[serde(default = "default_max_attempts")]
    #[schemars(range(min = 1, max = 20))]
    pub max_attempts: u32,
    /// Longest `retry-after` honoured; a provider asking for more fails the render at once.
    #[serde(default = "default_max_retry_wait")]
    #[schemars(range(max = 86_400))]
    pub max_retry_wait_seconds: u64,
    /// Ask providers whose registry entry supports it for a JSON reply `{ "tsx": ... }`.
    #[serde(default = "default_structured_output")]
    pub structured_output: bool,
    /// Providers by route prefix (`openai` in `openai:gpt-4o`).
    #[serde(default)]
    pub providers: std::collections::BTreeMap<String, ProviderSettings>,
    /// Routes added to (or replacing entries of) the built-in model registry.
    #[serde(default)]
    pub models: Vec<ModelSettings>,
}

/// One language-model provider (`[generation.providers.<name>]`).
#[derive(Clone, Deserialize, Serialize, JsonSchema)]
pub struct ProviderSettings {
    /// `openai` (Chat Completions; also Mistral, vLLM, llama.cpp), `anthropic`, `gemini` or `ollama`.
    pub wire: String,
    pub base_url: String,
    /// The key itself; prefer `api_key_env`. Empty: read `api_key_env`.
    #[serde(default)]
    pub api_key: String,
    /// Environment variable holding the key (`OPENAI_API_KEY`, ...). Empty: no key.
    #[serde(default)]
    pub api_key_env: String,
    /// Whether a render may go to this provider without a key; default: only `ollama` may.
    #[serde(default)]
    pub key_required: Option<bool>,
}

impl std::fmt::Debug for ProviderSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProviderSettings")
            .field("wire", &self.wire)
            .field("base_url", &self.base_url)
            .field("api_key", &if self.api_key.is_empty() { "" } else { "<set>" })
            .field("api_key_env", &self.api_key_env)
            .field("key_required", &self.key_required)
            .finish()
    }
}

impl ProviderSettings {
    /// The key: `api_key`, else the variable `api_key_env` names; blank counts as none.
    pub fn key(&self) -> Option<String> {
        let from_env = || {
            (!self.api_key_env.is_empty())
                .then(|| std::env::var(&self.api_key_env).ok())
                .flatten()
        };
        Some(self.api_key.clone())
            .filter(|k| !k.trim().is_empty())
            .or_else(from_env)
            .map(|k| k.trim().to_owned())
            .filter(|k| !k.is_empty())
    }
}

/// A model registry entry from configuration (`[[generation.models]]`).
#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
pub struct ModelSettings {
    /// `provider:model`.
    pub route: String,
    pub context_tokens: u32,
    #[serde(default)]
    pub structured_output: bool,
    /// An OpenAI reasoning model: `max_completion_tokens`, no `temperature`.
    #[serde(default)]
    pub reasoning: bool,
}

fn builtin_slug() -> String {
    "builtin".into()
}

fn default_max_output_tokens() -> u32 {
    8192
}

fn default_temperature() -> f32 {
    0.2
}

fn default_attempt_timeout() -> u64 {
    180
}

fn default_idle_timeout() -> u64 {
    60
}

fn default_max_attempts() -> u32 {
    3
}

fn default_max_retry_wait() -> u64 {
    20
}

fn default_structured_output() -> bool {
    true
}

/// `server.log_format`: any other value is refused when the settings load.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum LogFormat {
    /// Human-readable lines.
    Text,
    /// One JSON object per line.
    Json,
}

impl<'de> Deserialize<'de> for LogFormat {
    /// Refused as other choices are (`must be text or json, not `xml``), where serde's derive
    /// would answer with the enum's Rust name.
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let written = String::deserialize(deserializer)?;
        match written.as_str() {
            "text" => Ok(Self::Text),
            "json" => Ok(Self::Json),
            other => Err(serde::de::Error::custom(format!(
                "must be text or json, not `{}`",
                svc_domain::text::excerpt(other)
            ))),
        }
    }
}

impl Settings {
    /// The database URL, defaulting to SQLite in the data directory.
    pub fn database_url(&self) -> String {
        if self.server.database_url.is_empty() {
            format!("sqlite://{}?mode=rwc", self.server.data_dir.join("svc.db").display())
        } else {
            self.server.database_url.clone()
        }
    }

    pub fn public_base_url(&self, port: u16) -> String {
        if self.server.public_base_url.is_empty() {
            let host = match self.server.host.as_str() {
                "0.0.0.0" | "::" | "[::]" => "127.0.0.1".to_owned(),
                h => crate::exposure::authority_host(h),
            };
            format!("http://{host}:{port}")
        } else {
            self.server.public_base_url.trim_end_matches('/').to_owned()
        }
    }
}

#[cfg(test)]
mod read_somewhere;
#[cfg(test)]
mod tests;
