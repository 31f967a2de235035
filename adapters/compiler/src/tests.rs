//! Behaviour of the whole pipeline, through the `Compiler` port.

use svc_application::ports::generation::{CompileFailure, CompiledModule, Compiler};

use crate::OxcCompiler;

fn gadgets() -> Vec<String> {
    vec!["@svc/gadgets".to_string()]
}

fn compile(tsx: &str) -> Result<CompiledModule, CompileFailure> {
    OxcCompiler.compile(tsx, &gadgets())
}

fn failure_of(tsx: &str) -> CompileFailure {
    match compile(tsx) {
        Ok(module) => panic!("expected findings, compiled to:\n{}", module.code),
        Err(failure) => failure,
    }
}

fn has_finding(failure: &CompileFailure, needle: &str) -> bool {
    failure.findings.iter().any(|finding| finding.message.contains(needle))
}

const VALID: &str = r#"import { useState } from 'react';
import { useProps, useAction } from '@svc/gadgets';
import type { ReactNode } from 'react';

interface Props { title: string; items: Array<{ name: string }> }

export default function Card(): ReactNode {
  const props = useProps<Props>();
  const submit = useAction('pick');
  const [count, setCount] = useState<number>(0);
  return (
    <section style={{ padding: 'var(--svc-space)' }}>
      <h2>{props.title}</h2>
      <ul>{props.items.map((item, i) => <li key={i}>{item.name as string}</li>)}</ul>
      <button data-intent="pick" onClick={() => { setCount(count + 1); submit({ count }); }}>Pick</button>
      <>{count}</>
    </section>
  );
}
"#;

#[test]
fn valid_component_compiles_to_plain_javascript() {
    let module = compile(VALID).expect("compiles");
    assert!(module.code.contains("export default function Card"));
    assert!(module.code.contains("react/jsx-runtime"));
    for syntax in [
        "<section",
        "<h2",
        "</",
        "<>",
        "interface ",
        ": ReactNode",
        "useProps<",
        "as string",
        "import type",
    ] {
        assert!(!module.code.contains(syntax), "`{syntax}` left in:\n{}", module.code);
    }
    assert_eq!(module.imports, vec!["react", "@svc/gadgets", "react/jsx-runtime"]);
}

#[test]
fn kept_imports_drop_type_only_imports() {
    let module = compile("import type { FC } from 'react';\nexport default function A() { return <p>hi</p>; }\n")
        .expect("compiles");
    assert_eq!(module.imports, vec!["react/jsx-runtime"]);
}

#[test]
fn default_export_may_be_an_alias() {
    compile("function A() { return null; }\nexport { A as default };\n").expect("compiles");
}

#[test]
fn missing_default_export_is_a_finding() {
    let failure = failure_of("export function Card() { return <div />; }\n");
    assert!(has_finding(&failure, "no default export"), "{failure:?}");
}

#[test]
fn disallowed_import_is_a_finding_with_its_line() {
    let failure = failure_of("import _ from 'lodash';\nimport x from './local';\nexport default () => <div />;\n");
    let lodash = failure
        .findings
        .iter()
        .find(|f| f.message.contains("`lodash`"))
        .expect("lodash finding");
    assert_eq!(lodash.line, Some(1));
    let local = failure
        .findings
        .iter()
        .find(|f| f.message.contains("`./local`"))
        .expect("local finding");
    assert_eq!(local.line, Some(2));
}

#[test]
fn gadget_package_is_refused_when_the_caller_does_not_allow_it() {
    let tsx = "import { useProps } from '@svc/gadgets';\nexport default () => <div>{String(useProps())}</div>;\n";
    assert!(OxcCompiler.compile(tsx, &[]).is_err());
    assert!(OxcCompiler.compile(tsx, &gadgets()).is_ok());
}

#[test]
fn reexport_from_a_disallowed_package_is_a_finding() {
    let failure = failure_of("export * from 'evil';\nexport default () => null;\n");
    assert!(has_finding(&failure, "`evil`"), "{failure:?}");
}

#[test]
fn fetch_usage_is_a_finding() {
    let failure = failure_of("export default function A() {\n  fetch('/x');\n  return null;\n}\n");
    let finding = failure
        .findings
        .iter()
        .find(|f| f.message.contains("`fetch`"))
        .expect("fetch finding");
    assert_eq!(finding.line, Some(2));
    assert!(finding.message.contains("useAction"));
}

#[test]
fn forbidden_globals_through_the_global_object_are_findings() {
    let failure = failure_of(
        "export default function A() {\n  window.fetch('/x');\n  globalThis['localStorage'];\n  return null;\n}\n",
    );
    assert!(has_finding(&failure, "`window.fetch`"), "{failure:?}");
    assert!(has_finding(&failure, "`globalThis.localStorage`"), "{failure:?}");
}

#[test]
fn forbidden_members_are_findings_once() {
    let failure = failure_of(
        "export default function A() {\n  navigator.sendBeacon.call(navigator, '/x');\n  return <p>{document.cookie}</p>;\n}\n",
    );
    let beacons = failure
        .findings
        .iter()
        .filter(|f| f.message.contains("navigator.sendBeacon"))
        .count();
    assert_eq!(beacons, 1, "{failure:?}");
    assert!(has_finding(&failure, "`document.cookie`"), "{failure:?}");
}

#[test]
fn harmless_globals_and_shadowing_locals_pass() {
    let tsx = "export default function A({ fetch }: { fetch: () => void }) {\n  \
               const eval_ = navigator.language;\n  const x: Function | null = null;\n  \
               fetch();\n  return <p>{eval_}{String(x)}{window.innerWidth}</p>;\n}\n";
    compile(tsx).expect("a local named fetch, a Function type and navigator.language are fine");
}

