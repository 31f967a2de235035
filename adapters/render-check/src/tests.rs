use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svc_application::ports::generation::{Compiler, RenderCheck, RenderCheckFailure, RenderCheckInput};
use svc_compiler::OxcCompiler;
use svc_domain::gadgets::{ExportName, GadgetDescriptor, GadgetExport};

use crate::engine::Outcome;
use crate::{QuickJsRenderCheck, RenderLimits};

const CHART_PACKAGE: &str = "@acme/charts";

fn charts() -> GadgetDescriptor {
    let export = |name: ExportName| GadgetExport {
        name,
        description: None,
        usage: None,
        example: None,
        gotchas: Vec::new(),
        permission: None,
        required: None,
    };
    GadgetDescriptor::new(
        CHART_PACKAGE,
        "2.1.0",
        vec![
            export(ExportName::Component("BarChart".into())),
            export(ExportName::Hook("useChartPalette".into())),
        ],
    )
}

fn orders_contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" },
            "items": { "type": "array", "items": { "type": "object" } } } },
        "actionSpec": { "approve": { "schema": { "type": "object" } } },
        "streamSpec": { "progress": { "mode": "append", "schema": { "type": "object" } } },
        "contextSpec": { "selected": { "schema": { "type": "string" }, "default": "none" } },
    })
}

fn compiled(tsx: &str) -> String {
    let allowed = ["@svc/gadgets".to_owned(), CHART_PACKAGE.to_owned()];
    OxcCompiler::new()
        .compile(tsx, &allowed)
        .unwrap_or_else(|failure| panic!("the test component compiles: {failure}"))
        .code
}

/// Compiles `tsx` as the pipeline does and checks it through the port with the default limits.
fn check(tsx: &str, props: Value) -> Result<(), RenderCheckFailure> {
    check_with(tsx, props, RenderLimits::default())
}

fn check_with(tsx: &str, props: Value, limits: RenderLimits) -> Result<(), RenderCheckFailure> {
    let code = compiled(tsx);
    let (contract, gadgets) = (orders_contract(), [charts()]);
    QuickJsRenderCheck::new(limits).render(&RenderCheckInput {
        code: &code,
        props: &props,
        contract: &contract,
        gadgets: &gadgets,
        theme_id: None,
    })
}

/// The first frame's markup.
fn markup(tsx: &str, props: Value) -> String {
    let code = compiled(tsx);
    let (contract, gadgets) = (orders_contract(), [charts()]);
    let input = RenderCheckInput {
        code: &code,
        props: &props,
        contract: &contract,
        gadgets: &gadgets,
        theme_id: None,
    };
    match crate::engine::run(&input, &RenderLimits::default()) {
        Ok(Outcome::Rendered(markup)) => markup,
        Ok(Outcome::Threw(finding)) => panic!("the component threw: {}", finding.message),
        Err(fault) => panic!("the check could not run: {fault}"),
    }
}

fn only_message(result: Result<(), RenderCheckFailure>) -> String {
    let findings = match result {
        Err(RenderCheckFailure::Findings(findings)) => findings,
        other => panic!("the render check reports a finding, not {other:?}"),
    };
    assert_eq!(findings.len(), 1, "{findings:?}");
    findings[0].message.clone()
}

