//! The oxc pipeline: parse TSX, check the module's shape and its uses of globals, transform
//! TypeScript and JSX (automatic runtime), print an ES module.

use std::path::Path;

use oxc::allocator::Allocator;
use oxc::codegen::Codegen;
use oxc::diagnostics::OxcDiagnostic;
use oxc::parser::{Parser, ParserReturn};
use oxc::semantic::SemanticBuilder;
use oxc::span::SourceType;
use oxc::transformer::{JsxOptions, JsxRuntime, TransformOptions, Transformer};
use svc_application::ports::generation::{CompileFailure, CompileFinding, CompiledModule, Compiler};

use svc_domain::budget::{BudgetExceeded, check_component_bytes, check_component_nesting};

use crate::forbidden_use::check_forbidden_uses;
use crate::module_shape::{check_default_export, check_imports, disallowed_import_message, distinct_specifiers};
use crate::nesting::deepest_nesting;
use crate::policy::is_import_allowed;
use crate::source_location::line_of;

/// In-process TSX compiler. Stateless: one arena per call, so it is cheap to share.
#[derive(Debug, Clone, Copy, Default)]
pub struct OxcCompiler;

impl OxcCompiler {
    pub fn new() -> Self {
        Self
    }
}

/// Stack of the thread each compile runs on. oxc's parser recurses once per nesting level (about
/// 2.4 KiB a level in a debug build), and the nesting budget can only be measured once the parse
/// is done, so the stack must hold the deepest parse the size budget allows: 64 KiB of `(` is
/// about 160 MiB. Only what a parse touches is ever mapped in.
pub(crate) const COMPILE_STACK_BYTES: usize = 256 << 20;

impl Compiler for OxcCompiler {
    fn compile(&self, tsx: &str, allowed_packages: &[String]) -> Result<CompiledModule, CompileFailure> {
        check_component_bytes(tsx).map_err(over_budget)?;
        std::thread::scope(|scope| {
            let compile = std::thread::Builder::new()
                .name("svc-compile".into())
                .stack_size(COMPILE_STACK_BYTES)
                .spawn_scoped(scope, || compile_checked(tsx, allowed_packages));
            match compile {
                Ok(thread) => thread
                    .join()
                    .unwrap_or_else(|_| Err(failure(vec![internal_finding("the compiler panicked")]))),
                Err(_) => Err(failure(vec![internal_finding(
                    "no thread could be started for the compiler",
                )])),
            }
        })
    }
}

/// The whole pipeline, on a thread whose stack holds the deepest parse the size budget allows.
fn compile_checked(tsx: &str, allowed_packages: &[String]) -> Result<CompiledModule, CompileFailure> {
    {
        let allocator = Allocator::default();
        let ParserReturn {
            mut program,
            module_record,
            diagnostics,
            panicked,
            ..
        } = Parser::new(&allocator, tsx, SourceType::tsx().with_module(true)).parse();
        if panicked || !diagnostics.is_empty() {
            return Err(failure(
                diagnostics.iter().map(|d| diagnostic_finding(tsx, d)).collect(),
            ));
        }
        let (depth, deepest_at) = deepest_nesting(&program);
        check_component_nesting(depth, line_of(tsx, deepest_at)).map_err(over_budget)?;

        let mut findings = check_imports(tsx, &program, allowed_packages);
        findings.extend(check_default_export(&module_record));

        // Enum evaluation keeps the transformer from panicking on TS enums.
        let semantic_return = SemanticBuilder::new()
            .with_build_nodes(true)
            .with_check_syntax_error(true)
            .with_enum_eval(true)
            .build(&program);
        findings.extend(semantic_return.diagnostics.errors().map(|d| diagnostic_finding(tsx, d)));
        findings.extend(check_forbidden_uses(tsx, &semantic_return.semantic));
        if !findings.is_empty() {
            return Err(failure(findings));
        }

        let scoping = semantic_return.semantic.into_scoping();
        let transformed = Transformer::new(&allocator, Path::new("component.tsx"), &transform_options())
            .build_with_scoping(scoping, &mut program);
        let transform_errors: Vec<_> = transformed
            .diagnostics
            .errors()
            .map(|d| diagnostic_finding(tsx, d))
            .collect();
        if !transform_errors.is_empty() {
            return Err(failure(transform_errors));
        }

        // The transform may add imports (the JSX runtime, or another source named by a
        // `@jsxImportSource` pragma): what the module finally requests must pass the policy too.
        let imports = distinct_specifiers(&program);
        let added_disallowed: Vec<CompileFinding> = imports
            .iter()
            .filter(|specifier| !is_import_allowed(specifier, allowed_packages))
            .map(|specifier| CompileFinding {
                message: disallowed_import_message(specifier, allowed_packages),
                line: None,
            })
            .collect();
        if !added_disallowed.is_empty() {
            return Err(failure(added_disallowed));
        }

        let code = Codegen::new().build(&program).code;
        Ok(CompiledModule { code, imports })
    }
}

fn transform_options() -> TransformOptions {
    TransformOptions {
        jsx: JsxOptions {
            runtime: JsxRuntime::Automatic,
            development: false,
            ..JsxOptions::enable()
        },
        ..TransformOptions::default()
    }
}

/// A finding from an oxc diagnostic: its line is the primary label's (or the first label's), and
/// when several places are labelled (a redeclaration, say) each is named with its line.
pub(crate) fn diagnostic_finding(source: &str, diagnostic: &OxcDiagnostic) -> CompileFinding {
    let mut message = diagnostic.message.to_string();
    if diagnostic.labels.len() > 1 {
        for label in &diagnostic.labels {
            let line = line_of(source, label.offset());
            match label.label() {
                Some(text) => message.push_str(&format!("; {text} (line {line})")),
                None => message.push_str(&format!("; see line {line}")),
            }
        }
    }
    if let Some(help) = &diagnostic.help {
        message.push_str(&format!(" ({help})"));
    }
    let anchor = diagnostic
        .labels
        .iter()
        .find(|label| label.primary())
        .or_else(|| diagnostic.labels.first());
    let line = anchor.map(|label| line_of(source, label.offset()));
    CompileFinding { message, line }
}

fn failure(findings: Vec<CompileFinding>) -> CompileFailure {
    CompileFailure {
        findings,
        over_budget: None,
    }
}

fn over_budget(over: BudgetExceeded) -> CompileFailure {
    CompileFailure {
        findings: vec![CompileFinding {
            message: over.to_string(),
            line: None,
        }],
        over_budget: Some(over),
    }
}

fn internal_finding(message: &str) -> CompileFinding {
    CompileFinding {
        message: message.to_owned(),
        line: None,
    }
}
