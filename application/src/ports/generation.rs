//! Ports of the render pipeline: turning an agreed contract into TSX, and TSX into an ES module.

use serde_json::Value;
use svc_domain::contract::Contract;

/// What a generator is asked to build. The contract is the agreed DataContract object
/// (`propsSpec`, `actionSpec`, `streamSpec`, `contextSpec`, `clientCapabilities`,
/// `agentCapabilities`), already validated by the domain.
///
/// Build one with [`GenerationRequest::new`] and set the optional fields that apply; the
/// operator tool `svc_ops_generate_blueprint` sets `generator`, `persona`, `aesthetic`,
/// `context` and `seed_prompt` (Document 3).
#[derive(Debug, Clone, Default)]
pub struct GenerationRequest {
    pub intent: String,
    pub contract: Contract,
    /// Design-time variance (`{ density?, layout?, tone?, ... }`); free-form object.
    pub variance: Value,
    /// The `provider:model` route when the agent asked for one; `None` for the default generator.
    pub model: Option<String>,
    /// Generator slug (`builtin`, `standard`, `advanced`); `None` lets the catalog choose.
    pub generator: Option<String>,
    /// Who the UI is for (normalized lowercase and trimmed by [`GenerationRequest::with_persona`]).
    pub persona: Option<String>,
    /// Visual direction in words ("dense, monochrome, data-first").
    pub aesthetic: Option<String>,
    /// Free-form background the model should know (domain, audience, constraints).
    pub context: Option<String>,
    /// An operator's own instructions, appended to the prompt.
    pub seed_prompt: Option<String>,
    /// Gadget packages beyond the standard one that the app declares; their exports are quoted
    /// in the prompt.
    pub gadgets: Vec<svc_domain::gadgets::GadgetDescriptor>,
    /// Theme whose `--svc-*` values the prompt quotes; `None` quotes the default theme.
    pub theme_id: Option<String>,
    /// Props the render check renders the component with: the render's own props on
    /// `svc_render`; `None` synthesizes the least props the contract's `propsSpec` admits
    /// (`svc_domain::contract::fixture_props`).
    pub fixture_props: Option<Value>,
    /// Hosted deployments: the caller's own provider keys. When set, the language-model
    /// generators use these and never the deployment's keys; a provider without one here fails
    /// with `NoCredentials`.
    pub caller_keys: Option<CallerKeys>,
}

/// A caller's provider keys by provider name (`openai`, ...). `Debug` never shows them.
#[derive(Clone, Default, PartialEq, Eq)]
pub struct CallerKeys(std::collections::BTreeMap<String, String>);

impl CallerKeys {
    pub fn new(keys: impl IntoIterator<Item = (String, String)>) -> Self {
        Self(keys.into_iter().collect())
    }

    pub fn get(&self, provider: &str) -> Option<&str> {
        self.0.get(provider).map(String::as_str)
    }
}

impl std::fmt::Debug for CallerKeys {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_set().entries(self.0.keys()).finish()
    }
}

impl GenerationRequest {
    pub fn new(intent: impl Into<String>, contract: Contract) -> Self {
        Self {
            intent: intent.into(),
            contract,
            variance: Value::Object(Default::default()),
            ..Self::default()
        }
    }

    /// Sets the persona as Document 3 normalizes it: trimmed and lowercase; blank means none.
    pub fn with_persona(mut self, persona: Option<&str>) -> Self {
        self.persona = persona.map(|p| p.trim().to_lowercase()).filter(|p| !p.is_empty());
        self
    }
}

/// A generated component: TSX with a default-exported React component.
#[derive(Debug, Clone, PartialEq)]
pub struct GeneratedComponent {
    pub source: String,
    /// Generator slug that produced it (`builtin`, `standard`, `advanced`).
    pub generator: String,
    /// Model route, when a language model produced it.
    pub model: Option<String>,
    /// The `advanced` generator's validator score, 0 to 1; `None` for the others.
    pub validator_score: Option<f64>,
    /// The module the generator already compiled from `source` with the request's importable
    /// packages, so the render does not compile it a second time; `None` when it compiled nothing.
    pub compiled: Option<CompiledModule>,
}

/// Why a generation produced nothing. Each variant is one documented outcome
/// (`docs/generation.md`); the render service maps them onto Document 1's failure codes.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum GenerationError {
    /// Generation ran and produced no component (no code in the reply, a provider failure).
    #[error("generation failed: {0}")]
    ProductionFailed(String),
    /// Generation produced a component that still failed validation (compile, static checks,
    /// render check) after the repair round; the findings are in the message.
    #[error("generation failed: {0}")]
    ValidationFailed(String),
    /// No key for the chosen provider, or the provider rejected the key.
    #[error("no credentials for provider {0}")]
    NoCredentials(String),
    /// No key for the chosen provider and the deployment has no platform key for any provider.
    #[error("no platform key: {0}")]
    NoPlatformKey(String),
    /// The provider kept answering "too many requests" or "overloaded"; try again later.
    #[error("the model provider is overloaded: {message}")]
    Overloaded {
        message: String,
        retry_after_seconds: Option<u64>,
    },
    /// The generator slug names no generator (`generator_not_found` in Document 3).
    #[error("unknown generator `{}`", svc_domain::text::excerpt(.0))]
    GeneratorNotFound(String),
}

