//! Compiling untrusted component code off the async workers: the compiler is CPU work (and runs on
//! a thread of its own with a large stack), so an async caller hands it to the blocking pool and
//! awaits it, leaving the workers free to answer `/healthz` and every other request.

use std::sync::Arc;

use crate::ports::generation::{CompileFailure, CompileFinding, CompiledModule, Compiler, GeneratedComponent};

/// The module of a generated component: the one its generator already compiled (the LLM pipeline
/// checks what it produced), else `source` compiled now. One compilation per generation.
pub async fn module_of(
    compiler: &Arc<dyn Compiler>,
    generated: &GeneratedComponent,
    allowed_packages: &[String],
) -> Result<CompiledModule, CompileFailure> {
    match &generated.compiled {
        Some(module) => Ok(module.clone()),
        None => compile_off_worker(compiler, &generated.source, allowed_packages).await,
    }
}

/// `compiler.compile(tsx, allowed_packages)` on a blocking thread.
pub async fn compile_off_worker(
    compiler: &Arc<dyn Compiler>,
    tsx: &str,
    allowed_packages: &[String],
) -> Result<CompiledModule, CompileFailure> {
    let (compiler, tsx, allowed) = (compiler.clone(), tsx.to_owned(), allowed_packages.to_vec());
    tokio::task::spawn_blocking(move || compiler.compile(&tsx, &allowed))
        .await
        .unwrap_or_else(|panicked| {
            tracing::error!(error = %panicked, "the compiler panicked");
            Err(CompileFailure {
                findings: vec![CompileFinding {
                    message: "the compiler failed inside the server".into(),
                    line: None,
                }],
                over_budget: None,
            })
        })
}
