//! Compiling untrusted component code off the async workers: the compiler is CPU work (and runs on
//! a thread of its own with a large stack), so an async caller hands it to the blocking pool
//! through the [`CpuGate`] and awaits it, leaving the workers free to answer `/healthz` and every
//! other request.

use std::sync::Arc;

use super::cpu_gate::{CpuBusy, CpuGate, CpuWorkError};
use crate::ports::generation::{CompileFailure, CompileFinding, CompiledModule, Compiler, GeneratedComponent};

/// The module of a generated component: the one its generator already compiled (the LLM pipeline
/// checks what it produced), else `source` compiled now. One compilation per generation; the
/// generation was admitted by the generation queue, so it waits for a CPU slot rather than fail.
pub async fn module_of(
    gate: &CpuGate,
    compiler: &Arc<dyn Compiler>,
    generated: &GeneratedComponent,
    allowed_packages: &[String],
) -> Result<CompiledModule, CompileFailure> {
    match &generated.compiled {
        Some(module) => Ok(module.clone()),
        None => compile_admitted(gate, compiler, &generated.source, allowed_packages).await,
    }
}

/// `compiler.compile(tsx, allowed_packages)` on a blocking thread once a CPU slot frees, however
/// long that takes (work a queue already admitted).
pub async fn compile_admitted(
    gate: &CpuGate,
    compiler: &Arc<dyn Compiler>,
    tsx: &str,
    allowed_packages: &[String],
) -> Result<CompiledModule, CompileFailure> {
    let (compiler, tsx, allowed) = (compiler.clone(), tsx.to_owned(), allowed_packages.to_vec());
    match gate.run_admitted(move || compiler.compile(&tsx, &allowed)).await {
        Ok(compiled) => compiled,
        Err(refused) => Err(failed_inside(&refused)),
    }
}

/// `compiler.compile(tsx, allowed_packages)` on a blocking thread, for a request: refused with
/// [`CpuBusy`] when no CPU slot frees within the gate's wait.
pub async fn compile_off_worker(
    gate: &CpuGate,
    compiler: &Arc<dyn Compiler>,
    tsx: &str,
    allowed_packages: &[String],
) -> Result<Result<CompiledModule, CompileFailure>, CpuBusy> {
    let (compiler, tsx, allowed) = (compiler.clone(), tsx.to_owned(), allowed_packages.to_vec());
    match gate.run(move || compiler.compile(&tsx, &allowed)).await {
        Ok(compiled) => Ok(compiled),
        Err(CpuWorkError::Busy(busy)) => Err(busy),
        Err(panicked) => Ok(Err(failed_inside(&panicked))),
    }
}

fn failed_inside(error: &CpuWorkError) -> CompileFailure {
    tracing::error!(%error, "the compiler did not finish");
    CompileFailure {
        findings: vec![CompileFinding {
            message: "the compiler failed inside the server".into(),
            line: None,
        }],
        over_budget: None,
    }
}