#[test]
fn eval_and_function_constructor_are_findings() {
    let failure =
        failure_of("export default function A() {\n  eval('1');\n  new Function('return 1');\n  return null;\n}\n");
    assert!(has_finding(&failure, "`eval`"), "{failure:?}");
    assert!(has_finding(&failure, "`Function`"), "{failure:?}");
}

#[test]
fn dynamic_import_is_a_finding() {
    let failure = failure_of("export default function A() {\n  import('@svc/gadgets');\n  return null;\n}\n");
    let finding = failure
        .findings
        .iter()
        .find(|f| f.message.contains("import()"))
        .expect("dynamic import finding");
    assert_eq!(finding.line, Some(2));
}

#[test]
fn syntax_error_has_its_line() {
    let failure = failure_of("export default function A() {\n  const x = ;\n  return null;\n}\n");
    assert_eq!(failure.findings[0].line, Some(2), "{failure:?}");
}

#[test]
fn unclosed_jsx_is_a_finding_not_a_panic() {
    let failure = failure_of("export default function A() {\n  return <div><span></div>;\n}\n");
    assert!(failure.findings.iter().all(|f| f.line.is_some()), "{failure:?}");
}

#[test]
fn ts_enums_compile_instead_of_panicking() {
    let tsx = "enum Mode { Light, Dark = 'dark' }\nconst enum Size { S = 1, M = S * 2 }\n\
               export default function A() {\n  return <p>{Mode.Light}{Size.M}</p>;\n}\n";
    let module = compile(tsx).expect("enums are lowered to plain objects");
    assert!(!module.code.contains("enum "), "{}", module.code);
}

#[test]
fn malformed_ts_enum_is_a_finding_not_a_panic() {
    let failure = failure_of("export default function A() { return null; }\nenum Mode { Light = , Dark }\n");
    assert_eq!(failure.findings[0].line, Some(2), "{failure:?}");
}

#[test]
fn type_only_default_export_is_not_a_component() {
    let failure = failure_of("export default interface Props { title: string }\n");
    assert!(has_finding(&failure, "no default export"), "{failure:?}");
}

#[test]
fn semantic_errors_are_findings() {
    let failure = failure_of("export default function A() {\n  let x = 1;\n  let x = 2;\n  return x;\n}\n");
    let finding = &failure.findings[0];
    assert_eq!(finding.line, Some(2), "{failure:?}");
    assert!(finding.message.contains("redeclared here (line 3)"), "{failure:?}");
}

#[test]
fn jsx_import_source_pragma_cannot_smuggle_a_runtime() {
    let failure = failure_of("/** @jsxImportSource preact */\nexport default function A() { return <p />; }\n");
    assert!(has_finding(&failure, "`preact/jsx-runtime`"), "{failure:?}");
}

/// A component returning `depth` nested parentheses around `1`.
fn nested_parens(depth: usize) -> String {
    format!(
        "export default function C() {{ return {}1{}; }}",
        "(".repeat(depth),
        ")".repeat(depth)
    )
}

#[test]
fn nesting_deeper_than_the_budget_is_refused_before_anything_walks_it() {
    // The issue's attack: 2,000 levels aborted the process on a 2 MiB stack.
    let failure = failure_of(&nested_parens(2_000));
    let over = failure.over_budget.as_ref().expect("refused by a budget");
    assert_eq!(over.budget, svc_domain::budget::Budget::ComponentNesting);
    assert_eq!(over.path, "line 1");
    assert!(has_finding(&failure, "`component_nesting` budget"), "{failure}");
    for (name, tsx) in [
        (
            "jsx",
            format!(
                "export default function C() {{ return {}{}; }}",
                "<b>".repeat(3_000),
                "</b>".repeat(3_000)
            ),
        ),
        (
            "arrays",
            format!(
                "export default function C() {{ return {}1{}; }}",
                "[".repeat(3_000),
                "]".repeat(3_000)
            ),
        ),
        (
            "blocks",
            format!(
                "export default function C() {{ {}{} }}",
                "{".repeat(3_000),
                "}".repeat(3_000)
            ),
        ),
    ] {
        assert!(failure_of(&tsx).over_budget.is_some(), "{name}");
    }
}

#[test]
fn the_deepest_parse_the_size_budget_allows_does_not_overflow() {
    // 64 KiB of `(`, unbalanced: the parser recurses once per byte before it fails.
    let limit = svc_domain::budget::Budget::ComponentBytes.limit().unwrap();
    let prefix = "export default function C() { return ";
    let tsx = format!("{prefix}{}", "(".repeat(limit - prefix.len()));
    assert!(compile(&tsx).is_err());
    let balanced = nested_parens((limit - 50) / 2);
    assert!(failure_of(&balanced).over_budget.is_some());
}

#[test]
fn code_over_the_size_budget_is_not_parsed() {
    let limit = svc_domain::budget::Budget::ComponentBytes.limit().unwrap();
    let tsx = format!("{VALID}\n//{}", "x".repeat(limit));
    let over = failure_of(&tsx).over_budget.expect("refused by a budget");
    assert_eq!(over.budget, svc_domain::budget::Budget::ComponentBytes);
}

#[test]
fn ordinary_components_nest_far_below_the_budget() {
    let allocator = oxc::allocator::Allocator::default();
    let parsed = oxc::parser::Parser::new(&allocator, VALID, oxc::span::SourceType::tsx()).parse();
    let (depth, _) = crate::nesting::deepest_nesting(&parsed.program);
    assert!(depth < 40, "{depth}");
    assert!(compile(&nested_parens(200)).is_ok());
}
