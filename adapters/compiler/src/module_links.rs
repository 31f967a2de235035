//! `ModuleLinker` over oxc: where a plain ES module (a stored component) imports and exports,
//! in UTF-16 offsets, for the card runtime's rewrite into an inline script. The same facts the
//! runtime's lexer (es-module-lexer) would read in the browser, so the lexer need not be sent.

use oxc::allocator::Allocator;
use oxc::ast::ast::{
    Declaration, ExportDefaultDeclarationKind, Expression, ImportExpression, Statement, StringLiteral, WithClause,
};
use oxc::ast_visit::{Visit, walk};
use oxc::parser::Parser;
use oxc::span::{GetSpan, SourceType, Span};
use svc_application::ports::module_links::{ExportLink, ImportLink, ModuleLinker, ModuleLinks};

use crate::OxcModuleInspector;
use crate::oxc_compiler::COMPILE_STACK_BYTES;

impl ModuleLinker for OxcModuleInspector {
    fn links(&self, javascript: &str) -> Option<ModuleLinks> {
        // The parser recurses per nesting level: the compiler's big stack, not the caller's (a
        // blocking thread of the CPU gate; adapters/http's component_links.rs keeps this parse
        // off the async workers).
        std::thread::scope(|scope| {
            std::thread::Builder::new()
                .name("svc-links".into())
                .stack_size(COMPILE_STACK_BYTES)
                .spawn_scoped(scope, || links_of(javascript))
                .ok()?
                .join()
                .ok()?
        })
    }
}

fn links_of(javascript: &str) -> Option<ModuleLinks> {
    let allocator = Allocator::default();
    let parsed = Parser::new(&allocator, javascript, SourceType::mjs()).parse();
    if parsed.panicked || !parsed.diagnostics.is_empty() {
        return None;
    }
    let at = Utf16Offsets::new(javascript);
    let mut links = ModuleLinks::default();
    for statement in &parsed.program.body {
        read_statement(javascript, &at, statement, &mut links);
    }
    let mut dynamic = DynamicImports {
        at: &at,
        found: Vec::new(),
    };
    dynamic.visit_program(&parsed.program);
    links.imports.extend(dynamic.found);
    links.imports.sort_by_key(|import| import.statement_start);
    Some(links)
}

fn read_statement(source: &str, at: &Utf16Offsets, statement: &Statement<'_>, links: &mut ModuleLinks) {
    match statement {
        Statement::ImportDeclaration(import) => {
            links.imports.push(static_import(
                at,
                import.span,
                &import.source,
                import.with_clause.as_deref(),
            ));
        }
        Statement::ExportFromDeclaration(export) => {
            links.imports.push(static_import(
                at,
                export.span,
                &export.source,
                export.with_clause.as_deref(),
            ));
        }
        Statement::ExportAllDeclaration(export) => {
            links.imports.push(static_import(
                at,
                export.span,
                &export.source,
                export.with_clause.as_deref(),
            ));
        }
        Statement::ExportNamedDeclaration(export) => {
            for specifier in &export.specifiers {
                let exported = &specifier.exported;
                links.exports.push(export_link(
                    at,
                    exported.name().as_str(),
                    Some(specifier.local.name().as_str()),
                    exported.span(),
                ));
            }
        }
        Statement::ExportDeclaration(export) => declared_exports(at, &export.declaration, links),
        Statement::ExportDefaultDeclaration(export) => {
            let local = match &export.declaration {
                ExportDefaultDeclarationKind::FunctionDeclaration(function) => {
                    function.id.as_ref().map(|id| id.name.as_str())
                }
                ExportDefaultDeclarationKind::ClassDeclaration(class) => class.id.as_ref().map(|id| id.name.as_str()),
                _ => None,
            };
            links
                .exports
                .push(export_link(at, "default", local, default_keyword(source, export.span)));
        }
        _ => {}
    }
}

