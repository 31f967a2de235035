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

use crate::forbidden_use::check_forbidden_uses;
use crate::module_shape::{check_default_export, check_imports, disallowed_import_message, distinct_specifiers};
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

impl Compiler for OxcCompiler {
    fn compile(&self, tsx: &str, allowed_packages: &[String]) -> Result<CompiledModule, CompileFailure> {
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
fn diagnostic_finding(source: &str, diagnostic: &OxcDiagnostic) -> CompileFinding {
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
    CompileFailure { findings }
}
