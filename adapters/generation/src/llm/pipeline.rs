//! `LlmGenerator`: the `standard` and `advanced` generators. Prompt from the contract, stream
//! the reply (retrying transient provider failures), extract the TSX, compile and check it,
//! render it once headless when a render check is wired; on findings send it back once for
//! repair; then `VALIDATION_ERROR` with the findings (`PRODUCTION_FAILED` when the last reply held
//! no code at all).

use std::sync::Arc;
use std::time::Duration;
use svc_application::services::compile::compile_admitted;
use svc_application::services::cpu_gate::CpuGate;

use futures_util::StreamExt;
use svc_application::ports::generation::{
    CompileFinding, CompiledModule, Compiler, GeneratedComponent, GenerationError, GenerationProgress,
    GenerationRequest, GenerationStage, Generator, NoProgress, ProgressSink, RenderCheck, RenderCheckFailure,
    RenderCheckInput,
};
use svc_application::services::generation::{ADVANCED_SLUG, STANDARD_SLUG};
use svc_domain::contract::fixture_props;
use svc_domain::model_route::{ModelEntry, ModelRegistry};
use tracing::Instrument;

use super::chat::{ChatMessage, ChatRequest};
use super::errors::{ProviderError, ProviderErrorKind};
use super::extract::extract_tsx;
use super::framing::MAX_OUTPUT_TOKENS;
use super::prompt::{repair_prompt, system_prompt, user_prompt};
use super::provider::ProviderConfig;
use super::retry::RetryPolicy;
use super::validator::{REPAIR_BELOW, validate};

/// Tunables of every model call (`[generation]` in the configuration).
#[derive(Debug, Clone)]
pub struct LlmSettings {
    /// Route used when a request names none; `None`: such a request fails.
    pub default_model: Option<String>,
    /// Output tokens asked of the provider, at most [`MAX_OUTPUT_TOKENS`] (more is lowered to it).
    pub max_output_tokens: u32,
    pub temperature: f32,
    /// Deadline of one attempt, from sending the request to the end of the reply.
    pub attempt_timeout: Duration,
    /// Longest silence between two reply frames.
    pub idle_timeout: Duration,
    pub retry: RetryPolicy,
    /// Ask providers whose registry entry supports it for a `{ "tsx": ... }` JSON reply.
    pub structured_output: bool,
}

impl Default for LlmSettings {
    fn default() -> Self {
        Self {
            default_model: None,
            max_output_tokens: 8192,
            temperature: 0.2,
            attempt_timeout: Duration::from_secs(180),
            idle_timeout: Duration::from_secs(60),
            retry: RetryPolicy::default(),
            structured_output: true,
        }
    }
}

/// Whether the generator reports a validator score (`advanced`) or not (`standard`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavour {
    Standard,
    Advanced,
}

#[derive(Clone)]
pub struct LlmGenerator {
    flavour: Flavour,
    providers: Arc<Vec<ProviderConfig>>,
    registry: Arc<ModelRegistry>,
    compiler: Arc<dyn Compiler>,
    /// Renders each compiled reply once; `None` accepts what compiles.
    render_check: Option<Arc<dyn RenderCheck>>,
    /// Bounds compilation and the render check with the deployment's other CPU-heavy work.
    cpu: CpuGate,
    http: reqwest::Client,
    settings: Arc<LlmSettings>,
}

impl LlmGenerator {
    pub fn new(
        flavour: Flavour,
        providers: Vec<ProviderConfig>,
        registry: ModelRegistry,
        compiler: Arc<dyn Compiler>,
        settings: LlmSettings,
    ) -> Self {
        let http = reqwest::Client::builder()
            .connect_timeout(Duration::from_secs(10))
            .user_agent(concat!("svc/", env!("CARGO_PKG_VERSION")))
            .build()
            .expect("the HTTP client builds with rustls");
        Self {
            flavour,
            providers: Arc::new(providers),
            registry: Arc::new(registry),
            compiler,
            render_check: None,
            cpu: CpuGate::unbounded(),
            http,
            settings: Arc::new(settings),
        }
    }

    /// Renders every reply that compiles once against fixture props; what it throws goes to the
    /// repair round like a compiler finding.
    pub fn with_render_check(self, render_check: Arc<dyn RenderCheck>) -> Self {
        Self {
            render_check: Some(render_check),
            ..self
        }
    }

    /// Compiles and render-checks through `cpu`, the deployment's gate of CPU-heavy work. A
    /// generation was admitted by the generation queue, so it waits for a slot, never refused.
    pub fn with_cpu_gate(self, cpu: CpuGate) -> Self {
        Self { cpu, ..self }
    }

