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
