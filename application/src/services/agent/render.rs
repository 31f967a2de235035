use std::net::IpAddr;

use chrono::{DateTime, Utc};
use serde_json::Value;
use svc_domain::contract::draft_limits::check_merged_variance;
use svc_domain::contract::{Contract, contract_hash, variant_key};
use svc_domain::handshake::{HandshakeAction, Origin};
use svc_domain::model_route::parse_model_route;
use svc_domain::refusal::RefusalEntry;
use svc_domain::session::{SessionHead, checked_ttl};
use tracing::Instrument;

use std::sync::Arc;

use super::blueprint_cache::CachedBlueprints;
use super::catalogs::theme_catalog;
use super::untrusted_contract::negotiate_untrusted;
use super::{AgentError, AgentSettings, Caller, ComponentCode, GenerationLimit, GenerationQueue, SchemaCache};
use crate::ports::agent::{
    BlueprintRecord, EventBus, EventRepository, HandshakeRecord, HandshakeRepository, HostSession, LiveEvent,
    SessionRecord, SessionRepository, host_topic,
};
use crate::ports::generation::{Compiler, Generator};
use crate::ports::telemetry::GenerationTelemetry;
use crate::ports::{Clock, Ids};
use crate::services::cpu_gate::CpuGate;

mod admissions;
#[cfg(all(test, feature = "testing"))]
mod deadline_tests;
mod generation;

use self::admissions::Admissions;
use self::generation::{Generation, failure_code};
use super::handshake_claim::HandshakeClaim;
use super::lifecycle::ProgressObserver;

#[derive(Debug, Clone, Default)]
pub struct RenderOverride {
    pub contract: Option<Value>,
    pub variance: Option<Value>,
}

#[derive(Debug, Clone)]
pub struct RenderCommand {
    pub handshake_id: String,
    pub props: Value,
    pub theme_id: Option<String>,
    pub model: Option<String>,
    pub override_: Option<RenderOverride>,
    pub ttl_seconds: Option<u64>,
    pub host: HostSession,
    /// The remote address of the request, counted by the public-demo generation limit.
    pub origin: Option<IpAddr>,
    /// Told of each generation stage (a cache hit has none), beside the card's lifecycle channel.
    pub progress: Option<ProgressObserver>,
}

/// The `cache` block of a rendered or failed result.
#[derive(Debug, Clone, PartialEq)]
pub struct CacheReport {
    pub hit: bool,
    pub similarity: Option<f64>,
    pub cached_blueprint_id: Option<String>,
    pub llm_calls_avoided: u32,
    pub kind: Option<String>,
    pub reason: Option<String>,
}

/// Identity fields present on `rendered` and `failed` results.
#[derive(Debug, Clone, PartialEq)]
pub struct RenderIdentity {
    pub session_id: String,
    pub app_id: String,
    pub action: HandshakeAction,
    pub contract_hash: String,
    pub blueprint_id: String,
    pub variant_key: String,
    pub cache: CacheReport,
}

/// The compiled component, the agreed contract and the head props of a new render.
#[derive(Debug, Clone, PartialEq)]
pub struct FirstPaint {
    pub component_code: ComponentCode,
    pub contract: Contract,
    pub props: Value,
}

/// A pre-generation refusal; the handshake stays intact.
#[derive(Debug, Clone, PartialEq)]
pub struct Refusal {
    pub entry: RefusalEntry,
    pub message: String,
    pub balance_cents_at_check: Option<i64>,
}

#[derive(Debug, Clone, PartialEq)]
pub enum RenderResult {
    Rendered {
        identity: RenderIdentity,
        has_actions: bool,
        theme_id: String,
        expires_at: DateTime<Utc>,
        last_sequence: i64,
        /// What the card paints without its live channel: the tool result carries it, so a
        /// host that allows no connection still shows the card.
        first_paint: FirstPaint,
    },
    Failed {
        identity: RenderIdentity,
        code: &'static str,
        message: String,
    },
    Refused(Refusal),
}