fn static_import(
    at: &Utf16Offsets,
    statement: Span,
    source: &StringLiteral<'_>,
    with: Option<&WithClause<'_>>,
) -> ImportLink {
    let end = with.map_or(source.span.end, |clause| clause.span.end);
    ImportLink {
        specifier: Some(source.value.to_string()),
        statement_start: at.of(statement.start),
        statement_end: at.of(end),
        specifier_start: at.of(source.span.start + 1),
        specifier_end: at.of(source.span.end - 1),
        dynamic_at: None,
        attributes_at: with.map(|clause| at.of(clause.span.start)),
    }
}

/// `export const a = 1, { b } = o`, `export function f`, `export class C`.
fn declared_exports(at: &Utf16Offsets, declaration: &Declaration<'_>, links: &mut ModuleLinks) {
    let mut named = |name: &str, span: Span| links.exports.push(export_link(at, name, Some(name), span));
    match declaration {
        Declaration::VariableDeclaration(variables) => {
            for declarator in &variables.declarations {
                for id in declarator.id.get_binding_identifiers() {
                    named(id.name.as_str(), id.span);
                }
            }
        }
        Declaration::FunctionDeclaration(function) => {
            if let Some(id) = &function.id {
                named(id.name.as_str(), id.span);
            }
        }
        Declaration::ClassDeclaration(class) => {
            if let Some(id) = &class.id {
                named(id.name.as_str(), id.span);
            }
        }
        _ => {}
    }
}

fn export_link(at: &Utf16Offsets, name: &str, local: Option<&str>, span: Span) -> ExportLink {
    ExportLink {
        name: name.to_owned(),
        local: local.map(str::to_owned),
        start: at.of(span.start),
        end: at.of(span.end),
    }
}

/// The `default` keyword of `export default ...` starting at `statement`.
fn default_keyword(source: &str, statement: Span) -> Span {
    let after_export = statement.start as usize + "export".len();
    let found = source
        .get(after_export..statement.end as usize)
        .and_then(|rest| rest.find("default"))
        .map_or(after_export, |offset| after_export + offset);
    let start = u32::try_from(found).unwrap_or(statement.start);
    Span::new(start, start + "default".len() as u32)
}

/// Every `import(...)` anywhere in the module.
struct DynamicImports<'o> {
    at: &'o Utf16Offsets<'o>,
    found: Vec<ImportLink>,
}

impl<'a> Visit<'a> for DynamicImports<'_> {
    fn visit_import_expression(&mut self, it: &ImportExpression<'a>) {
        let (specifier, span) = match &it.source {
            Expression::StringLiteral(literal) => (Some(literal.value.to_string()), literal.span),
            other => (None, other.span()),
        };
        self.found.push(ImportLink {
            specifier,
            statement_start: self.at.of(it.span.start),
            statement_end: self.at.of(it.span.end),
            specifier_start: self.at.of(span.start),
            specifier_end: self.at.of(span.end),
            dynamic_at: Some(self.at.of(it.span.start + "import".len() as u32)),
            attributes_at: None,
        });
        walk::walk_import_expression(self, it);
    }
}

/// UTF-8 byte offsets as UTF-16 code unit offsets (the same number for ASCII code).
struct Utf16Offsets<'s> {
    source: &'s str,
    ascii: bool,
}

impl<'s> Utf16Offsets<'s> {
    fn new(source: &'s str) -> Self {
        Self {
            source,
            ascii: source.is_ascii(),
        }
    }

