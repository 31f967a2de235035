//! The module's shape, read from the AST before the transform erases types and adds the JSX
//! runtime import: which modules it requests and whether it has a default export.

use oxc::ast::ast::{Program, Statement, TSModuleReference};
use oxc::syntax::module_record::ModuleRecord;
use svc_application::ports::generation::CompileFinding;

use crate::policy::is_import_allowed;
use crate::source_location::line_of;

/// One module request in the source: an import, or a re-export from another module.
pub(crate) struct ModuleRequest<'a> {
    pub specifier: &'a str,
    pub offset: u32,
}

/// Module requests that survive type erasure, in source order. `import type` and
/// `export type ... from` are skipped: they never reach the browser.
pub(crate) fn value_module_requests<'a>(program: &Program<'a>) -> Vec<ModuleRequest<'a>> {
    program
        .body
        .iter()
        .filter_map(|statement| match statement {
            Statement::ImportDeclaration(import) if !import.import_kind.is_type() => Some(ModuleRequest {
                specifier: import.source.value.as_str(),
                offset: import.span.start,
            }),
            Statement::ExportAllDeclaration(export) if !export.export_kind.is_type() => Some(ModuleRequest {
                specifier: export.source.value.as_str(),
                offset: export.span.start,
            }),
            Statement::ExportFromDeclaration(export) if !export.export_kind.is_type() => Some(ModuleRequest {
                specifier: export.source.value.as_str(),
                offset: export.span.start,
            }),
            _ => None,
        })
        .collect()
}

/// Distinct module specifiers, first occurrence first.
pub(crate) fn distinct_specifiers(program: &Program<'_>) -> Vec<String> {
    let mut specifiers: Vec<String> = Vec::new();
    for request in value_module_requests(program) {
        if !specifiers.iter().any(|known| known == request.specifier) {
            specifiers.push(request.specifier.to_string());
        }
    }
    specifiers
}

/// A finding for every import outside React and `allowed_packages`, and for CommonJS-style
/// `import x = require(...)`, which the browser cannot load.
pub(crate) fn check_imports(source: &str, program: &Program<'_>, allowed_packages: &[String]) -> Vec<CompileFinding> {
    let mut findings: Vec<CompileFinding> = value_module_requests(program)
        .into_iter()
        .filter(|request| !is_import_allowed(request.specifier, allowed_packages))
        .map(|request| CompileFinding {
            message: disallowed_import_message(request.specifier, allowed_packages),
            line: Some(line_of(source, request.offset)),
        })
        .collect();
    for statement in &program.body {
        if let Statement::TSImportEqualsDeclaration(declaration) = statement
            && matches!(
                declaration.module_reference,
                TSModuleReference::ExternalModuleReference(_)
            )
        {
            findings.push(CompileFinding {
                message: "`import x = require(...)` is CommonJS and cannot load in the browser; use an ES `import`"
                    .to_string(),
                line: Some(line_of(source, declaration.span.start)),
            });
        }
    }
    findings
}

pub(crate) fn disallowed_import_message(specifier: &str, allowed_packages: &[String]) -> String {
    let mut allowed: Vec<&str> = crate::policy::BASE_ALLOWED_IMPORTS.to_vec();
    allowed.extend(allowed_packages.iter().map(String::as_str));
    format!(
        "import of `{specifier}` is not allowed; components may import only from: {}",
        allowed.join(", ")
    )
}

/// A finding when nothing (type-only exports aside) is exported as `default`: the mount renders
/// the default export.
pub(crate) fn check_default_export(module_record: &ModuleRecord<'_>) -> Option<CompileFinding> {
    let has_default = module_record
        .local_export_entries
        .iter()
        .chain(module_record.indirect_export_entries.iter())
        .any(|entry| !entry.is_type && entry.export_name.default_export_span().is_some());
    (!has_default).then(|| CompileFinding {
        message: "no default export: the component must be the module's default export \
                  (`export default function Component() { ... }`)"
            .to_string(),
        line: None,
    })
}