    /// The same providers, registry and settings with another flavour.
    pub fn with_flavour(&self, flavour: Flavour) -> Self {
        Self {
            flavour,
            ..self.clone()
        }
    }

    pub fn slug(&self) -> &'static str {
        match self.flavour {
            Flavour::Standard => STANDARD_SLUG,
            Flavour::Advanced => ADVANCED_SLUG,
        }
    }

    /// The route, its registry entry and its provider, or why the request cannot be served.
    fn target(
        &self,
        request: &GenerationRequest,
    ) -> Result<(&ModelEntry, std::borrow::Cow<'_, ProviderConfig>), GenerationError> {
        let raw = request
            .model
            .as_deref()
            .or(self.settings.default_model.as_deref())
            .ok_or_else(|| {
                GenerationError::ProductionFailed(format!(
                    "the `{}` generator needs a model: pass infra.model or set generation.default_model",
                    self.slug()
                ))
            })?;
        let entry = self
            .registry
            .lookup(raw)
            .map_err(|e| GenerationError::ProductionFailed(format!("model `{raw}`: {e}")))?;
        let provider = self
            .providers
            .iter()
            .find(|p| p.name == entry.route.provider)
            .ok_or_else(|| {
                GenerationError::ProductionFailed(format!(
                    "no provider `{}` is configured (generation.providers)",
                    entry.route.provider
                ))
            })?;
        // Hosted: the caller's own key, never the deployment's.
        if let Some(keys) = &request.caller_keys {
            let mut own = provider.clone();
            own.api_key = keys.get(&provider.name).map(str::to_owned);
            if own.key_required && !own.has_key() {
                return Err(GenerationError::NoCredentials(format!(
                    "{} (set your key with svc_ops_set_provider_key; see docs/hosted.md)",
                    provider.name
                )));
            }
            return Ok((entry, std::borrow::Cow::Owned(own)));
        }
        if provider.key_required && !provider.has_key() {
            let any_key = self.providers.iter().any(ProviderConfig::has_key);
            let message = format!("{} (set its API key; see docs/generation.md)", provider.name);
            return Err(if any_key {
                GenerationError::NoCredentials(message)
            } else {
                GenerationError::NoPlatformKey(format!("the deployment has no provider key; {message}"))
            });
        }
        Ok((entry, std::borrow::Cow::Borrowed(provider)))
    }

    /// One model call with retries; returns the whole reply text.
    async fn complete(
        &self,
        provider: &ProviderConfig,
        chat: &ChatRequest,
        round: u32,
        progress: &dyn ProgressSink,
    ) -> Result<String, GenerationError> {
        let mut attempt = 1;
        loop {
            let mut text = String::new();
            // One span per provider call: its close line carries the call's duration.
            let call = tracing::info_span!(
                "provider_call",
                provider = %provider.name,
                model = %chat.model,
                round,
                attempt,
                status = tracing::field::Empty,
            );
            let outcome = tokio::time::timeout(
                self.settings.attempt_timeout,
                self.stream_reply(provider, chat, round, &mut text, progress),
            )
            .instrument(call.clone())
            .await;
            let error = match outcome {
                Ok(Ok(())) => return Ok(text),
                Ok(Err(error)) => error,
                // Dropping the attempt's future closed its connection: the upstream request is
                // cancelled and nothing more is read.
                Err(_) => {
                    return Err(GenerationError::ProductionFailed(format!(
                        "{}: no complete reply within {:?}",
                        provider.name, self.settings.attempt_timeout
                    )));
                }
            };
            if let Some(status) = error.status {
                call.record("status", status);
            }
            report_failed_call(&error);
            match self.settings.retry.next_wait(attempt, &error, !text.is_empty()) {
                Some(wait) => {
                    tracing::info!(provider = %provider.name, attempt, ?wait, error = %error, "retrying the model call");
                    tokio::time::sleep(wait).await;
                    attempt += 1;
                }
                None => return Err(error.into_generation_error()),
            }
        }
    }

    async fn stream_reply(
        &self,
        provider: &ProviderConfig,
        chat: &ChatRequest,
        round: u32,
        text: &mut String,
        progress: &dyn ProgressSink,
    ) -> Result<(), ProviderError> {
        // Bounded: the stream ends with an error past `framing::max_reply_bytes` of body, and
        // `text` is part of it; it yields to the runtime often enough for both timeouts to fire.
        let mut deltas = provider.stream(&self.http, chat).await?;
        let mut received_chars = text.chars().count() as u64;
        loop {
            let next = tokio::time::timeout(self.settings.idle_timeout, deltas.next())
                .await
                .map_err(|_| {
                    ProviderError::new(
                        ProviderErrorKind::Timeout,
                        &provider.name,
                        format!("no stream data for {:?}", self.settings.idle_timeout),
                    )
                })?;
            match next {
                Some(delta) => {
                    let delta = delta?;
                    // Counted per delta: recounting the whole text each time was quadratic.
                    received_chars += delta.chars().count() as u64;
                    text.push_str(&delta);
                    progress
                        .report(GenerationProgress {
                            received_chars: Some(received_chars),
                            ..GenerationProgress::stage(GenerationStage::Streaming, round)
                        })
                        .await;
                }
                None => return Ok(()),
            }
        }
    }

    /// Compiles `tsx` and renders it once; for `advanced`, also validates it. `Ok` carries the
    /// compiled module (the render stores it as is) and the validator score.
    async fn check(
        &self,
        tsx: &str,
        request: &GenerationRequest,
        allowed: &[String],
    ) -> Result<(CompiledModule, Option<f64>), Vec<CompileFinding>> {
        let compiled = compile_admitted(&self.cpu, &self.compiler, tsx, allowed)
            .await
            .map_err(|failure| failure.findings)?;
        if let Some(render_check) = &self.render_check {
            render_once(&self.cpu, render_check.clone(), compiled.code.clone(), request).await?;
        }
        let score = match self.flavour {
            Flavour::Standard => None,
            Flavour::Advanced => Some(validate(tsx, &request.contract).score),
        };
        Ok((compiled, score))
    }
}

