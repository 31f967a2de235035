use serde_json::Value;
use svc_domain::contract::{
    Contract, Finding, PropsSchemaProfile, contract_hash, profile_of, props_schema_hash, variant_key,
};
use svc_domain::handshake::{HandshakeAction, HandshakeLifecycle, Origin};
use svc_domain::intent::Intent;

use std::sync::Arc;

use super::blueprint_cache::CachedBlueprints;
use super::negotiation_memo::{DraftKey, NegotiationMemo};
use super::untrusted_contract::negotiate_untrusted;
use super::{AgentError, Caller, SchemaCache};
use crate::ports::agent::{CacheMatch, HandshakeRecord, HandshakeRepository};
use crate::ports::telemetry::GenerationTelemetry;
use crate::ports::{Clock, Ids};
use crate::services::cpu_gate::CpuGate;

#[derive(Debug, Clone)]
pub struct HandshakeCommand {
    pub intent: String,
    pub contract: Value,
    pub variance: Option<Value>,
    pub generator: Option<String>,
    pub force_create: bool,
}

/// A non-declined handshake.
#[derive(Debug, Clone)]
pub struct HandshakeReply {
    pub handshake_id: String,
    pub action: HandshakeAction,
    pub origin: Origin,
    pub intent: String,
    pub blueprint_id: String,
    pub contract_hash: String,
    pub variant_key: String,
    pub generator: Option<String>,
    /// Non-empty only for origin `synth`.
    pub amendments: Vec<Finding>,
    /// Soft findings on a cache hit (what negotiation would have amended).
    pub validation_findings: Vec<Finding>,
    pub cache: Option<CacheMatch>,
    /// Present when the agreed contract differs from the draft.
    pub props_schema: Option<Value>,
    pub props_schema_hash: String,
    pub props_schema_profile: PropsSchemaProfile,
    /// The agreed contract's props schema, for building a `nextStep` example.
    pub enforced_schema: Value,
}

#[derive(Debug, Clone)]
pub enum HandshakeOutcome {
    Agreed(Box<HandshakeReply>),
    /// The draft cannot be agreed; no record was created.
    Declined {
        findings: Vec<Finding>,
    },
}

/// `svc_handshake`: negotiates the draft, looks the reuse key up and records the handshake.
#[derive(Clone)]
pub struct HandshakeService {
    pub clock: Arc<dyn Clock>,
    pub ids: Arc<dyn Ids>,
    pub handshakes: Arc<dyn HandshakeRepository>,
    pub blueprints: CachedBlueprints,
    pub telemetry: Arc<dyn GenerationTelemetry>,
    pub cpu: CpuGate,
    /// Where negotiation leaves the validators it compiled, for the contract's renders.
    pub schemas: SchemaCache,
    pub(super) negotiations: NegotiationMemo,
}

