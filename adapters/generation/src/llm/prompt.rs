//! The prompt: what the component must do (the agreed contract), what it may use (React, the
//! gadget catalog with each export's usage, example and gotchas, the theme's `--svc-*`
//! variables), the rules the compiler will check, and the operator's persona, aesthetic,
//! context and seed prompt.

use std::fmt::Write as _;

use serde_json::Value;
use svc_application::ports::generation::{CompileFinding, GenerationRequest};
use svc_domain::contract::Contract;
use svc_domain::gadgets::{self, ExportName, GadgetDescriptor};
use svc_domain::themes::{self, ThemeMode};

/// Globals the compiler refuses, quoted in the rules so a model avoids them up front.
const FORBIDDEN_IN_PROMPT: &str = "fetch, XMLHttpRequest, WebSocket, EventSource, localStorage, \
     sessionStorage, indexedDB, caches, document.cookie, navigator.sendBeacon, eval, new Function, \
     Worker, dynamic import()";

/// The rules; `json_reply` when the provider constrains the reply to `{ "tsx": ... }`.
pub fn system_prompt(json_reply: bool) -> String {
    let shape = reply_shape(json_reply);
    format!(
        "You write one React component in TypeScript (TSX) for a card that an AI agent shows to a user.\n\
         Rules the compiler checks; a reply that breaks one is sent back:\n\
         - Reply with {shape} and nothing else.\n\
         - The component is the module's default export: `export default function Card() {{ ... }}`.\n\
         - Import only from `react` and the gadget packages listed below. No other packages, no relative imports, no CSS files.\n\
         - React is React 18's API (cards run on preact/compat): no use, useActionState, useOptimistic, useFormStatus, Profiler or form actions (`<form action={{fn}}>`), and a function component gets no `ref` prop (use forwardRef).\n\
         - Never use {FORBIDDEN_IN_PROMPT}: data arrives through the gadget hooks and user intents leave through useAction.\n\
         - Read props with useProps from @svc/gadgets; never take them as function parameters.\n\
         - Style inline (the `style` prop) with the theme's CSS variables, e.g. `var(--svc-color-accent)`; no hard-coded colours or fonts.\n\
         - Make it accessible: labelled inputs, buttons with text, sensible headings."
    )
}

/// The first user turn.
pub fn user_prompt(request: &GenerationRequest) -> String {
    let contract = &request.contract;
    let mut out = String::new();
    let _ = writeln!(out, "Build the card for this intent: {}\n", request.intent.trim());
    let _ = writeln!(
        out,
        "## Data contract\n```json\n{}\n```",
        pretty(&request.contract.as_value())
    );
    describe_contract(&mut out, contract);
    if request.variance.as_object().is_some_and(|v| !v.is_empty()) {
        let _ = writeln!(out, "\n## Design variance\n```json\n{}\n```", pretty(&request.variance));
    }
    let _ = writeln!(out, "\n## Gadgets you may import");
    for package in catalog(request, contract) {
        describe_package(&mut out, &package);
    }
    describe_theme(&mut out, request.theme_id.as_deref());
    for (title, text) in [
        ("Persona (who uses this card)", &request.persona),
        ("Aesthetic", &request.aesthetic),
        ("Context", &request.context),
        ("Operator instructions", &request.seed_prompt),
    ] {
        if let Some(text) = text.as_deref().map(str::trim).filter(|t| !t.is_empty()) {
            let _ = writeln!(out, "\n## {title}\n{text}");
        }
    }
    out
}

/// The repair turn: the compiler's findings on the previous reply.
pub fn repair_prompt(findings: &[CompileFinding], json_reply: bool) -> String {
    let mut out = format!(
        "Your component was rejected. Fix every problem below and reply with the whole corrected \
         component as {}.\n",
        reply_shape(json_reply)
    );
    for finding in findings {
        match finding.line {
            Some(line) => {
                let _ = writeln!(out, "- line {line}: {}", finding.message);
            }
            None => {
                let _ = writeln!(out, "- {}", finding.message);
            }
        }
    }
    out
}

fn reply_shape(json_reply: bool) -> &'static str {
    if json_reply {
        "a JSON object `{\"tsx\": \"<the whole TSX module>\"}`"
    } else {
        "exactly one ```tsx code block"
    }
}

fn describe_contract(out: &mut String, contract: &Contract) {
    let intents = contract.action_intents();
    if !intents.is_empty() {
        let _ = writeln!(
            out,
            "Wire every action intent to a control with useAction: {}.",
            intents.join(", ")
        );
    }
    let channels: Vec<String> = contract
        .as_map()
        .get("streamSpec")
        .and_then(Value::as_object)
        .map(|spec| spec.keys().cloned().collect())
        .unwrap_or_default();
    if !channels.is_empty() {
        let _ = writeln!(
            out,
            "Show live data from every stream channel with useStream: {}.",
            channels.join(", ")
        );
    }
    let slots = contract.context_slots();
    if !slots.is_empty() {
        let _ = writeln!(
            out,
            "Keep these context slots current with useContextSlot: {}.",
            slots.join(", ")
        );
    }
}