/// Logs a failed model call where an operator looks first. A rejected key is an error: every
/// generation routed to that provider fails until the key is fixed, so the first failed call
/// says so plainly (the key itself is never logged).
fn report_failed_call(error: &ProviderError) {
    let status = error.status.map(i64::from).unwrap_or(-1);
    if error.kind == ProviderErrorKind::Unauthorized {
        tracing::error!(
            provider = %error.provider,
            status,
            "the provider rejected its API key; generations routed to it fail with NO_CREDENTIALS until the key is fixed"
        );
    } else {
        tracing::warn!(provider = %error.provider, status, kind = ?error.kind, error = %error, "the model call failed");
    }
}

/// Characters per token assumed when sizing the prompt against the context window.
const CHARS_PER_TOKEN: usize = 4;
/// Tokens kept free for the reply at the least.
const MIN_REPLY_TOKENS: usize = 1024;

#[async_trait::async_trait]
impl Generator for LlmGenerator {
    async fn generate(&self, request: &GenerationRequest) -> Result<GeneratedComponent, GenerationError> {
        self.generate_with_progress(request, &NoProgress).await
    }

    async fn generate_with_progress(
        &self,
        request: &GenerationRequest,
        progress: &dyn ProgressSink,
    ) -> Result<GeneratedComponent, GenerationError> {
        let (entry, provider) = self.target(request)?;
        // Anthropic's Messages API has no response schema; the fenced block serves there.
        let json_reply = self.settings.structured_output
            && entry.structured_output
            && provider.wire != super::provider::Wire::Anthropic;
        let system = system_prompt(json_reply);
        let user = user_prompt(request);
        let prompt_tokens = (system.len() + user.len()) / CHARS_PER_TOKEN;
        let context = entry.context_tokens as usize;
        if prompt_tokens + MIN_REPLY_TOKENS > context {
            return Err(GenerationError::ProductionFailed(format!(
                "the prompt (about {prompt_tokens} tokens) does not fit the {context}-token context of {}",
                entry.route.canonical()
            )));
        }
        // The cap also holds for settings built in code, which skip the start-up check.
        let max_output_tokens =
            (self.settings.max_output_tokens.min(MAX_OUTPUT_TOKENS) as usize).min(context - prompt_tokens) as u32;
        let mut chat = ChatRequest {
            model: entry.route.model.clone(),
            system,
            messages: vec![ChatMessage::user(user)],
            max_output_tokens,
            temperature: self.settings.temperature,
            json_reply,
            reasoning: entry.reasoning,
        };
        let allowed = request.contract.importable_packages();

        let mut best_advanced: Option<(Checked, f64)> = None;
        for round in 1..=2u32 {
            progress
                .report(GenerationProgress::stage(GenerationStage::Prompting, round))
                .await;
            let reply = self
                .complete(&provider, &chat, round, progress)
                .instrument(tracing::info_span!("prompting", round))
                .await?;
            let extracted = extract_tsx(&reply);
            let produced_code = extracted.is_some();
            let findings = match extracted {
                None => vec![CompileFinding {
                    message: "the reply holds no ```tsx code block with the component".into(),
                    line: None,
                }],
                Some(tsx) => {
                    progress
                        .report(GenerationProgress::stage(GenerationStage::Compiling, round))
                        .await;
                    let checked = self
                        .check(&tsx, request, &allowed)
                        .instrument(tracing::info_span!("checking", round))
                        .await;
                    match checked {
                        Ok((compiled, None)) => return Ok(self.component((tsx, compiled), entry, None)),
                        Ok((compiled, Some(score))) if score >= REPAIR_BELOW || round == 2 => {
                            let best = match best_advanced.take() {
                                Some((earlier, earlier_score)) if earlier_score > score => (earlier, earlier_score),
                                _ => ((tsx, compiled), score),
                            };
                            return Ok(self.component(best.0, entry, Some(best.1)));
                        }
                        Ok((compiled, Some(score))) => {
                            let findings = validate(&tsx, &request.contract).findings;
                            best_advanced = Some(((tsx, compiled), score));
                            findings
                        }
                        Err(findings) => findings,
                    }
                }
            };
            if round == 2 {
                // A compiled first reply of `advanced` beats a broken repair.
                if let Some((checked, score)) = best_advanced {
                    return Ok(self.component(checked, entry, Some(score)));
                }
                let message = format!(
                    "{} did not produce a valid component after one repair round: {}",
                    entry.route.canonical(),
                    findings_text(&findings)
                );
                // Code that fails the checks is a validation failure; a reply with no code
                // produced nothing to validate.
                return Err(if produced_code {
                    GenerationError::ValidationFailed(message)
                } else {
                    GenerationError::ProductionFailed(message)
                });
            }
            progress
                .report(GenerationProgress {
                    findings: Some(findings.len() as u32),
                    ..GenerationProgress::stage(GenerationStage::Repairing, round + 1)
                })
                .await;
            chat.messages.push(ChatMessage::assistant(reply));
            chat.messages
                .push(ChatMessage::user(repair_prompt(&findings, json_reply)));
        }
        unreachable!("the second round always returns")
    }
}

