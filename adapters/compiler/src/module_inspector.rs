//! `OxcModuleInspector`: reads a plain JavaScript ES module's exports and imports without
//! transforming it, for the registry's gadget conformance rule (the bundle is one ES module
//! whose exports match its declared hooks).

use oxc::allocator::Allocator;
use oxc::parser::{Parser, ParserReturn};
use oxc::span::SourceType;
use oxc::syntax::module_record::{ExportExportName, ModuleRecord};
use svc_application::ports::generation::{CompileFailure, CompileFinding};
use svc_application::ports::registry::{EsModuleShape, ModuleInspector};

use crate::oxc_compiler::{COMPILE_STACK_BYTES, diagnostic_finding};

#[derive(Debug, Clone, Copy, Default)]
pub struct OxcModuleInspector;

/// Longest module [`OxcModuleInspector`] parses in this process. oxc's parser recurses once per
/// nesting level and a level can be one byte (`(((...`), about 2.4 KiB of stack each in a debug
/// build and 1.9 KiB optimised: 64 KiB of source fits the compiler's 256 MiB stack, and a longer
/// module could overflow it, which aborts the process. Longer ones are parsed by a process of
/// their own (the registry's `svc registry inspect-bundle`).
pub const IN_PROCESS_MODULE_BYTES: usize = 64 * 1024;

impl ModuleInspector for OxcModuleInspector {
    /// Refuses a module over [`IN_PROCESS_MODULE_BYTES`]: parsing it here could overflow the stack.
    fn inspect(&self, javascript: &str) -> Result<EsModuleShape, CompileFailure> {
        if javascript.len() > IN_PROCESS_MODULE_BYTES {
            return Err(failure(
                format!(
                    "the module is {} bytes; at most {IN_PROCESS_MODULE_BYTES} are parsed in this process",
                    javascript.len()
                ),
                None,
            ));
        }
        inspect_on_stack(javascript, COMPILE_STACK_BYTES)
    }
}

/// Inspects `javascript` on a thread of `stack_bytes` of stack. A module that nests deeper than
/// the stack holds aborts the process: call it only where the stack is known to suffice, or in a
/// process of its own.
pub fn inspect_on_stack(javascript: &str, stack_bytes: usize) -> Result<EsModuleShape, CompileFailure> {
    std::thread::scope(|scope| {
        std::thread::Builder::new()
            .name("svc-inspect".into())
            .stack_size(stack_bytes)
            .spawn_scoped(scope, || inspect_module(javascript))
            .map_err(|_| failure("no thread could be started for the parser".into(), None))?
            .join()
            .unwrap_or_else(|_| Err(failure("the parser panicked".into(), None)))
    })
}

fn inspect_module(javascript: &str) -> Result<EsModuleShape, CompileFailure> {
    let allocator = Allocator::default();
    let ParserReturn {
        module_record,
        diagnostics,
        panicked,
        ..
    } = Parser::new(&allocator, javascript, SourceType::mjs()).parse();
    if panicked || !diagnostics.is_empty() {
        return Err(CompileFailure {
            findings: diagnostics.iter().map(|d| diagnostic_finding(javascript, d)).collect(),
            over_budget: None,
        });
    }
    if let Some(star) = module_record.star_export_entries.first() {
        let from = star.module_request.as_ref().map_or("", |m| m.name.as_str());
        return Err(failure(
            format!("`export * from \"{from}\"` hides which names the bundle exports; export each hook by name"),
            None,
        ));
    }
    Ok(EsModuleShape {
        exports: exported_names(&module_record),
        imports: module_record.requested_modules.keys().map(|k| k.to_string()).collect(),
    })
}

fn exported_names(record: &ModuleRecord<'_>) -> Vec<String> {
    record
        .local_export_entries
        .iter()
        .chain(record.indirect_export_entries.iter())
        .filter(|entry| !entry.is_type)
        .filter_map(|entry| match &entry.export_name {
            ExportExportName::Name(name) => Some(name.name.to_string()),
            ExportExportName::Default(_) => Some("default".to_owned()),
            ExportExportName::Null => None,
        })
        .collect()
}

fn failure(message: String, line: Option<u32>) -> CompileFailure {
    CompileFailure {
        findings: vec![CompileFinding { message, line }],
        over_budget: None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shape(source: &str) -> Result<(Vec<String>, Vec<String>), String> {
        OxcModuleInspector
            .inspect(source)
            .map(|mut s| {
                s.exports.sort();
                (s.exports, s.imports)
            })
            .map_err(|f| f.findings[0].message.clone())
    }

    #[test]
    fn reads_every_kind_of_export() {
        let source = "import { useState } from 'react';\n\
            export function useA() { return useState(0); }\n\
            export const useB = () => 1, useC = 2;\n\
            const d = 1; export { d as useD };\n\
            export { useE } from 'other-lib';\n\
            export default useA;";
        let (exports, imports) = shape(source).unwrap();
        assert_eq!(exports, ["default", "useA", "useB", "useC", "useD", "useE"]);
        let mut imports = imports;
        imports.sort();
        assert_eq!(imports, ["other-lib", "react"]);
    }

    #[test]
    fn refuses_what_is_not_one_plain_module() {
        assert!(shape("export const x = ;").is_err());
        assert!(
            shape("export const x: number = 1;").is_err(),
            "TypeScript is not a compiled bundle"
        );
        let star = shape("export * from './rest.js';").unwrap_err();
        assert!(star.contains("export * from"), "{star}");
    }
}
