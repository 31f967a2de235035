//! Tool channels: `streamSpec[*].source.tool` channels that the server fills by polling a tool
//! while a card is subscribed (`channel_subscribe` on `/ws`, docs/live-channel.md).
//!
//! Which tools are pollable is a deployment decision: the server's own read-only agent tools
//! (`svc_get_session`) and the HTTP data sources an operator declares in `[[live.poll_tools]]`.
//! Every other tool name answers `TOOL_UNAVAILABLE`.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::{Value, json};
use svc_domain::contract::{CompiledSchema, Contract, EntrySchema, compile_schema, entry_validator_key};
use svc_domain::session::SessionStatus;
use svc_domain::text::excerpt;

use super::agent::{AgentError, AgentService, Caller};
use super::cpu_gate::{CpuGate, CpuWorkError, SCHEMA_WORK_DEADLINE};
use crate::ports::pollable::{PollFailure, PollTarget, PollableTool};

/// Bounds of tool channels, per deployment.
#[derive(Debug, Clone)]
pub struct ToolChannelSettings {
    /// No tool is polled more often than this, whatever the contract asks.
    pub min_interval: Duration,
    /// Tool channels one socket may hold at once.
    pub max_channels_per_socket: usize,
    /// Largest payload (serialized JSON) a poll may produce.
    pub max_payload_bytes: usize,
    /// How long one poll may take, unless the tool says otherwise.
    pub poll_timeout: Duration,
}

impl Default for ToolChannelSettings {
    fn default() -> Self {
        Self {
            min_interval: Duration::from_secs(1),
            max_channels_per_socket: 8,
            max_payload_bytes: 64 * 1024,
            poll_timeout: Duration::from_secs(5),
        }
    }
}

/// Why a channel is refused or a poll produced no payload; `code()` is the `channel_error` code.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ChannelError {
    #[error("`{}` is not a streamSpec channel with a source.tool in this session's contract", excerpt(.0))]
    UnknownChannel(String),
    #[error("`{}` is not a tool this server can poll", excerpt(.0))]
    ToolUnavailable(String),
    #[error("at most {0} tool channels per connection")]
    TooManyChannels(usize),
    #[error("{0}")]
    PollFailed(String),
    #[error("the tool did not answer within {0} ms")]
    Timeout(u128),
    #[error("{0}")]
    BadPayload(String),
    #[error("the result is larger than {0} bytes")]
    PayloadTooLarge(usize),
    #[error("the session expired")]
    SessionExpired,
    /// The payload's check needed a slot of the CPU gate and none freed in time.
    #[error("the server is busy with other heavy work; retry in {0} s")]
    Busy(u64),
    #[error("internal error")]
    Internal,
}

impl ChannelError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::UnknownChannel(_) => "UNKNOWN_CHANNEL",
            Self::ToolUnavailable(_) => "TOOL_UNAVAILABLE",
            Self::TooManyChannels(_) => "TOO_MANY_CHANNELS",
            Self::PollFailed(_) => "POLL_FAILED",
            Self::Timeout(_) => "POLL_TIMEOUT",
            Self::BadPayload(_) => "BAD_PAYLOAD",
            Self::PayloadTooLarge(_) => "PAYLOAD_TOO_LARGE",
            Self::SessionExpired => "SESSION_EXPIRED",
            Self::Busy(_) => "SERVER_BUSY",
            Self::Internal => "INTERNAL",
        }
    }
}

/// A channel that may be polled: which tool, how often, for which session.
#[derive(Clone)]
pub struct ChannelPlan {
    pub tool_name: String,
    pub interval: Duration,
    pub target: PollTarget,
    tool: Arc<dyn PollableTool>,
    /// `streamSpec[channel].schema`, compiled once per distinct schema; every payload must match it.
    schema: Option<Arc<CompiledSchema>>,
}