impl LlmGenerator {
    fn component(
        &self,
        (source, compiled): Checked,
        entry: &ModelEntry,
        validator_score: Option<f64>,
    ) -> GeneratedComponent {
        GeneratedComponent {
            source,
            generator: self.slug().to_owned(),
            model: Some(entry.route.canonical()),
            validator_score,
            compiled: Some(compiled),
        }
    }
}

/// A reply's TSX and the module it compiled to.
type Checked = (String, CompiledModule);

/// The render check on a blocking thread: it runs a JavaScript engine for up to its time budget.
async fn render_once(
    cpu: &CpuGate,
    render_check: Arc<dyn RenderCheck>,
    code: String,
    request: &GenerationRequest,
) -> Result<(), Vec<CompileFinding>> {
    let props = request
        .fixture_props
        .clone()
        .unwrap_or_else(|| fixture_props(&request.contract.props_schema()));
    let contract = request.contract.as_value();
    let gadgets = request.gadgets.clone();
    let theme_id = request.theme_id.clone();
    let outcome = cpu
        .run_admitted(move || {
            render_check.render(&RenderCheckInput {
                code: &code,
                props: &props,
                contract: &contract,
                gadgets: &gadgets,
                theme_id: theme_id.as_deref(),
            })
        })
        .await;
    match outcome {
        Ok(Ok(())) => Ok(()),
        Ok(Err(RenderCheckFailure::Findings(findings))) => Err(findings),
        // A fault of the check, not of the component: accept what compiled rather than blame
        // the model for it.
        Ok(Err(RenderCheckFailure::Unavailable(fault))) => {
            tracing::error!(%fault, "the render check could not run; the component is accepted unchecked");
            Ok(())
        }
        Err(panicked) => {
            tracing::error!(error = %panicked, "the render check panicked; the component is accepted unchecked");
            Ok(())
        }
    }
}

fn findings_text(findings: &[CompileFinding]) -> String {
    findings
        .iter()
        .map(|f| match f.line {
            Some(line) => format!("line {line}: {}", f.message),
            None => f.message.clone(),
        })
        .collect::<Vec<_>>()
        .join("; ")
}