#[test]
fn a_component_using_every_standard_hook_renders() {
    let tsx = r#"
import { useState } from "react";
import { useProps, useStream, useAction, useContextSlot, useTheme, useHostContext, useToolChannel } from "@svc/gadgets";

type Props = { title: string; items: { name: string }[] };

export default function Orders() {
  const { title, items } = useProps<Props>();
  const { items: events, last, complete } = useStream<{ pct: number }>("progress");
  const approve = useAction("approve");
  const [selected, setSelected] = useContextSlot<string>("selected");
  const theme = useTheme();
  const host = useHostContext();
  const tool = useToolChannel("progress");
  const [open, setOpen] = useState(false);
  if (selected !== "none") throw new Error("the slot default is not read");
  if (events.length !== 0 || last !== undefined || complete) throw new Error("the stream is not empty");
  if (tool.payload !== undefined || tool.error !== null) throw new Error("the tool channel is not idle");
  if (!theme.vars["--svc-color-fg"]) throw new Error("the theme has no variables");
  return (
    <section data-mode={theme.mode} data-host={String(host.displayMode ?? "inline")}>
      <h2>{title}</h2>
      <ul>{items.map((item) => <li key={item.name} onClick={() => setSelected(item.name)}>{item.name}</li>)}</ul>
      <button onClick={() => { setOpen(!open); approve({ id: 1 }); }}>Approve</button>
    </section>
  );
}
"#;
    let props = json!({ "title": "Orders", "items": [{ "name": "alpha" }, { "name": "beta" }] });
    let html = markup(tsx, props.clone());
    assert!(html.contains("<h2>Orders</h2>"), "{html}");
    assert!(html.contains("<li>alpha</li><li>beta</li>"), "{html}");
    assert!(html.contains(r#"data-mode="light""#), "{html}");
    assert_eq!(check(tsx, props), Ok(()));
}

#[test]
fn a_component_using_the_kit_renders_what_the_built_in_cards_draw() {
    let tsx = r#"
import { useProps, ActionButton, Chart, DataTable, StatusBadge, statusTone } from "@svc/gadgets";

type Props = { title: string; items: { name: string; qty: number }[] };

export default function Kit() {
  const { title, items } = useProps<Props>();
  if (statusTone("rejected") !== "danger") throw new Error("statusTone");
  return (
    <section>
      <h2>{title}</h2>
      <StatusBadge value="pending" />
      <Chart kind="line" label="Qty" points={items.map((item) => ({ label: item.name, value: item.qty }))} />
      <DataTable rows={items} columns={[{ label: "Name", cell: (row) => row.name }, { label: "Qty", numeric: true, cell: (row) => row.qty }]} />
      <ActionButton intent="approve" tone="primary" data={{ id: 1 }}>Approve</ActionButton>
    </section>
  );
}
"#;
    let props = json!({ "title": "Kit", "items": [{ "name": "alpha", "qty": 2 }, { "name": "beta", "qty": 5 }] });
    let html = markup(tsx, props.clone());
    assert!(html.contains(r#"data-tone="accent""#), "the badge: {html}");
    // QuickJS's number formatting differs from a browser's; the points and their names are there.
    assert!(
        html.contains(r#"role="img" aria-label="Qty: alpha: 2"#) && html.contains("beta: 5"),
        "the chart: {html}"
    );
    assert_eq!(html.matches("<circle").count(), 2, "a line chart's points: {html}");
    assert!(
        html.contains(r#"data-layout="table""#) && html.contains("<td"),
        "the table: {html}"
    );
    assert!(
        html.contains(r#"data-intent="approve" data-tone="primary""#),
        "the button: {html}"
    );
    assert_eq!(check(tsx, props), Ok(()));
}

#[test]
fn reading_absent_props_is_a_finding_naming_the_error_and_the_line() {
    let tsx = r#"
import { useProps } from "@svc/gadgets";

export default function Orders() {
  const props = useProps<{ items: { name: string }[] }>();
  return <ul>{props.items.map((item) => <li key={item.name}>{item.name}</li>)}</ul>;
}
"#;
    let message = only_message(check(tsx, json!({ "title": "Orders" })));
    assert!(
        message.starts_with("rendering the component against the fixture props threw TypeError"),
        "{message}"
    );
    assert!(message.contains("'map'"), "{message}");
    assert!(
        message.contains("props.items.map"),
        "the compiled line is quoted: {message}"
    );
    assert!(
        message.ends_with(r#". useProps() returned {"title":"Orders"}"#),
        "{message}"
    );
}

#[test]
fn calling_an_undefined_function_is_a_finding() {
    let tsx = r#"
export default function Orders() {
  // @ts-ignore
  return <p>{formatMoney(12)}</p>;
}
"#;
    let message = only_message(check(tsx, json!({})));
    assert!(message.contains("ReferenceError"), "{message}");
    assert!(message.contains("formatMoney"), "{message}");
}

#[test]
fn a_hook_called_outside_a_component_is_a_finding() {
    let tsx = r#"
import { useState } from "react";

export default function Orders() {
  const rows = [1, 2].map(() => { const [n] = useState(0); return n; });
  return <p>{rows.join(",")}</p>;
}
"#;
    // Hooks inside a callback still run during render: React allows it at runtime. This pins the
    // check to what React itself rejects, not to lint rules.
    assert_eq!(markup(tsx, json!({})), "<p>0,0</p>");
    let outside = r#"
import { useState } from "react";
const early = useState(0);
export default function Orders() { return <p>{String(early)}</p>; }
"#;
    let message = only_message(check(outside, json!({})));
    assert!(
        message.starts_with("loading the component module threw TypeError"),
        "{message}"
    );
    assert!(message.contains("const early = useState(0);"), "{message}");
}

#[test]
fn an_object_rendered_as_a_child_is_a_finding_in_react_words() {
    let tsx = r#"
import { useProps } from "@svc/gadgets";
export default function Orders() {
  const { customer } = useProps<{ customer: { id: number; name: string } }>();
  return <p>{customer as any}</p>;
}
"#;
    let message = only_message(check(tsx, json!({ "customer": { "id": 1, "name": "Ada" } })));
    assert!(message.contains("Objects are not valid as a React child"), "{message}");
}

#[test]
fn an_endless_loop_is_stopped_by_the_time_budget() {
    let tsx = r#"
export default function Spinner() {
  let n = 0;
  while (true) { n++; }
  return <p>{n}</p>;
}
"#;
    let limits = RenderLimits {
        time_budget: Duration::from_millis(300),
        ..RenderLimits::default()
    };
    let started = Instant::now();
    let message = only_message(check_with(tsx, json!({}), limits));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(message.contains("did not finish within 0.3 s"), "{message}");
}

#[test]
fn an_endless_loop_in_a_try_block_cannot_catch_the_interruption() {
    let tsx = r#"
export default function Spinner() {
  for (;;) { try { while (true) {} } catch (e) { /* swallowed */ } }
  return null;
}
"#;
    let limits = RenderLimits {
        time_budget: Duration::from_millis(300),
        ..RenderLimits::default()
    };
    let message = only_message(check_with(tsx, json!({}), limits));
    assert!(message.contains("did not finish within"), "{message}");
}

/// The thrown value's own code (a `toString` that never returns) runs when the finding is
/// written: it has a deadline too, so the check ends.
#[test]
fn a_thrown_value_whose_description_loops_cannot_hang_the_check() {
    let tsx = r#"
export default function Trap() {
  throw { toString() { for (;;) {} }, get message() { for (;;) {} } };
}
"#;
    let started = Instant::now();
    let outcome = check(tsx, json!({}));
    assert!(outcome.is_err(), "a throwing component is a finding");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "took {:?}",
        started.elapsed()
    );
}

#[test]
fn a_huge_allocation_is_a_memory_finding() {
    let tsx = r#"
export default function Hog() {
  const chunks: string[] = [];
  for (let i = 0; i < 1e9; i++) chunks.push("x".repeat(1 << 20) + i);
  return <p>{chunks.length}</p>;
}
"#;
    let started = Instant::now();
    let message = only_message(check(tsx, json!({})));
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "took {:?}",
        started.elapsed()
    );
    assert!(message.contains("ran out of memory (64 MiB)"), "{message}");
}

#[test]
fn endless_recursion_is_a_finding_not_a_crash() {
    let tsx = r#"
function depth(n: number): number { return depth(n + 1) + 1; }
export default function Deep() { return <p>{depth(0)}</p>; }
"#;
    let message = only_message(check(tsx, json!({})));
    assert!(
        message.contains("stack overflow") || message.contains("RangeError"),
        "{message}"
    );
}

#[test]
fn a_component_importing_a_declared_package_renders_with_stubs() {
    let tsx = r#"
import { useProps } from "@svc/gadgets";
import { BarChart, useChartPalette } from "@acme/charts";

export default function Sales() {
  const { title } = useProps<{ title: string }>();
  const palette = useChartPalette();
  const [primary] = palette.colors;
  return (
    <BarChart data={[1, 2]} color={primary}>
      <h3 style={{ color: palette.accent }}>{title}</h3>
    </BarChart>
  );
}
"#;
    assert_eq!(
        markup(tsx, json!({ "title": "Sales" })),
        r#"<h3 style="color:">Sales</h3>"#
    );
}

#[test]
fn a_name_the_module_does_not_export_is_a_load_finding() {
    let tsx = r#"
import { useProps, usePropz } from "@svc/gadgets";
export default function Card() { useProps(); usePropz(); return null; }
"#;
    let message = only_message(check(tsx, json!({})));
    assert_eq!(
        message,
        "loading the component module threw SyntaxError: Could not find export 'usePropz' in module '@svc/gadgets'"
    );
}

#[test]
fn a_react_api_the_cards_react_lacks_is_a_load_finding() {
    // React 19 has `use` and react-dom `useFormStatus`; a card runs on preact/compat, which has
    // neither, so the component would fail to load there.
    for (name, module) in [("use", "react"), ("useFormStatus", "react-dom")] {
        let tsx = format!(
            "import {{ {name} }} from \"{module}\";\nexport default function Card() {{ return typeof {name}; }}\n"
        );
        assert_eq!(
            only_message(check(&tsx, json!({}))),
            format!(
                "loading the component module threw SyntaxError: Could not find export '{name}' in module '{module}'"
            )
        );
    }
    // Through the default import too: compat's default holds only its named exports.
    let tsx = r#"
import React from "react";
export default function Card() { const value = React.use(Promise.resolve(1)); return String(value); }
"#;
    let message = only_message(check(tsx, json!({})));
    assert!(message.contains("TypeError: not a function"), "{message}");
    // What both have still renders: hooks, the default import, a portal's module.
    let tsx = r#"
import React, { useId, useReducer, useSyncExternalStore, useTransition } from "react";
import { flushSync } from "react-dom";
export default function Card() {
  const id = useId();
  const [n] = useReducer((a: number) => a + 1, 1);
  const [pending] = useTransition();
  const v = useSyncExternalStore(() => () => {}, () => 2, () => 2);
  return React.createElement("p", { id }, `${n + v} ${pending} ${typeof flushSync}`);
}
"#;
    assert!(markup(tsx, json!({})).contains(">3 false function</p>"));
}

#[test]
fn formatting_and_browser_globals_a_card_has_do_not_fail_the_check() {
    let tsx = r#"
import { useProps } from "@svc/gadgets";
export default function Invoice() {
  const { total, due } = useProps<{ total: number; due: string }>();
  const money = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD" }).format(total);
  const wide = typeof window !== "undefined" && window.innerWidth > 600;
  const id = crypto.randomUUID();
  return (
    <p id={id} data-wide={String(wide)}>
      {money} {total.toLocaleString()} {new Date(due).toLocaleDateString()} {new Intl.DateTimeFormat().format(new Date(due))}
    </p>
  );
}
"#;
    let html = markup(tsx, json!({ "total": 1234.5, "due": "2025-03-01T00:00:00Z" }));
    assert!(html.contains("USD 1234.50"), "{html}");
    assert!(html.contains("2025-03-01T00:00:00.000Z"), "{html}");
}
