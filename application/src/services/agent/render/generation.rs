//! A cold render's generation: the component generated and compiled with its progress on
//! `_svc:lifecycle`, and the error session a failed generation leaves.

use serde_json::{Value, json};
use svc_domain::contract::sha256_hex;
use svc_domain::session::SessionHead;
use tracing::Instrument;

use super::super::AgentError;
use super::super::handshake_claim::HandshakeClaim;
use super::super::lifecycle::{LifecycleSink, ProgressObserver};
use super::{Caller, Plan, RenderIdentity, RenderService};
use crate::ports::agent::{BlueprintRecord, HandshakeRecord, HostSession, RenderFailure, SessionRecord};
use crate::ports::generation::{GenerationProgress, GenerationRequest, GenerationStage};
use crate::services::compile::module_of;

impl RenderService {
    /// Generates and compiles a component, publishing progress on `_svc:lifecycle`.
    pub(super) async fn materialise(
        &self,
        caller: &Caller,
        handshake: &HandshakeRecord,
        plan: &Plan,
        identity: &RenderIdentity,
        claim: &mut HandshakeClaim,
        generation: Generation,
    ) -> Result<Result<BlueprintRecord, RenderFailure>, AgentError> {
        let lifecycle = LifecycleSink::new(
            &identity.session_id,
            self.events.as_ref(),
            self.bus.as_ref(),
            self.clock.as_ref(),
            generation.progress.clone(),
        );
        let waited_ms = u64::try_from(generation.waited.as_millis()).unwrap_or(u64::MAX);
        lifecycle
            .publish(
                GenerationProgress::stage(GenerationStage::Queued, 1),
                serde_json::Map::from_iter([("waitedMs".to_owned(), json!(waited_ms))]),
            )
            .await;
        lifecycle
            .publish(
                GenerationProgress::stage(GenerationStage::Prompting, 1),
                Default::default(),
            )
            .await;
        let allowed = plan.contract.importable_packages();
        let request = GenerationRequest {
            intent: handshake.intent.clone(),
            contract: plan.contract.clone(),
            variance: plan.variance.clone(),
            model: generation.model,
            generator: handshake.generator.clone(),
            gadgets: self
                .declared_gadgets
                .iter()
                .filter(|g| allowed.contains(&g.package))
                .cloned()
                .collect(),
            theme_id: Some(generation.theme_id),
            fixture_props: Some(generation.props),
            caller_keys: generation.caller_keys,
            ..GenerationRequest::default()
        };
        let generated = match self
            .generator
            .generate_with_progress(&request, &lifecycle)
            .instrument(tracing::info_span!(
                "generate",
                model = request.model.as_deref().unwrap_or("")
            ))
            .await
        {
            Ok(g) => g,
            Err(e) => return Ok(Err(failed(&lifecycle, generation_failure(e)).await)),
        };
        lifecycle
            .publish(
                GenerationProgress::stage(GenerationStage::Compiling, 1),
                Default::default(),
            )
            .await;
        let compiled = match module_of(&self.cpu, &self.compiler, &generated, &allowed)
            .instrument(tracing::info_span!("compile"))
            .await
        {
            Ok(c) => c,
            Err(failure) => {
                // The generator produced code and the code failed the checks.
                let failure = RenderFailure {
                    code: "VALIDATION_ERROR".into(),
                    message: failure.to_string(),
                };
                return Ok(Err(failed(&lifecycle, failure).await));
            }
        };
        let record = BlueprintRecord {
            blueprint_id: identity.blueprint_id.clone(),
            app_id: caller.app_id.clone(),
            intent: handshake.intent.clone(),
            contract_hash: identity.contract_hash.clone(),
            variant_key: identity.variant_key.clone(),
            contract: plan.contract.clone(),
            variance: plan.variance.clone(),
            source: generated.source,
            code_hash: sha256_hex(compiled.code.as_bytes()),
            code: compiled.code,
            generator: generated.generator,
            model: generated.model,
            ..BlueprintRecord::blank(self.clock.now())
        };
        // From the first durable write on, the handshake stays used whatever happens next.
        claim.commit();
        self.blueprints.store(&record).await?;
        lifecycle
            .publish(
                GenerationProgress::stage(GenerationStage::Done, 1),
                serde_json::Map::from_iter([("outcome".to_owned(), json!("rendered"))]),
            )
            .await;
        Ok(Ok(record))
    }

    pub(super) async fn commit_failed(
        &self,
        handshake: &HandshakeRecord,
        plan: &Plan,
        identity: &RenderIdentity,
        failure: &RenderFailure,
        ttl: u64,
        host: &HostSession,
    ) -> Result<(), AgentError> {
        let now = self.clock.now();
        let record = SessionRecord {
            session_id: identity.session_id.clone(),
            app_id: identity.app_id.clone(),
            intent: handshake.intent.clone(),
            blueprint_id: None,
            contract: plan.contract.clone(),
            theme_id: None,
            head: SessionHead::failed(ttl, now),
            failure: Some(failure.clone()),
            host: host.clone(),
            context_snapshot: Value::Object(Default::default()),
            event_sequence: 0,
            created_at: now,
            revision: 0,
        };
        self.sessions.insert(&record).await?;
        Ok(())
    }
}

fn generation_failure(e: crate::ports::generation::GenerationError) -> RenderFailure {
    RenderFailure {
        code: e.render_code().into(),
        message: e.to_string(),
    }
}

/// Publishes the terminal `done` delivery of a failed generation and hands the failure back.
async fn failed(lifecycle: &LifecycleSink<'_>, failure: RenderFailure) -> RenderFailure {
    lifecycle
        .publish(
            GenerationProgress::stage(GenerationStage::Done, 1),
            serde_json::Map::from_iter([
                ("outcome".to_owned(), json!("failed")),
                ("code".to_owned(), json!(failure_code(&failure))),
            ]),
        )
        .await;
    failure
}

/// What the render passes on to a cold generation.
pub(super) struct Generation {
    pub(super) model: Option<String>,
    pub(super) theme_id: String,
    pub(super) waited: std::time::Duration,
    /// The render's props: the render check renders the new component with them.
    pub(super) props: Value,
    pub(super) progress: Option<ProgressObserver>,
    /// Hosted: the payer's own provider keys.
    pub(super) caller_keys: Option<crate::ports::generation::CallerKeys>,
}

/// The wire code of a failure, from the closed set Document 1 allows.
pub(super) fn failure_code(failure: &RenderFailure) -> &'static str {
    match failure.code.as_str() {
        "NO_CREDENTIALS" => "NO_CREDENTIALS",
        "NO_PLATFORM_KEY" => "NO_PLATFORM_KEY",
        "VALIDATION_ERROR" => "VALIDATION_ERROR",
        "GENERATION_QUEUE_OVERLOADED" => "GENERATION_QUEUE_OVERLOADED",
        _ => "PRODUCTION_FAILED",
    }
}