/// The contract, variance and blueprint a render will materialise.
struct Plan {
    contract: Contract,
    variance: Value,
    cached: Option<Arc<BlueprintRecord>>,
    planned_blueprint_id: String,
    /// The handshake's action, unless a planned reuse generates after all.
    action: HandshakeAction,
    cache_report: CacheReport,
}

/// `svc_render`: turns a handshake into a session, from the cache or by a generation.
#[derive(Clone)]
pub struct RenderService {
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn Ids>,
    pub handshakes: Arc<dyn HandshakeRepository>,
    pub sessions: Arc<dyn SessionRepository>,
    /// The `_svc:lifecycle` deliveries of a generation.
    pub events: Arc<dyn EventRepository>,
    pub blueprints: CachedBlueprints,
    pub bus: Arc<dyn EventBus>,
    pub generator: Arc<dyn Generator>,
    pub compiler: Arc<dyn Compiler>,
    pub cpu: CpuGate,
    pub settings: Arc<AgentSettings>,
    pub schemas: SchemaCache,
    pub queue: GenerationQueue,
    /// `--public-demo`: cold generations per remote address; absent, generations are unlimited.
    pub generation_limit: Option<GenerationLimit>,
    /// Gadgets declared by the app manifest, offered to a generation its contract allows.
    pub declared_gadgets: Vec<svc_domain::gadgets::GadgetDescriptor>,
    pub telemetry: Arc<dyn GenerationTelemetry>,
    /// Hosted mode: who pays for a cold generation, and with which provider keys.
    pub account: Option<crate::services::hosted::GenerationAccount>,
    /// Per-app render rates (`svc apps configure --rate-limit-per-minute`), shared by replicas.
    pub app_render_limit: Option<super::AppRenderLimit>,
}