/// The standard package plus the declared packages the contract asks for.
fn catalog(request: &GenerationRequest, contract: &Contract) -> Vec<GadgetDescriptor> {
    let wanted = contract.gadget_packages();
    let declared = request
        .gadgets
        .iter()
        .filter(|g| wanted.contains(&g.package))
        .cloned()
        .collect();
    gadgets::layer(gadgets::standard_package(), declared)
}

fn describe_package(out: &mut String, package: &GadgetDescriptor) {
    let _ = writeln!(out, "\n### `{}` {}", package.package, package.version);
    if package.package == gadgets::STANDARD_PACKAGE {
        let _ = writeln!(
            out,
            "Typed by the server's `{}`. Prefer its components (ActionButton, Chart, DataTable, StatusBadge) to \
             hand-made ones: the built-in generator's cards import the very same components, so cards then look \
             and behave alike.",
            gadgets::STANDARD_TYPES_PATH
        );
    }
    for export in &package.exports {
        let kind = match export.name {
            ExportName::Hook(_) => "hook",
            ExportName::Component(_) => "component",
        };
        let _ = writeln!(out, "- {kind} `{}`", export.name.as_str());
        if let Some(text) = &export.description {
            let _ = writeln!(out, "  {text}");
        }
        if let Some(usage) = &export.usage {
            let _ = writeln!(out, "  usage: `{usage}`");
        }
        if let Some(example) = &export.example {
            let _ = writeln!(out, "  example:\n  ```tsx\n  {}\n  ```", example.replace('\n', "\n  "));
        }
        for gotcha in &export.gotchas {
            let _ = writeln!(out, "  gotcha: {gotcha}");
        }
    }
}

fn describe_theme(out: &mut String, theme_id: Option<&str>) {
    let theme_id = theme_id.unwrap_or(themes::DEFAULT_THEME_ID);
    let _ = writeln!(
        out,
        "\n## Theme variables\nThe mount sets these on the card's root (theme `{theme_id}`); use them through `var(...)`:"
    );
    let values = themes::css_variables(theme_id, ThemeMode::Light)
        .or_else(|| themes::css_variables(theme_id, ThemeMode::Dark))
        .unwrap_or_default();
    for name in themes::CSS_VARIABLE_NAMES {
        match values.get(*name) {
            Some(value) => {
                let _ = writeln!(out, "- `{name}` (now `{value}`)");
            }
            None => {
                let _ = writeln!(out, "- `{name}`");
            }
        }
    }
}

fn pretty(value: &Value) -> String {
    serde_json::to_string_pretty(value).unwrap_or_else(|_| value.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_prompt_carries_contract_catalog_theme_and_operator_fields() {
        let mut request = GenerationRequest::new(
            "order approval",
            json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
                    "actionSpec": { "approve": { "schema": { "type": "object" } } } })
            .try_into()
            .unwrap(),
        )
        .with_persona(Some(" Finance Lead "));
        request.aesthetic = Some("dense, monochrome".into());
        request.context = Some("month-end close".into());
        request.seed_prompt = Some("Put the approve button on the right.".into());
        let prompt = user_prompt(&request);
        for needle in [
            "order approval",
            "\"title\"",
            "useAction: approve",
            "hook `useProps`",
            "usage: `useAction(intent: string)",
            "component `ActionButton`",
            "component `Chart`",
            "usage: `Chart(props: { kind: 'bar' | 'line' | 'sparkline'",
            "Typed by the server's `/_svc/gadgets.d.ts`",
            "gotcha:",
            "`--svc-color-accent`",
            "finance lead",
            "dense, monochrome",
            "month-end close",
            "approve button on the right",
        ] {
            assert!(prompt.contains(needle), "missing {needle:?} in:\n{prompt}");
        }
        assert!(system_prompt(false).contains("document.cookie"));
        assert!(system_prompt(false).contains("```tsx code block"));
        assert!(system_prompt(true).contains("{\"tsx\""));
    }

    #[test]
    fn the_repair_prompt_lists_findings_with_lines() {
        let text = repair_prompt(
            &[
                CompileFinding {
                    message: "`fetch` is not available".into(),
                    line: Some(3),
                },
                CompileFinding {
                    message: "no default export".into(),
                    line: None,
                },
            ],
            false,
        );
        assert!(text.contains("- line 3: `fetch` is not available"));
        assert!(text.contains("- no default export"));
    }
}
