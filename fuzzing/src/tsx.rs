//! The TSX compiler entry: what `svc_ops_register_blueprint`, generation and the registry's
//! conformance gate run on untrusted component code.

use svc_application::ports::generation::Compiler;
use svc_compiler::OxcCompiler;

/// The input is component source (UTF-8; anything else is not TSX a caller can send).
pub fn tsx_compile(data: &[u8]) {
    let Ok(tsx) = std::str::from_utf8(data) else { return };
    let allowed = ["@svc/gadgets".to_owned()];
    match OxcCompiler::new().compile(tsx, &allowed) {
        Ok(module) => assert!(!module.code.is_empty(), "a compiled module has code"),
        // The compiler turns a panic on its thread into this finding; for the fuzzer it is a crash.
        Err(failure) => assert!(
            !failure.findings.iter().any(|f| f.message == "the compiler panicked"),
            "the compiler panicked"
        ),
    }
}