impl HandshakeService {
    #[tracing::instrument(name = "handshake", skip_all, fields(app_id = %caller.app_id))]
    pub async fn handshake(&self, caller: &Caller, cmd: HandshakeCommand) -> Result<HandshakeOutcome, AgentError> {
        let intent = Intent::parse(&cmd.intent)
            .map_err(|e| AgentError::invalid("intent", e.to_string()))?
            .into_string();
        if cmd.variance.as_ref().is_some_and(|v| !v.is_object() && !v.is_null()) {
            return Err(AgentError::invalid("blueprintDraft.variance", "must be an object"));
        }
        let variance = cmd
            .variance
            .clone()
            .filter(|v| !v.is_null())
            .unwrap_or_else(|| Value::Object(Default::default()));
        let variant = variant_key(Some(&variance));
        let now = self.clock.now();

        let draft = DraftKey::of(&cmd.contract);
        let (speculative, negotiated) = match self.negotiations.agreed(&draft) {
            // Agreed before: its hash is known, so the one lookup below is exact.
            Some(agreed) => (Ok(None), agreed),
            None => {
                // Lookup and validation run concurrently; a draft that is agreed verbatim hashes
                // like its agreed form, so the speculative lookup is usually the only one.
                let speculative_hash = draft_hash(&cmd.contract);
                let lookup = async {
                    if cmd.force_create {
                        return Ok(None);
                    }
                    self.blueprints
                        .repository
                        .find_exact(&caller.app_id, &intent, &speculative_hash, &variant)
                        .await
                };
                let validation =
                    negotiate_untrusted(&self.cpu, &self.schemas, "blueprintDraft.contract", &cmd.contract);
                let (speculative, negotiated) = tokio::join!(lookup, validation);
                match negotiated? {
                    Ok(agreed) => {
                        self.negotiations.remember(draft, &agreed);
                        (speculative, agreed)
                    }
                    Err(declined) => {
                        return Ok(HandshakeOutcome::Declined {
                            findings: declined.findings,
                        });
                    }
                }
            }
        };
        let contract = negotiated.contract.clone();
        let hash = contract_hash(&contract);
        let exact = match speculative? {
            Some(bp) if bp.contract_hash == hash => Some(bp),
            _ if cmd.force_create => None,
            _ => {
                self.blueprints
                    .repository
                    .find_exact(&caller.app_id, &intent, &hash, &variant)
                    .await?
            }
        };
        let exact_exists = match (&exact, cmd.force_create) {
            (Some(_), _) => true,
            (None, true) => self
                .blueprints
                .repository
                .find_exact(&caller.app_id, &intent, &hash, &variant)
                .await?
                .is_some(),
            (None, false) => false,
        };
        // No exact match: the operator's default for the contract serves, else a cached
        // blueprint for a similar intent with the same contract and variance.
        let semantic = match (&exact, cmd.force_create) {
            (None, false) => match self.blueprints.operator_default(&caller.app_id, &hash).await? {
                Some(chosen) => Some(chosen),
                None => {
                    self.blueprints
                        .semantic_match(&caller.app_id, &intent, &hash, &variant)
                        .await?
                }
            },
            _ => None,
        };
        let same_intent = exact_exists
            || self
                .blueprints
                .repository
                .intent_cached(&caller.app_id, &intent)
                .await?;
        let action = HandshakeAction::choose(cmd.force_create, exact_exists || semantic.is_some(), same_intent);

        let cached = match exact {
            Some(bp) => Some(CacheMatch {
                blueprint_id: bp.blueprint_id.clone(),
                similarity: 1.0,
                kind: "exact".into(),
                reason: "same intent, contractHash and variantKey".into(),
            }),
            None => semantic,
        };
        if !cmd.force_create {
            self.telemetry.cache_lookup(cached.is_some());
        }
        let (origin, blueprint_id, cache, amendments, validation_findings) = match cached {
            Some(cache) => (
                Origin::Cache,
                cache.blueprint_id.clone(),
                Some(cache),
                vec![],
                negotiated.amendments.clone(),
            ),
            None if negotiated.amended() => (
                Origin::Synth,
                self.ids.uuid(),
                None,
                negotiated.amendments.clone(),
                vec![],
            ),
            None => (Origin::Agent, self.ids.uuid(), None, vec![], vec![]),
        };

        let record = HandshakeRecord {
            handshake_id: self.ids.uuid(),
            app_id: caller.app_id.clone(),
            intent: intent.clone(),
            contract: contract.clone(),
            variance,
            generator: cmd.generator.clone(),
            origin,
            action,
            blueprint_id: blueprint_id.clone(),
            cache: cache.clone(),
            lifecycle: HandshakeLifecycle::new(now),
        };
        self.handshakes.insert(&record).await?;

        let enforced = contract.props_schema();
        Ok(HandshakeOutcome::Agreed(Box::new(HandshakeReply {
            handshake_id: record.handshake_id,
            action,
            origin,
            intent,
            blueprint_id,
            contract_hash: hash,
            variant_key: variant,
            generator: cmd.generator,
            amendments,
            validation_findings,
            cache,
            props_schema: negotiated.amended().then(|| enforced.clone()),
            props_schema_hash: props_schema_hash(&contract),
            props_schema_profile: profile_of(&enforced),
            enforced_schema: enforced,
        })))
    }
}

/// The hash the draft would have if it is agreed verbatim.
fn draft_hash(draft: &Value) -> String {
    Contract::try_from(draft.clone())
        .map(|verbatim| contract_hash(&verbatim))
        .unwrap_or_default()
}
