//! Uses of browser capabilities a component may not have, found through semantic analysis: only
//! references that resolve to no local binding are globals, so a prop named `fetch` is fine.

use oxc::ast::AstKind;
use oxc::ast::ast::Expression;
use oxc::semantic::{IsGlobalReference, Scoping, Semantic};
use svc_application::ports::generation::CompileFinding;

use crate::policy::{is_forbidden_global, is_forbidden_member, is_global_object_alias};
use crate::source_location::line_of;

/// Findings for forbidden globals, forbidden members of globals and dynamic `import()`, in
/// source order. `semantic` must have been built with its node store.
pub(crate) fn check_forbidden_uses(source: &str, semantic: &Semantic<'_>) -> Vec<CompileFinding> {
    let scoping = semantic.scoping();
    let mut findings = Vec::new();
    for node in semantic.nodes().iter() {
        let found = match node.kind() {
            AstKind::IdentifierReference(identifier) => {
                let name = identifier.name.as_str();
                (is_forbidden_global(name) && is_global_value_use(identifier.reference_id(), scoping))
                    .then(|| (identifier.span.start, forbidden_message(name, name)))
            }
            AstKind::StaticMemberExpression(member) => {
                forbidden_member_use(&member.object, member.property.name.as_str(), scoping)
                    .map(|message| (member.span.start, message))
            }
            AstKind::ComputedMemberExpression(member) => member
                .static_property_name()
                .and_then(|property| forbidden_member_use(&member.object, property.as_str(), scoping))
                .map(|message| (member.span.start, message)),
            AstKind::ImportExpression(import) => Some((
                import.span.start,
                "dynamic `import()` is not allowed; import statically from an allowed package".to_string(),
            )),
            _ => None,
        };
        if let Some((offset, message)) = found {
            findings.push(CompileFinding {
                message,
                line: Some(line_of(source, offset)),
            });
        }
    }
    findings
}

/// A value use of an unresolved (global) reference; `typeof fetch` in a type position is erased.
fn is_global_value_use(reference_id: oxc::semantic::ReferenceId, scoping: &Scoping) -> bool {
    let reference = scoping.get_reference(reference_id);
    reference.symbol_id().is_none()
        && reference.is_value()
        && !reference.is_type()
        && !reference.flags().is_value_as_type()
}

/// `window.fetch`, `globalThis["eval"]`, `navigator.sendBeacon`, `window.document.cookie`...
/// Only the member that completes a forbidden path reports, so `navigator.sendBeacon.call` gives
/// one finding, not two.
fn forbidden_member_use(object: &Expression<'_>, property: &str, scoping: &Scoping) -> Option<String> {
    let mut path = global_path(object, scoping)?;
    path.push(property);
    let written = path.join(".");
    let mut unaliased = path.as_slice();
    while unaliased.len() > 1 && is_global_object_alias(unaliased[0]) {
        unaliased = &unaliased[1..];
    }
    let reached_through_alias = unaliased.len() < path.len();
    match unaliased {
        [name] if reached_through_alias && is_forbidden_global(name) => Some(forbidden_message(&written, name)),
        [object, property] if is_forbidden_member(object, property) => Some(forbidden_message(&written, object)),
        _ => None,
    }
}

/// The dotted path of a member chain rooted at a global identifier, e.g. `["window", "navigator"]`.
fn global_path<'a>(expression: &'a Expression<'a>, scoping: &Scoping) -> Option<Vec<&'a str>> {
    match expression.without_parentheses() {
        Expression::Identifier(identifier) if identifier.is_global_reference(scoping) => {
            Some(vec![identifier.name.as_str()])
        }
        other => {
            let member = other.as_member_expression()?;
            let mut path = global_path(member.object(), scoping)?;
            path.push(member.static_property_name()?);
            Some(path)
        }
    }
}

fn forbidden_message(written: &str, root: &str) -> String {
    format!("`{written}` is not available to components: {}", remedy(root))
}

/// What to use instead, so a generator's repair pass has something to go on.
fn remedy(root: &str) -> &'static str {
    match root {
        "localStorage" | "sessionStorage" | "indexedDB" | "caches" | "cookieStore" | "document" => {
            "keep UI state in React state, or in a contextSpec slot with useContextSlot from @svc/gadgets"
        }
        "eval" | "Function" | "importScripts" | "Worker" | "SharedWorker" => {
            "components may not evaluate or load code at run time"
        }
        _ => {
            "send user intents with useAction and read live data with useStream or useToolChannel \
             from @svc/gadgets"
        }
    }
}