    fn of(&self, byte: u32) -> u32 {
        if self.ascii {
            return byte;
        }
        let units: usize = self.source[..byte as usize].chars().map(char::len_utf16).sum();
        u32::try_from(units).unwrap_or(u32::MAX)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The code between two UTF-16 offsets, as the browser would slice it.
    fn slice(code: &str, start: u32, end: u32) -> String {
        let units: Vec<u16> = code.encode_utf16().collect();
        String::from_utf16(&units[start as usize..end as usize]).unwrap()
    }

    fn links(code: &str) -> ModuleLinks {
        OxcModuleInspector.links(code).expect("parses")
    }

    #[test]
    fn static_imports_span_their_statement_without_the_semicolon_and_their_specifier_inside_its_quotes() {
        // Non-ASCII before the imports: the offsets must count UTF-16 units, not bytes.
        let code = "const s = \"é😀\";\nimport { useState as us, useEffect } from \"react\";\nimport React from 'react';\n\
                    import * as K from \"@svc/gadgets\";\nimport \"side\";\nexport default function Card() { return s; }\n";
        let found = links(code);
        let statements: Vec<String> = found
            .imports
            .iter()
            .map(|i| slice(code, i.statement_start, i.statement_end))
            .collect();
        assert_eq!(
            statements,
            [
                "import { useState as us, useEffect } from \"react\"",
                "import React from 'react'",
                "import * as K from \"@svc/gadgets\"",
                "import \"side\"",
            ]
        );
        for import in &found.imports {
            let specifier = import.specifier.as_deref().unwrap();
            assert_eq!(slice(code, import.specifier_start, import.specifier_end), specifier);
            assert_eq!((import.dynamic_at, import.attributes_at), (None, None));
        }
        let card = &found.exports[0];
        assert_eq!((card.name.as_str(), card.local.as_deref()), ("default", Some("Card")));
        assert_eq!(slice(code, card.start, card.end), "default");
    }

    #[test]
    fn a_dynamic_import_is_marked_just_after_its_keyword_and_import_meta_is_not_an_import() {
        let code = "const m = import.meta.url;\nconst a = await import(\"react\");\nconst b = import(name);\nexport default () => null;\n";
        let found = links(code);
        assert_eq!(found.imports.len(), 2, "{found:?}");
        let literal = &found.imports[0];
        assert_eq!(literal.specifier.as_deref(), Some("react"));
        assert_eq!(
            slice(code, literal.statement_start, literal.dynamic_at.unwrap()),
            "import"
        );
        assert_eq!(
            slice(code, literal.statement_start, literal.statement_end),
            "import(\"react\")"
        );
        let computed = &found.imports[1];
        assert_eq!(computed.specifier, None);
        assert_eq!(slice(code, computed.specifier_start, computed.specifier_end), "name");
        let default = &found.exports[0];
        assert_eq!((default.name.as_str(), default.local.as_deref()), ("default", None));
        assert_eq!(slice(code, default.start, default.end), "default");
    }

    #[test]
    fn exports_name_each_binding_and_re_exports_are_imports_starting_at_export() {
        let code = "import D, { a } from \"x\" with { type: \"json\" };\nexport { a as default, a as \"b\" };\n\
                    export const p = 1, { q, r: [s] } = o;\nexport class Z {}\nexport async function f() {}\n\
                    export { y } from \"y\";\nexport * from \"z\";\n";
        let found = links(code);
        let with = &found.imports[0];
        assert_eq!(
            slice(code, with.statement_start, with.statement_end),
            "import D, { a } from \"x\" with { type: \"json\" }"
        );
        assert!(with.attributes_at.is_some());
        let re_exports: Vec<String> = found.imports[1..]
            .iter()
            .map(|i| slice(code, i.statement_start, i.statement_end))
            .collect();
        assert_eq!(re_exports, ["export { y } from \"y\"", "export * from \"z\""]);
        let exports: Vec<(String, Option<String>, String)> = found
            .exports
            .iter()
            .map(|e| (e.name.clone(), e.local.clone(), slice(code, e.start, e.end)))
            .collect();
        let expected = [
            ("default", Some("a"), "default"),
            ("b", Some("a"), "\"b\""),
            ("p", Some("p"), "p"),
            ("q", Some("q"), "q"),
            ("s", Some("s"), "s"),
            ("Z", Some("Z"), "Z"),
            ("f", Some("f"), "f"),
        ];
        let expected: Vec<(String, Option<String>, String)> = expected
            .iter()
            .map(|(n, l, t)| (n.to_string(), l.map(str::to_owned), t.to_string()))
            .collect();
        assert_eq!(exports, expected);
    }

    #[test]
    fn an_anonymous_default_class_has_no_local_and_code_that_does_not_parse_has_no_links() {
        let found = links("export default class extends Base {}\n");
        assert_eq!(found.exports[0].local, None);
        assert_eq!(
            OxcModuleInspector.links("export default <div/>;"),
            None,
            "JSX is not JavaScript"
        );
        assert_eq!(OxcModuleInspector.links("import {"), None);
    }
}