impl GenerationError {
    /// Document 1's `error.code` of a `failed` render.
    pub fn render_code(&self) -> &'static str {
        match self {
            Self::ProductionFailed(_) | Self::GeneratorNotFound(_) => "PRODUCTION_FAILED",
            Self::ValidationFailed(_) => "VALIDATION_ERROR",
            Self::NoCredentials(_) => "NO_CREDENTIALS",
            Self::NoPlatformKey(_) => "NO_PLATFORM_KEY",
            Self::Overloaded { .. } => "GENERATION_QUEUE_OVERLOADED",
        }
    }
}

/// Generation progress stages, published on the reserved `_svc:lifecycle` channel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum GenerationStage {
    Queued,
    Prompting,
    Streaming,
    Compiling,
    Repairing,
    Done,
}

impl GenerationStage {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Queued => "queued",
            Self::Prompting => "prompting",
            Self::Streaming => "streaming",
            Self::Compiling => "compiling",
            Self::Repairing => "repairing",
            Self::Done => "done",
        }
    }
}

/// One progress report from a running generation, published on `_svc:lifecycle`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct GenerationProgress {
    pub stage: GenerationStage,
    /// 1 for the first model call, 2 for the repair round.
    pub attempt: u32,
    /// Characters of model output received so far in this attempt (streaming only).
    pub received_chars: Option<u64>,
    /// Number of findings sent back for repair (repairing only).
    pub findings: Option<u32>,
}

impl GenerationProgress {
    pub fn stage(stage: GenerationStage, attempt: u32) -> Self {
        Self {
            stage,
            attempt,
            received_chars: None,
            findings: None,
        }
    }
}

/// Where a generator reports its stages. Reporting is best effort: a sink never fails the
/// generation.
#[async_trait::async_trait]
pub trait ProgressSink: Send + Sync {
    async fn report(&self, progress: GenerationProgress);
}

/// A sink that drops every report.
pub struct NoProgress;

#[async_trait::async_trait]
impl ProgressSink for NoProgress {
    async fn report(&self, _: GenerationProgress) {}
}

#[async_trait::async_trait]
pub trait Generator: Send + Sync {
    async fn generate(&self, request: &GenerationRequest) -> Result<GeneratedComponent, GenerationError>;

    /// Like `generate`, reporting stages to `progress` as they happen. Generators without stages
    /// of their own keep this default.
    async fn generate_with_progress(
        &self,
        request: &GenerationRequest,
        progress: &dyn ProgressSink,
    ) -> Result<GeneratedComponent, GenerationError> {
        let _ = progress;
        self.generate(request).await
    }
}

/// An ES module compiled from TSX.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompiledModule {
    pub code: String,
    /// Import specifiers the module keeps (e.g. `react`, `react/jsx-runtime`, `@svc/gadgets`).
    pub imports: Vec<String>,
}

/// One problem the compiler found, with a location when it has one.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CompileFinding {
    pub message: String,
    /// 1-based line in the TSX source.
    pub line: Option<u32>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("compilation failed: {}", findings.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join("; "))]
pub struct CompileFailure {
    pub findings: Vec<CompileFinding>,
    /// Set when the code was refused before compiling, over a complexity budget (its message is
    /// also the one finding): registering such code is refused outright.
    pub over_budget: Option<svc_domain::budget::BudgetExceeded>,
}

/// Compiles TSX into an ES module and checks it statically: a default export exists and every
/// import comes from React or one of `allowed_packages`.
pub trait Compiler: Send + Sync {
    fn compile(&self, tsx: &str, allowed_packages: &[String]) -> Result<CompiledModule, CompileFailure>;
}

/// What a render check runs: a compiled component and the card state of its first frame.
#[derive(Debug, Clone, Copy)]
pub struct RenderCheckInput<'a> {
    /// The compiled ES module ([`CompiledModule::code`]).
    pub code: &'a str,
    /// The props `useProps()` returns.
    pub props: &'a Value,
    /// The agreed contract: `contextSpec` defaults feed `useContextSlot`, `streamSpec` names the
    /// channels.
    pub contract: &'a Value,
    /// Declared app packages the component may import beside the standard one.
    pub gadgets: &'a [svc_domain::gadgets::GadgetDescriptor],
    /// Theme `useTheme()` reports; `None`: the default theme.
    pub theme_id: Option<&'a str>,
}

/// Why a render check did not pass.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RenderCheckFailure {
    /// The component threw, looped or exhausted its budget: findings a model can repair
    /// ("rendering the component against the fixture props threw TypeError: ...").
    #[error("the component failed to render: {}", .0.iter().map(|f| f.message.as_str()).collect::<Vec<_>>().join("; "))]
    Findings(Vec<CompileFinding>),
    /// The check itself could not run (its engine failed, not the component).
    #[error("the render check could not run: {0}")]
    Unavailable(String),
}

/// Renders a compiled component once, headless, against fixture props.
pub trait RenderCheck: Send + Sync {
    fn render(&self, input: &RenderCheckInput<'_>) -> Result<(), RenderCheckFailure>;
}