#[derive(Clone)]
pub struct ToolChannelService {
    tools: Arc<HashMap<String, Arc<dyn PollableTool>>>,
    settings: Arc<ToolChannelSettings>,
    /// Channel schemas compiled once per distinct schema: a card may send `channel_subscribe`
    /// many times a second, and each used to compile its channel's schema again.
    compiled: moka::sync::Cache<String, Arc<CompiledSchema>>,
    /// The deployment's gate of CPU-heavy work: a payload's check that is not light runs there.
    cpu: CpuGate,
}

/// Compiled channel schemas kept, by weight ([`CompiledSchema::weight_bytes`]: their size and
/// what their patterns may take compiled). Counted (256 of them), schemas of 64 patterns each
/// could keep 4 GiB.
const COMPILED_SCHEMA_BYTES: u64 = 16 << 20;

impl ToolChannelService {
    pub fn new(tools: HashMap<String, Arc<dyn PollableTool>>, settings: ToolChannelSettings) -> Self {
        Self {
            tools: Arc::new(tools),
            settings: Arc::new(settings),
            compiled: moka::sync::Cache::builder()
                .weigher(|_key: &String, compiled: &Arc<CompiledSchema>| {
                    u32::try_from(compiled.weight_bytes()).unwrap_or(u32::MAX)
                })
                .max_capacity(COMPILED_SCHEMA_BYTES)
                .build(),
            cpu: CpuGate::unbounded(),
        }
    }

    /// Checks payloads that are not light through `cpu` (without it nothing is refused).
    pub fn with_cpu_gate(self, cpu: CpuGate) -> Self {
        Self { cpu, ..self }
    }

    pub fn settings(&self) -> &ToolChannelSettings {
        &self.settings
    }

    /// Names of the pollable tools, sorted.
    pub fn tool_names(&self) -> Vec<String> {
        let mut names: Vec<String> = self.tools.keys().cloned().collect();
        names.sort();
        names
    }

    /// Checks `channel` against the session's agreed contract and picks its tool and interval:
    /// the contract's `intervalMs`, else the tool's own interval, never below the tool's interval
    /// nor the deployment minimum.
    pub async fn plan(
        &self,
        contract: &Contract,
        session_id: &str,
        app_id: &str,
        channel: &str,
    ) -> Result<ChannelPlan, ChannelError> {
        let source = contract
            .stream_source(channel)
            .ok_or_else(|| ChannelError::UnknownChannel(channel.to_owned()))?;
        let tool = self
            .tools
            .get(&source.tool)
            .ok_or_else(|| ChannelError::ToolUnavailable(source.tool.clone()))?;
        // Agreed contracts hold only schemas that compiled at negotiation; one stored before the
        // complexity budgets may be over one, and is refused rather than run.
        let schema = match contract.stream_channel(channel) {
            Some(_) => Some(self.compiled_schema(contract, channel).await?),
            None => None,
        };
        let asked = source.interval_ms.map_or(tool.interval(), Duration::from_millis);
        let interval = asked.max(tool.interval()).max(self.settings.min_interval);
        Ok(ChannelPlan {
            tool_name: source.tool,
            interval,
            target: PollTarget {
                session_id: session_id.to_owned(),
                app_id: app_id.to_owned(),
                channel: channel.to_owned(),
                max_bytes: self.settings.max_payload_bytes,
            },
            tool: tool.clone(),
            schema,
        })
    }