impl RenderService {
    #[tracing::instrument(name = "render", skip_all, fields(app_id = %caller.app_id, handshake_id = %cmd.handshake_id))]
    pub async fn render(&self, caller: &Caller, mut cmd: RenderCommand) -> Result<RenderResult, AgentError> {
        // Input parsing first (Document 1: a bad `infra.model` "fails input parsing"), before any
        // record is looked up: the same arguments get the same error whatever state they name.
        let model = cmd
            .model
            .as_deref()
            .map(|raw| {
                parse_model_route(raw, &self.settings.model_registry)
                    .map_err(|e| AgentError::invalid("infra.model", e.to_string()))
            })
            .transpose()?;
        let theme_id = self.checked_theme(cmd.theme_id.as_deref())?;
        let ttl = match cmd.ttl_seconds {
            Some(ttl) => checked_ttl(ttl).map_err(|e| AgentError::invalid("ttlSeconds", e.to_string()))?,
            None => self.settings.default_session_ttl_seconds,
        };
        let now = self.clock.now();
        let handshake = self.usable_handshake(caller, &cmd.handshake_id, now).await?;
        let plan = self.plan(caller, &handshake, cmd.override_.as_ref()).await?;
        super::update::props_within_budget(&cmd.props)?;
        // Handed to the check and back, not copied.
        cmd.props = self
            .schemas
            .check_props(&plan.contract, std::mem::take(&mut cmd.props))
            .await?
            .map_err(|violations| AgentError::ContractViolation {
                target: "props".into(),
                violations,
            })?;
        // Hosted: a render over the app's per-minute rate is refused before any work. From here
        // on, a render turned away before any work is given back to every window it counted in.
        let mut admissions = Admissions::default();
        if let Some(limit) = &self.app_render_limit {
            match limit.admit(&caller.app_id, now).await? {
                Ok(admission) => admissions.app = admission.map(|admission| (limit, admission)),
                Err(refusal) => return Ok(RenderResult::Refused(refusal)),
            }
        }
        // Public demo: a cold generation over the address's window is refused before any work;
        // the handshake stays pending.
        if let (None, Some(limit)) = (&plan.cached, &self.generation_limit) {
            match limit.admit(cmd.origin, now) {
                Ok(admission) => admissions.demo = Some((limit, admission)),
                Err(refusal) => {
                    admissions.give_back().await;
                    return Ok(RenderResult::Refused(refusal));
                }
            }
        }
        // Hosted: a cold generation is paid for up front (a reservation, refunded if nothing is
        // produced); an empty wallet refuses the render before any work.
        let session_id = self.ids.uuid();
        let reservation = match (&plan.cached, &self.account) {
            (None, Some(account)) => {
                let model = model.as_ref().map(|m| m.canonical());
                match account
                    .reserve(caller, model.as_deref(), handshake.generator.as_deref(), &session_id)
                    .await?
                {
                    Ok(reservation) => Some(reservation),
                    Err(refusal) => {
                        admissions.give_back().await;
                        return Ok(RenderResult::Refused(refusal));
                    }
                }
            }
            _ => None,
        };
        // Only a cold generation needs a queue slot; saturation leaves the handshake intact. The
        // slot is held by this future: a finished, failed, timed-out or cancelled (dropped)
        // render frees it.
        let queued_at = std::time::Instant::now();
        let _slot = match plan.cached {
            Some(_) => None,
            None => match self.queue.enter(caller.principal()).await {
                Ok(slot) => Some(slot),
                Err(full) => {
                    // Turned away before it ran: the windows do not count it, and the
                    // reservation is given back.
                    admissions.give_back().await;
                    if let Some(reservation) = reservation {
                        reservation.refund("refund: the generation queue was full").await;
                    }
                    return Err(AgentError::Overloaded {
                        retry_after_seconds: full.retry_after_seconds,
                    });
                }
            },
        };
        if plan.cached.is_none() {
            self.telemetry.queue_waited(queued_at.elapsed());
        }
        let identity = RenderIdentity {
            session_id: session_id.clone(),
            app_id: caller.app_id.clone(),
            action: plan.action,
            contract_hash: contract_hash(&plan.contract),
            blueprint_id: plan.planned_blueprint_id.clone(),
            variant_key: variant_key(Some(&plan.variance)),
            cache: plan.cache_report.clone(),
        };
        let generation_started = std::time::Instant::now();
        // A cache hit consumes its handshake in the session's own write (below); a generation
        // holds it from the start, so two renders of one handshake never both generate.
        let (blueprint, claim) = match plan.cached.clone() {
            Some(bp) => (bp, None),
            None => {
                let Some(mut claim) = HandshakeClaim::take(&self.handshakes, &handshake.handshake_id, now).await?
                else {
                    // Another render of this handshake won: this one generates nothing.
                    admissions.give_back().await;
                    if let Some(reservation) = reservation {
                        reservation
                            .refund("refund: the handshake was used by another render")
                            .await;
                    }
                    return Err(handshake_used());
                };
                let generation = self
                    .materialise(
                        caller,
                        &handshake,
                        &plan,
                        &identity,
                        &mut claim,
                        Generation {
                            model: model.map(|m| m.canonical()),
                            theme_id: theme_id.clone(),
                            waited: queued_at.elapsed(),
                            props: cmd.props.clone(),
                            progress: cmd.progress.clone(),
                            caller_keys: reservation.as_ref().map(|r| r.keys()),
                        },
                    )
                    .instrument(tracing::info_span!("generation"));
                // Hosted: a paid render ends by its deadline, so the sweep of abandoned
                // reservations never refunds one still running.
                let (materialised, refund_reason) = match &reservation {
                    Some(reserved) => match tokio::time::timeout_at(reserved.deadline(), generation).await {
                        Ok(done) => (done?, "refund: the generation failed"),
                        Err(_) => (
                            Err(overran_deadline(reserved.deadline_seconds())),
                            "refund: the render overran its deadline",
                        ),
                    },
                    None => (generation.await?, "refund: the generation failed"),
                };
                let blueprint = match materialised {
                    Ok(bp) => {
                        if let Some(reservation) = reservation {
                            reservation.settle(bp.model.as_deref()).await;
                        }
                        self.telemetry
                            .generation_finished("rendered", generation_started.elapsed());
                        bp
                    }
                    Err(failure) => {
                        let code = failure_code(&failure);
                        self.telemetry.generation_finished(code, generation_started.elapsed());
                        // The message carries the provider's name and HTTP status when one answered.
                        tracing::warn!(code, error = %failure.message, "generation failed");
                        if let Some(reservation) = reservation {
                            reservation.refund(refund_reason).await;
                        }
                        claim.commit();
                        self.commit_failed(&handshake, &plan, &identity, &failure, ttl, &cmd.host)
                            .await?;
                        return Ok(RenderResult::Failed {
                            identity,
                            code: failure_code(&failure),
                            message: failure.message,
                        });
                    }
                };
                (Arc::new(blueprint), Some(claim))
            }
        };
        let blueprint_id = blueprint.blueprint_id.clone();
        let first_paint = FirstPaint {
            // Shared with the blueprint store's read cache, not copied (issue 18).
            component_code: ComponentCode::from(blueprint),
            contract: plan.contract.clone(),
            props: cmd.props.clone(),
        };
        let head = SessionHead::rendered(cmd.props, ttl, self.clock.now());
        // The head moves into the record: the first paint's props are the one copy beside it.
        let expires_at = head.expires_at();
        let record = SessionRecord {
            session_id,
            app_id: caller.app_id.clone(),
            intent: handshake.intent.clone(),
            blueprint_id: Some(blueprint_id),
            contract: plan.contract.clone(),
            theme_id: Some(theme_id.clone()),
            head,
            failure: None,
            host: cmd.host,
            context_snapshot: Value::Object(plan.contract.context_defaults()),
            event_sequence: 0,
            created_at: now,
            revision: 0,
        };
        match claim {
            Some(mut claim) => {
                claim.commit();
                self.sessions.insert(&record).await?;
            }
            // Both or neither: a crash cannot leave the handshake used without its session.
            None => {
                if !self
                    .handshakes
                    .consume_for_session(&handshake.handshake_id, now, &record)
                    .await?
                {
                    // Another render of this handshake won: this one happened no more than it.
                    admissions.give_back().await;
                    return Err(handshake_used());
                }
            }
        }
        if let Some(topic) = host_topic(&record.host) {
            let (session_id, created_at) = (record.session_id.clone(), record.created_at);
            self.bus.publish(LiveEvent::Render {
                topic,
                session_id,
                created_at,
            });
        }
        Ok(RenderResult::Rendered {
            has_actions: !plan.contract.action_intents().is_empty(),
            identity,
            theme_id,
            expires_at,
            last_sequence: 0,
            first_paint,
        })
    }

