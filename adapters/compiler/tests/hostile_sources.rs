//! Properties of untrusted component code, fuzz-style on stable: whatever text reaches the
//! compiler (token soup, or one construct nested up to the size budget), `compile` returns a
//! module or findings; it never panics and never overflows the stack, and code nested past the
//! budget is refused by `component_nesting` or `component_bytes` with the budget named.

use proptest::prelude::*;
use svc_application::ports::generation::Compiler;
use svc_compiler::OxcCompiler;
use svc_domain::budget::Budget;

const TOKENS: [&str; 34] = [
    "(",
    ")",
    "[",
    "]",
    "{",
    "}",
    "<div>",
    "</div>",
    "<>",
    "</>",
    "<b/>",
    "'",
    "\"",
    "`",
    "${",
    "x",
    "1",
    "+",
    "=>",
    "return ",
    "export default function C() {",
    "import { useState } from 'react';\n",
    ";",
    "\n",
    "/*",
    "*/",
    "//",
    "enum E { A }",
    " as ",
    "<T,>",
    "?",
    ":",
    "!",
    "/a/",
];

/// Openers whose nesting makes oxc recurse, each with what closes it.
const NESTERS: [(&str, &str); 10] = [
    ("(", ")"),
    ("[", "]"),
    ("{a:", "}"),
    ("<b>", "</b>"),
    ("`${", "}`"),
    ("()=>", ""),
    ("a=", ""),
    ("a?b:", ""),
    ("-(", ")"),
    ("f(", ")"),
];

proptest! {
    #![proptest_config(ProptestConfig::with_cases(128))]

    #[test]
    fn token_soup_compiles_or_gives_findings(tokens in prop::collection::vec(prop::sample::select(TOKENS.to_vec()), 0..400)) {
        let tsx: String = tokens.concat();
        let _ = OxcCompiler.compile(&tsx, &["@svc/gadgets".to_owned()]);
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(24))]

    #[test]
    fn any_nesting_within_the_size_budget_returns(
        (open, close) in prop::sample::select(NESTERS.to_vec()),
        depth in 0usize..40_000,
        closed in any::<bool>(),
    ) {
        let tail = if closed { close.repeat(depth) } else { String::new() };
        let tsx = format!("export default function C() {{ return {}1{tail}; }}", open.repeat(depth));
        match OxcCompiler.compile(&tsx, &[]) {
            Ok(_) => prop_assert!(depth <= Budget::ComponentNesting.limit().unwrap()),
            Err(failure) => {
                if let Some(over) = failure.over_budget {
                    prop_assert!(matches!(over.budget, Budget::ComponentNesting | Budget::ComponentBytes));
                    prop_assert!(failure.findings[0].message.contains(over.budget.name()));
                }
            }
        }
    }
}

/// A gadget bundle is parsed in this process up to `IN_PROCESS_MODULE_BYTES`: nested as deep as
/// that length allows, with each opener (a level per one to four bytes), it answers instead of
/// overflowing the stack; one byte more is refused without a parse (the registry parses it in a
/// process of its own).
#[test]
fn a_module_nested_as_deep_as_the_in_process_limit_allows_returns() {
    use svc_application::ports::registry::ModuleInspector;
    use svc_compiler::{IN_PROCESS_MODULE_BYTES, OxcModuleInspector};
    for (open, _) in NESTERS.iter().filter(|(open, _)| !open.starts_with('<')) {
        let prefix = "export const useDeep = ";
        let depth = (IN_PROCESS_MODULE_BYTES - prefix.len() - 1) / open.len();
        let module = format!("{prefix}{}1", open.repeat(depth));
        assert!(module.len() <= IN_PROCESS_MODULE_BYTES);
        let _ = OxcModuleInspector.inspect(&module);
    }
    let over = format!("export const useLong = 1;\n//{}", "x".repeat(IN_PROCESS_MODULE_BYTES));
    let refused = OxcModuleInspector.inspect(&over).unwrap_err();
    assert!(
        refused.findings[0].message.contains("parsed in this process"),
        "{refused:?}"
    );
}