    /// `schema` compiled, kept from an earlier subscribe or compiled through the CPU gate: the
    /// card's contract may hold many costly patterns, and a compile on the socket's async worker
    /// would stall every connection served there (the schema cache's rule, `agent/schema_cache.rs`).
    /// Two subscribes racing on a new schema may both compile it; neither waits on the other.
    /// Keyed once per contract and channel (`entry_validator_key`), as an emit's check is.
    async fn compiled_schema(&self, contract: &Contract, channel: &str) -> Result<Arc<CompiledSchema>, ChannelError> {
        let entry = EntrySchema::Stream(channel.to_owned());
        let Some(key) = entry_validator_key(contract, &entry) else {
            return Err(ChannelError::UnknownChannel(channel.to_owned()));
        };
        if let Some(compiled) = self.compiled.get(&key) {
            return Ok(compiled);
        }
        let held = contract.clone();
        let compiling = self
            .cpu
            .start(move || {
                let schema = held.entry_schema(&entry).unwrap_or_default();
                compile_schema(&schema).map(Arc::new)
            })
            .await
            .map_err(|busy| ChannelError::Busy(busy.retry_after_seconds))?;
        // The deadline is on the compile alone, not on the wait for a slot.
        let compiled = tokio::time::timeout(SCHEMA_WORK_DEADLINE, compiling)
            .await
            .map_err(|_| {
                ChannelError::BadPayload(format!(
                    "streamSpec.{channel}.schema took longer than {} s to compile",
                    SCHEMA_WORK_DEADLINE.as_secs()
                ))
            })?
            .map_err(|panicked| {
                refused_work(
                    CpuWorkError::Panicked(panicked.to_string()),
                    "a tool channel's schema compile",
                )
            })?
            .map_err(|refused| {
                ChannelError::BadPayload(format!("streamSpec.{channel}.schema is refused: {refused}"))
            })?;
        self.compiled.insert(key, compiled.clone());
        Ok(compiled)
    }

    /// One poll: the payload, or why there is none.
    pub async fn poll(&self, plan: &ChannelPlan) -> Result<Value, ChannelError> {
        let timeout = plan.tool.timeout().unwrap_or(self.settings.poll_timeout);
        let payload = match tokio::time::timeout(timeout, plan.tool.poll(&plan.target)).await {
            Err(_) => return Err(ChannelError::Timeout(timeout.as_millis())),
            Ok(Err(failure)) => return Err(failure.into()),
            Ok(Ok(payload)) => payload,
        };
        if payload.to_string().len() > self.settings.max_payload_bytes {
            return Err(ChannelError::PayloadTooLarge(self.settings.max_payload_bytes));
        }
        // The card was promised the channel's schema, as svc_emit promises it.
        if let Some(violation) = self.first_violation(plan.schema.as_ref(), &payload).await? {
            return Err(ChannelError::BadPayload(format!(
                "the result does not match streamSpec.{}.schema at `{}`: {}",
                plan.target.channel,
                if violation.path.is_empty() {
                    "/"
                } else {
                    &violation.path
                },
                violation.message
            )));
        }
        Ok(payload)
    }

    /// The payload's first violation of `schema`: a light check where the poller is, any other
    /// through the CPU gate (a pattern may backtrack, a payload may be large), as svc_emit checks.
    async fn first_violation(
        &self,
        schema: Option<&Arc<CompiledSchema>>,
        payload: &Value,
    ) -> Result<Option<svc_domain::contract::SchemaViolation>, ChannelError> {
        let Some(schema) = schema else { return Ok(None) };
        if let Some(found) = schema.light_violations(payload) {
            return Ok(found.into_iter().next());
        }
        let (schema, payload) = (schema.clone(), payload.clone());
        self.cpu
            .run(move || schema.violations(&payload).into_iter().next())
            .await
            .map_err(|refused| refused_work(refused, "a tool channel's payload check"))
    }
}

/// The channel error for CPU work the gate did not run to its end; `what` names it in the log.
fn refused_work(refused: CpuWorkError, what: &str) -> ChannelError {
    match refused {
        CpuWorkError::Busy(busy) => ChannelError::Busy(busy.retry_after_seconds),
        CpuWorkError::Panicked(reason) => {
            tracing::error!(%reason, "{what} panicked");
            ChannelError::Internal
        }
    }
}

impl From<PollFailure> for ChannelError {
    fn from(failure: PollFailure) -> Self {
        match failure {
            PollFailure::Failed(message) => Self::PollFailed(message),
            PollFailure::NotJson(message) => Self::BadPayload(message),
            PollFailure::TooLarge(limit) => Self::PayloadTooLarge(limit),
            PollFailure::SessionGone => Self::SessionExpired,
        }
    }
}

/// `svc_get_session` as a tool channel: the subscribed session's projection (the same fields as
/// the tool's result). Unlike the tool it does not bump the activity heartbeat, so a card that
/// merely shows the channel does not keep its session alive.
pub struct SessionProjectionTool {
    agent: AgentService,
    interval: Duration,
}