    async fn usable_handshake(
        &self,
        caller: &Caller,
        id: &str,
        now: DateTime<Utc>,
    ) -> Result<HandshakeRecord, AgentError> {
        let record = match self.handshakes.get(id).await? {
            Some(r) if r.app_id == caller.app_id => r,
            _ => {
                return Err(AgentError::invalid(
                    "handshakeId",
                    "unknown handshake; call svc_handshake first",
                ));
            }
        };
        record
            .lifecycle
            .ensure_usable(now)
            .map_err(|e| AgentError::invalid("handshakeId", e.to_string()))?;
        Ok(record)
    }

    fn checked_theme(&self, requested: Option<&str>) -> Result<String, AgentError> {
        let available = theme_catalog(&self.settings);
        match requested {
            None => Ok(self.settings.default_theme_id.clone()),
            Some(id) if available.iter().any(|t| t.id == id) => Ok(id.to_owned()),
            Some(id) => Err(AgentError::invalid(
                "themeId",
                format!(
                    "unknown theme `{id}`; ids come from svc_list_themes: {}",
                    available.iter().map(|t| t.id.as_str()).collect::<Vec<_>>().join(", ")
                ),
            )),
        }
    }

    /// Applies `override` (PATCH semantics) and decides between the cache and a generation.
    async fn plan(
        &self,
        caller: &Caller,
        handshake: &HandshakeRecord,
        over: Option<&RenderOverride>,
    ) -> Result<Plan, AgentError> {
        let mut contract = handshake.contract.clone();
        let mut variance = handshake.variance.clone();
        let mut reaimed = false;
        if let Some(draft) = over.and_then(|o| o.contract.as_ref()) {
            let agreed = negotiate_untrusted(&self.cpu, &self.schemas, "override.contract", draft)
                .await?
                .map_err(|e| AgentError::invalid("override.contract", e.to_string()))?;
            if agreed.amended() {
                let first = &agreed.amendments[0];
                return Err(AgentError::invalid(
                    "override.contract",
                    format!("must already conform: {} ({})", first.message, first.path),
                ));
            }
            contract = agreed.contract;
            reaimed = true;
        }
        if let Some(patch) = over.and_then(|o| o.variance.as_ref()) {
            if !patch.is_object() {
                return Err(AgentError::invalid("override.variance", "must be an object"));
            }
            json_patch::merge(&mut variance, patch);
            let fields = variance.as_object().map_or(0, |v| v.len());
            check_merged_variance(fields).map_err(|e| AgentError::invalid("override.variance", e.to_string()))?;
            reaimed = true;
        }
        let served_from_cache = handshake.origin == Origin::Cache && !reaimed;
        let cached = match (handshake.origin, reaimed) {
            (Origin::Cache, false) => match &handshake.cache {
                Some(hit) => self.blueprints.repository.get(&hit.blueprint_id).await?,
                None => None,
            },
            // A variance re-aim may land on another cached variant; a contract re-draft never does.
            (_, true) if over.is_some_and(|o| o.contract.is_none()) => {
                self.blueprints
                    .repository
                    .find_exact(
                        &caller.app_id,
                        &handshake.intent,
                        &contract_hash(&contract),
                        &variant_key(Some(&variance)),
                    )
                    .await?
            }
            _ => None,
        };
        // A re-aimed hit is an exact match of the new reuse key, not the handshake's suggestion.
        let suggested = handshake.cache.as_ref().filter(|_| !reaimed);
        let cache_report = match &cached {
            Some(bp) => CacheReport {
                hit: true,
                similarity: Some(suggested.map_or(1.0, |c| c.similarity)),
                cached_blueprint_id: Some(bp.blueprint_id.clone()),
                llm_calls_avoided: 1,
                kind: Some(suggested.map_or("exact".into(), |c| c.kind.clone())),
                reason: Some(suggested.map_or("same reuse key".into(), |c| c.reason.clone())),
            },
            None => CacheReport {
                hit: false,
                similarity: None,
                cached_blueprint_id: None,
                llm_calls_avoided: 0,
                kind: None,
                // The suggested blueprint was deleted (an operator, another replica) after the
                // handshake: say why a reuse became a generation.
                reason: served_from_cache
                    .then(|| "the suggested cached blueprint was deleted after the handshake; generated anew".into()),
            },
        };
        // The handshake announced the id a plain generation takes. A re-aimed render is a new
        // component, and so is the generation that replaces a suggested blueprint gone since:
        // its id was the cached component's, and a blueprintId names one component.
        let planned_blueprint_id = match &cached {
            Some(bp) => bp.blueprint_id.clone(),
            None if reaimed || served_from_cache => self.ids.uuid(),
            None => handshake.blueprint_id.clone(),
        };
        // The action says what the render does: a cached component served is a `reuse` whatever
        // the handshake planned (an `override.variance` may land on a cached variant), and a
        // planned reuse that generates is a `create`, or an `update` beside another blueprint of
        // the intent, as the handshake would answer now.
        let action = match (&cached, handshake.action) {
            (Some(_), _) => HandshakeAction::Reuse,
            (None, HandshakeAction::Reuse) => HandshakeAction::choose(
                false,
                false,
                self.blueprints
                    .repository
                    .intent_cached(&caller.app_id, &handshake.intent)
                    .await?,
            ),
            (None, action) => action,
        };
        Ok(Plan {
            contract,
            variance,
            cached,
            planned_blueprint_id,
            action,
            cache_report,
        })
    }
}

/// A paid generation still running at its render deadline (hosted), ended there.
fn overran_deadline(deadline_seconds: u64) -> crate::ports::agent::RenderFailure {
    crate::ports::agent::RenderFailure {
        code: "PRODUCTION_FAILED".into(),
        message: format!("the generation did not finish within the render deadline ({deadline_seconds} s)"),
    }
}

/// Another render consumed the handshake first.
fn handshake_used() -> AgentError {
    AgentError::invalid(
        "handshakeId",
        "the handshake was already used by a render; call svc_handshake again",
    )
}
