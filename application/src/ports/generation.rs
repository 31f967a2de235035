//! Ports of the render pipeline: turning an agreed contract into TSX, and TSX into an ES module.

use serde_json::Value;

/// What a generator is asked to build. The contract is the agreed DataContract object
/// (`propsSpec`, `actionSpec`, `streamSpec`, `contextSpec`, `clientCapabilities`,
/// `agentCapabilities`), already validated by the domain.
#[derive(Debug, Clone)]
pub struct GenerationRequest {
    pub intent: String,
    pub contract: Value,
    /// Design-time variance (`{ density?, layout?, tone?, ... }`); free-form object.
    pub variance: Value,
    /// The `provider:model` route when the agent asked for one; `None` for the default generator.
    pub model: Option<String>,
}

/// A generated component: TSX with a default-exported React component.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GeneratedComponent {
    pub source: String,
    /// Generator slug that produced it (`builtin`, ...).
    pub generator: String,
    /// Model route, when a language model produced it.
    pub model: Option<String>,
}

#[derive(Debug, thiserror::Error)]
pub enum GenerationError {
    /// Generation ran and produced nothing usable.
    #[error("generation failed: {0}")]
    ProductionFailed(String),
    /// No key for the chosen provider.
    #[error("no credentials for provider {0}")]
    NoCredentials(String),
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

#[async_trait::async_trait]
pub trait Generator: Send + Sync {
    async fn generate(&self, request: &GenerationRequest) -> Result<GeneratedComponent, GenerationError>;
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
}

/// Compiles TSX into an ES module and checks it statically: a default export exists and every
/// import comes from React or one of `allowed_packages`.
pub trait Compiler: Send + Sync {
    fn compile(&self, tsx: &str, allowed_packages: &[String]) -> Result<CompiledModule, CompileFailure>;
}