/// The agent tool the built-in pollable tool mirrors.
pub const SESSION_PROJECTION_TOOL: &str = "svc_get_session";

impl SessionProjectionTool {
    pub fn new(agent: AgentService, interval: Duration) -> Self {
        Self { agent, interval }
    }
}

#[async_trait::async_trait]
impl PollableTool for SessionProjectionTool {
    fn interval(&self) -> Duration {
        self.interval
    }

    async fn poll(&self, target: &PollTarget) -> Result<Value, PollFailure> {
        let caller = Caller {
            principal_id: format!("live:{}", target.session_id),
            app_id: target.app_id.clone(),
            key_id: None,
        };
        let snapshot = match self.agent.live_snapshot(&caller, &target.session_id).await {
            Ok(snapshot) => snapshot,
            Err(AgentError::SessionNotFound) => return Err(PollFailure::SessionGone),
            Err(other) => {
                tracing::error!(error = ?other, "session projection poll failed");
                return Err(PollFailure::Failed("the session could not be read".into()));
            }
        };
        let session = &snapshot.session;
        if session.head.status_at(self.agent.now()) != SessionStatus::Active {
            return Err(PollFailure::SessionGone);
        }
        // Epoch milliseconds, like the tool's result.
        let mut body = json!({
            "variant": "render",
            "id": session.session_id,
            "appId": session.app_id,
            "eventSequence": session.event_sequence,
            "createdAt": session.created_at.timestamp_millis(),
            "lastActivityAt": session.head.last_activity_at.timestamp_millis(),
            "expiresAt": session.head.expires_at().timestamp_millis(),
        });
        let context = session.ui_context();
        if context.as_object().is_some_and(|m| !m.is_empty()) {
            body["contextSnapshot"] = context;
        }
        Ok(body)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Fixed(Duration, Value);

    #[async_trait::async_trait]
    impl PollableTool for Fixed {
        fn interval(&self) -> Duration {
            self.0
        }

        async fn poll(&self, _: &PollTarget) -> Result<Value, PollFailure> {
            Ok(self.1.clone())
        }
    }

    fn service(max_payload_bytes: usize) -> ToolChannelService {
        let mut tools: HashMap<String, Arc<dyn PollableTool>> = HashMap::new();
        tools.insert("slow".into(), Arc::new(Fixed(Duration::from_secs(10), json!(1))));
        tools.insert(
            "fast".into(),
            Arc::new(Fixed(Duration::from_millis(1), json!("x".repeat(100)))),
        );
        ToolChannelService::new(
            tools,
            ToolChannelSettings {
                min_interval: Duration::from_millis(500),
                max_payload_bytes,
                ..ToolChannelSettings::default()
            },
        )
    }

    fn contract() -> Contract {
        Contract::try_from(json!({ "streamSpec": {
            "a": { "mode": "replace", "schema": {}, "source": { "tool": "slow", "intervalMs": 250 } },
            "b": { "mode": "replace", "schema": {}, "source": { "tool": "fast", "intervalMs": 2000 } },
            "c": { "mode": "replace", "schema": {}, "source": { "tool": "fast" } },
            "d": { "mode": "replace", "schema": {}, "source": { "tool": "nope" } },
            "plain": { "mode": "append", "schema": {} }
        } }))
        .unwrap()
    }

    #[tokio::test]
    async fn the_interval_is_the_slowest_of_contract_tool_and_floor() {
        let s = service(1024);
        let plan = async |c: &str| s.plan(&contract(), "s", "app", c).await.map(|p| p.interval);
        assert_eq!(
            plan("a").await,
            Ok(Duration::from_secs(10)),
            "the tool's interval is a floor"
        );
        assert_eq!(
            plan("b").await,
            Ok(Duration::from_secs(2)),
            "the contract may ask for slower"
        );
        assert_eq!(
            plan("c").await,
            Ok(Duration::from_millis(500)),
            "the deployment minimum is a floor"
        );
    }

    #[tokio::test]
    async fn channels_without_a_pollable_source_are_refused_with_their_code() {
        let s = service(1024);
        let code = async |c: &str| s.plan(&contract(), "s", "app", c).await.err().map(|e| e.code());
        assert_eq!(code("d").await, Some("TOOL_UNAVAILABLE"));
        assert_eq!(code("plain").await, Some("UNKNOWN_CHANNEL"));
        assert_eq!(code("missing").await, Some("UNKNOWN_CHANNEL"));
    }

    #[tokio::test]
    async fn a_channel_planned_again_reuses_its_compiled_schema() {
        let s = service(1024);
        let first = s.plan(&contract(), "s", "app", "b").await.unwrap().schema.unwrap();
        let again = s.plan(&contract(), "s", "app", "b").await.unwrap().schema.unwrap();
        assert!(Arc::ptr_eq(&first, &again), "compiled once");
    }

    #[tokio::test]
    async fn an_oversized_payload_is_refused() {
        let plan = service(1024).plan(&contract(), "s", "app", "c").await.unwrap();
        assert!(service(1024).poll(&plan).await.is_ok());
        let small = service(50);
        let plan = small.plan(&contract(), "s", "app", "c").await.unwrap();
        assert_eq!(small.poll(&plan).await.unwrap_err().code(), "PAYLOAD_TOO_LARGE");
    }

    #[tokio::test]
    async fn a_payload_check_that_is_not_light_takes_a_slot_of_the_cpu_gate() {
        let gate = CpuGate::new(1, Duration::from_millis(200));
        let s = service(1024).with_cpu_gate(gate.clone());
        let contract = Contract::try_from(json!({ "streamSpec": {
            // A pattern may backtrack: never a light check.
            "patterned": { "mode": "replace", "schema": { "type": "string", "pattern": "^x+$" }, "source": { "tool": "fast" } },
            "refused": { "mode": "replace", "schema": { "type": "string", "pattern": "^y+$" }, "source": { "tool": "fast" } },
            "plain": { "mode": "replace", "schema": { "type": "string" }, "source": { "tool": "fast" } }
        } }))
        .unwrap();
        // Planned before the slot is taken: compiling a new schema needs a slot too.
        let patterned = s.plan(&contract, "s", "app", "patterned").await.unwrap();
        let plain = s.plan(&contract, "s", "app", "plain").await.unwrap();
        let refused = s.plan(&contract, "s", "app", "refused").await.unwrap();

        // The gate's one slot is taken by other heavy work.
        let (release, released) = std::sync::mpsc::channel::<()>();
        let holding = gate
            .start(move || released.recv().unwrap())
            .await
            .expect("the free slot");
        assert_eq!(s.poll(&patterned).await, Err(ChannelError::Busy(1)));
        assert_eq!(
            s.poll(&plain).await,
            Ok(json!("x".repeat(100))),
            "a light check needs no slot"
        );

        release.send(()).unwrap();
        holding.await.unwrap();
        assert_eq!(s.poll(&patterned).await, Ok(json!("x".repeat(100))));
        let refused = s.poll(&refused).await.unwrap_err();
        assert_eq!(refused.code(), "BAD_PAYLOAD", "{refused}");
    }

    #[tokio::test]
    async fn a_schema_not_yet_compiled_is_compiled_through_the_cpu_gate() {
        let gate = CpuGate::new(1, Duration::from_millis(200));
        let s = service(1024).with_cpu_gate(gate.clone());
        let (release, released) = std::sync::mpsc::channel::<()>();
        let holding = gate
            .start(move || released.recv().unwrap())
            .await
            .expect("the free slot");
        let busy = s.plan(&contract(), "s", "app", "b").await.map(|p| p.interval);
        assert_eq!(busy, Err(ChannelError::Busy(1)), "no compile on the caller's worker");
        assert_eq!(
            s.plan(&contract(), "s", "app", "plain")
                .await
                .map(|p| p.interval)
                .unwrap_err()
                .code(),
            "UNKNOWN_CHANNEL",
            "refusals that need no compile still answer"
        );
        release.send(()).unwrap();
        holding.await.unwrap();
        assert!(s.plan(&contract(), "s", "app", "b").await.is_ok());
    }
}
