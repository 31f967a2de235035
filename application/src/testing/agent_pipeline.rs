//! In-memory fakes of the agent plane's collaborators beside its store: a process-local bus, a
//! scripted generator, a stub compiler and a flat embedder.

use std::collections::HashMap;
use std::sync::Mutex;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use tokio::sync::broadcast;

use super::lock;
use crate::ports::agent::{EventBus, LiveEvent, Published};
use crate::ports::blueprints::{EmbedError, Embedder};
use crate::ports::generation::{
    CompileFailure, CompileFinding, CompiledModule, Compiler, GeneratedComponent, GenerationError, GenerationRequest,
    Generator,
};

/// The bus of one process: a broadcast channel per topic.
#[derive(Default)]
pub struct LocalBus(Mutex<HashMap<String, broadcast::Sender<Published>>>);

impl LocalBus {
    /// The topics that have a channel now.
    pub fn topics(&self) -> Vec<String> {
        lock(&self.0).keys().cloned().collect()
    }

    fn sender(&self, topic: &str) -> broadcast::Sender<Published> {
        lock(&self.0)
            .entry(topic.to_owned())
            .or_insert_with(|| broadcast::channel(256).0)
            .clone()
    }
}

impl EventBus for LocalBus {
    fn publish(&self, event: LiveEvent) {
        if event.heard_on_every_topic() {
            let published = Published::new(event);
            for sender in lock(&self.0).values() {
                let _ = sender.send(published.clone());
            }
            return;
        }
        for other in event.also_heard_on() {
            let _ = self.sender(other).send(Published::new(event.clone()));
        }
        let _ = self.sender(&event.topic()).send(Published::new(event));
    }

    fn subscribe(&self, topic: &str) -> broadcast::Receiver<Published> {
        self.sender(topic).subscribe()
    }
}

/// A generator that answers what it was told to, and counts the requests it saw.
pub struct ScriptedGenerator {
    answer: Mutex<std::result::Result<String, GenerationError>>,
    requests: Mutex<Vec<GenerationRequest>>,
    /// Held before answering, so a test can keep a generation running.
    delay: Mutex<Duration>,
}

impl Default for ScriptedGenerator {
    fn default() -> Self {
        Self {
            answer: Mutex::new(Ok("export default function Card() { return null; }".into())),
            requests: Mutex::default(),
            delay: Mutex::default(),
        }
    }
}

impl ScriptedGenerator {
    /// Every later generation produces `source`.
    pub fn produce(&self, source: &str) {
        *lock(&self.answer) = Ok(source.to_owned());
    }

    /// Every later generation fails with `error`.
    pub fn fail(&self, error: GenerationError) {
        *lock(&self.answer) = Err(error);
    }

    /// Every later generation takes `delay` first.
    pub fn delay(&self, delay: Duration) {
        *lock(&self.delay) = delay;
    }

    /// The requests seen so far.
    pub fn requests(&self) -> Vec<GenerationRequest> {
        lock(&self.requests).clone()
    }
}

#[async_trait::async_trait]
impl Generator for ScriptedGenerator {
    async fn generate(&self, request: &GenerationRequest) -> std::result::Result<GeneratedComponent, GenerationError> {
        lock(&self.requests).push(request.clone());
        let delay = *lock(&self.delay);
        if !delay.is_zero() {
            tokio::time::sleep(delay).await;
        }
        let source = lock(&self.answer).clone()?;
        Ok(GeneratedComponent {
            source,
            generator: "scripted".into(),
            model: None,
            validator_score: None,
            compiled: None,
        })
    }
}

/// A compiler that "compiles" TSX to itself, prefixed, unless the source has no default export;
/// counts its compilations.
#[derive(Default)]
pub struct StubCompiler {
    compilations: AtomicUsize,
}

impl StubCompiler {
    pub fn compilations(&self) -> usize {
        self.compilations.load(Ordering::SeqCst)
    }
}

impl Compiler for StubCompiler {
    fn compile(&self, tsx: &str, _allowed_packages: &[String]) -> std::result::Result<CompiledModule, CompileFailure> {
        self.compilations.fetch_add(1, Ordering::SeqCst);
        if !tsx.contains("export default") {
            return Err(CompileFailure {
                findings: vec![CompileFinding {
                    message: "the module has no default export".into(),
                    line: None,
                }],
                over_budget: None,
            });
        }
        Ok(CompiledModule {
            code: format!("/* compiled */ {tsx}"),
            imports: vec!["react".into()],
        })
    }
}

/// An embedder that puts every text at the same point: everything is as similar as can be.
#[derive(Default)]
pub struct FlatEmbedder;

#[async_trait::async_trait]
impl Embedder for FlatEmbedder {
    fn model(&self) -> &str {
        "flat"
    }

    async fn embed(&self, texts: &[String]) -> std::result::Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|_| vec![1.0, 0.0]).collect())
    }
}
