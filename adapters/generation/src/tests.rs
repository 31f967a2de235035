//! The built-in generator end to end: every contract shape it meets yields TSX that the real
//! compiler accepts, with the hooks and attributes the mount and browser tests rely on.

use serde_json::{Value, json};
use svc_application::ports::generation::{Compiler, GenerationRequest};
use svc_compiler::OxcCompiler;
use svc_domain::themes::CSS_VARIABLE_NAMES;

use crate::BuiltinGenerator;

const HOSTILE: &str = "Q\"uote's `tick` ${x} {brace} </script><b>&amp; \\ \n\u{2028}end";

fn request(intent: &str, contract: Value, variance: Value) -> GenerationRequest {
    GenerationRequest {
        intent: intent.to_string(),
        contract: contract.try_into().expect("test contracts are objects"),
        variance,
        ..GenerationRequest::default()
    }
}

fn generate(contract: Value) -> String {
    generate_with(contract, json!({}))
}

fn generate_with(contract: Value, variance: Value) -> String {
    BuiltinGenerator
        .generate_now(&request("show_things", contract, variance))
        .expect("generates")
        .source
}

/// Compiles like the render pipeline does and returns the kept imports.
fn assert_compiles(source: &str) -> Vec<String> {
    match OxcCompiler.compile(source, &["@svc/gadgets".to_string()]) {
        Ok(module) => module.imports,
        Err(failure) => panic!("generated source does not compile: {failure:?}\n{source}"),
    }
}

fn table_contract() -> Value {
    json!({
        "propsSpec": {
            "type": "object",
            "required": ["title", "orders"],
            "properties": {
                "title": { "type": "string" },
                "orders": {
                    "type": "array",
                    "description": "Open orders",
                    "items": {
                        "type": "object",
                        "properties": {
                            "id": { "type": "integer" },
                            "customer": { "type": "string", "title": "Customer name" },
                            "placedAt": { "type": "string", "format": "date-time" },
                            "shipDate": { "type": "string", "format": "date" },
                            "tracking": { "type": "string", "format": "uri" },
                            "paid": { "type": "boolean" },
                            "total": { "type": "number" },
                            "lines": { "type": "array", "items": { "type": "object", "properties": { "sku": { "type": "string" } } } },
                            "notes": { "type": "array", "items": { "type": "string" } }
                        }
                    }
                },
                "tags": { "type": "array", "items": { "type": "string" } },
                "scores": { "type": "array", "items": { "type": "number" } },
                "status": { "enum": ["open", "closed", 3] },
                "homepage": { "type": ["string", "null"], "format": "uri" },
                "anything": {},
                "union": { "anyOf": [{ "type": "string" }, { "type": "number" }] }
            }
        }
    })
}

fn nested_contract() -> Value {
    json!({
        "propsSpec": {
            "type": "object",
            "properties": {
                "name": { "type": "string" },
                "customer": {
                    "type": "object",
                    "properties": {
                        "email": { "type": "string", "format": "email" },
                        "address": {
                            "type": "object",
                            "properties": {
                                "city": { "type": "string" },
                                "geo": {
                                    "type": "object",
                                    "properties": {
                                        "lat": { "type": "number" },
                                        "deeper": { "type": "object", "properties": { "x": { "type": "string" } } }
                                    }
                                }
                            }
                        }
                    }
                },
                "openObject": { "type": "object" },
                "matrix": { "type": "array", "items": { "type": "array", "items": { "type": "number" } } }
            }
        }
    })
}

fn actions_contract() -> Value {
    json!({
        "actionSpec": {
            "submit_everything": {
                "description": "Every input type at once",
                "schema": {
                    "type": "object",
                    "required": ["note", "count", "agree", "color"],
                    "properties": {
                        "note": { "type": "string", "maxLength": 200, "description": "A short note" },
                        "email": { "type": "string", "format": "email" },
                        "site": { "type": "string", "format": "uri" },
                        "day": { "type": "string", "format": "date" },
                        "at": { "type": "string", "format": "date-time" },
                        "count": { "type": "integer", "minimum": 1, "maximum": 10, "default": 2 },
                        "ratio": { "type": "number" },
                        "agree": { "type": "boolean", "default": true },
                        "color": { "enum": ["red", "green", 7, null], "default": "green" },
                        "meta": { "type": "object", "properties": { "a": { "type": "string" } } },
                        "list": { "type": "array", "items": { "type": "string" } }
                    }
                }
            },
            "refresh": {},
            "clear": { "schema": { "type": "object" } },
            "rename": { "schema": { "type": "string", "title": "New name" } },
            "rate": { "schema": { "enum": [1, 2, 3] } },
            "pick_rows": { "schema": { "type": "array", "items": { "type": "integer" } } },
            "either": { "schema": { "anyOf": [{ "type": "string" }, { "type": "object" }] } }
        }
    })
}

fn streams_contract() -> Value {
    json!({
        "streamSpec": {
            "log": { "mode": "append", "complete": true, "schema": { "type": "object", "properties": { "line": { "type": "string" }, "at": { "type": "string", "format": "date-time" } } } },
            "progress": { "mode": "replace", "schema": { "type": "number" } },
            "quote": { "mode": "replace", "schema": { "type": "object", "properties": { "price": { "type": "number" } } }, "source": { "tool": "get_quote", "intervalMs": 5000 } },
            "rows": { "mode": "append", "schema": { "type": "array", "items": { "type": "object", "properties": { "k": { "type": "string" } } } } },
            "_svc:lifecycle": { "mode": "replace", "schema": {} }
        }
    })
}

fn slots_contract() -> Value {
    json!({
        "contextSpec": {
            "query": { "schema": { "type": "string" }, "default": "" },
            "page": { "schema": { "type": "integer", "minimum": 1 }, "default": 1 },
            "showClosed": { "schema": { "type": "boolean" } },
            "sort": { "schema": { "enum": ["asc", "desc"] }, "default": "asc" },
            "since": { "schema": { "type": "string", "format": "date-time" } },
            "filters": { "schema": { "type": "object" } }
        }
    })
}

fn hostile_contract() -> Value {
    json!({
        "propsSpec": {
            "type": "object",
            "properties": {
                "title": { "type": "string", "description": HOSTILE },
                HOSTILE: {
                    "type": "array",
                    "title": HOSTILE,
                    "items": { "type": "object", "properties": { HOSTILE: { "type": "string", "title": HOSTILE } } }
                }
            }
        },
        "actionSpec": {
            HOSTILE: {
                "description": HOSTILE,
                "schema": {
                    "type": "object",
                    "required": [HOSTILE],
                    "properties": {
                        HOSTILE: { "type": "string", "title": HOSTILE, "description": HOSTILE, "default": HOSTILE },
                        "choice": { "enum": [HOSTILE, "b"] },
                        "blob": { "type": "object", "title": HOSTILE, "default": { HOSTILE: HOSTILE } }
                    }
                }
            },
            "}</form>{": {}
        },
        "streamSpec": { HOSTILE: { "mode": "append", "schema": { "enum": [HOSTILE] } } },
        "contextSpec": { HOSTILE: { "schema": { "enum": [HOSTILE, { "a": HOSTILE }] } } }
    })
}

fn all_contracts() -> Vec<(&'static str, Value)> {
    vec![
        ("empty", json!({})),
        (
            "empty maps",
            json!({ "propsSpec": {}, "actionSpec": {}, "streamSpec": {}, "contextSpec": {}, "clientCapabilities": { "gadgets": {} }, "agentCapabilities": { "tools": [] } }),
        ),
        ("table", table_contract()),
        ("nested", nested_contract()),
        ("actions", actions_contract()),
        ("streams", streams_contract()),
        ("slots", slots_contract()),
        ("hostile", hostile_contract()),
        ("approval", approval_contract()),
        ("charts", charts_contract()),
    ]
}

fn charts_contract() -> Value {
    json!({ "propsSpec": { "type": "object", "properties": {
        "revenue": { "type": "number" },
        "revenue_trend": { "type": "array", "items": { "type": "number" } },
        "scores": { "type": "array", "items": { "type": "number" } },
        "latency_history": { "type": "array", "items": { "type": "number" } },
        "days": { "type": "array", "items": { "type": "object", "properties": {
            "day": { "type": "string", "format": "date" }, "revenue_usd": { "type": "number" } } } },
        "weeks": { "type": "array", "items": { "type": "object", "properties": {
            "week": { "type": "string" }, "visits": { "type": "integer" } } } }
    } } })
}

#[test]
fn every_contract_shape_compiles() {
    for (name, contract) in all_contracts() {
        for variance in [
            json!({}),
            json!({"density": "compact", "layout": "grid"}),
            json!({"density": "comfortable", "layout": "stack"}),
        ] {
            let source = generate_with(contract.clone(), variance);
            let imports = assert_compiles(&source);
            for import in &imports {
                assert!(
                    ["react", "react/jsx-runtime", "@svc/gadgets"].contains(&import.as_str()),
                    "{name}: {import}"
                );
            }
        }
    }
}

/// The render check must not reject what the built-in generator writes: every shape renders with
/// the least props its contract admits, and with props that fill the optional fields too.
#[test]
fn every_contract_shape_renders_in_the_render_check() {
    use svc_application::ports::generation::{RenderCheck, RenderCheckInput};
    use svc_domain::contract::fixture_props;

    let check = svc_render_check::QuickJsRenderCheck::default();
    let full_table = json!({ "title": "Open", "orders": [{ "id": 1, "customer": "Ada",
        "placedAt": "2025-01-02T03:04:05Z", "shipDate": "2025-01-03", "tracking": "https://t.example/1",
        "paid": true, "total": 12.5 }] });
    for (name, contract) in all_contracts() {
        let code = OxcCompiler
            .compile(&generate(contract.clone()), &["@svc/gadgets".to_string()])
            .expect("compiles")
            .code;
        let least = fixture_props(contract.get("propsSpec").unwrap_or(&json!({ "type": "object" })));
        let mut fixtures = vec![least];
        if name == "table" {
            fixtures.push(full_table.clone());
        }
        if name == "charts" {
            fixtures.push(json!({ "revenue": 12.5, "revenue_trend": [1, 3, 2], "scores": [4, -2],
                "latency_history": [120, 80, 95], "days": [{ "day": "2026-11-16", "revenue_usd": 10 }, { "day": "2026-11-17", "revenue_usd": 12 }],
                "weeks": [{ "week": "W46", "visits": 3 }, { "week": "W47", "visits": 5 }] }));
        }
        for props in fixtures {
            let outcome = check.render(&RenderCheckInput {
                code: &code,
                props: &props,
                contract: &contract,
                gadgets: &[],
                theme_id: None,
            });
            assert_eq!(outcome, Ok(()), "{name} with {props}");
        }
    }
}

#[test]
fn generation_is_deterministic() {
    for (name, contract) in all_contracts() {
        let first = generate(contract.clone());
        let second = generate(contract);
        assert_eq!(first, second, "{name}");
    }
}

#[test]
fn fields_keep_the_order_the_contract_declared() {
    let declared: Value = serde_json::from_str(
        r#"{"actionSpec":{"approve":{},"reject":{}},"propsSpec":{"properties":{"zone":{"type":"string"},"amount":{"type":"number"},"city":{"type":"string"}}}}"#,
    )
    .unwrap();
    let source = generate(declared);
    let at = |needle: &str| {
        source
            .find(needle)
            .unwrap_or_else(|| panic!("{needle} missing:\n{source}"))
    };
    assert!(
        at("{\"Zone\"}") < at("{\"City\"}"),
        "facts in declared order, not sorted"
    );
    assert!(at("function Action0") < at("useAction(\"reject\")"));
    assert!(at("useAction(\"approve\")") < at("useAction(\"reject\")"));
}

fn approval_contract() -> Value {
    json!({
        "propsSpec": {
            "type": "object",
            "properties": {
                "title": { "type": "string" },
                "status": { "enum": ["pending", "approved", "rejected"] },
                "amount": { "type": "number" },
                "currency": { "type": "string" },
                "change_percent": { "type": "number" },
                "conversion_rate": { "type": "number", "maximum": 1 },
                "weight": { "type": "number", "x-svc-hint": "unit", "x-svc-unit": "kilogram" },
                "description": { "type": "string" },
                "opens_at": { "type": "string", "format": "time" },
                "lines": { "type": "array", "items": { "type": "object", "properties": {
                    "sku": { "type": "string" }, "qty": { "type": "integer" }, "price": { "type": "number" }, "currency": { "type": "string" } } } }
            }
        },
        "actionSpec": {
            "approve": {},
            "reject": { "schema": { "type": "object", "properties": { "reason": { "type": "string" } }, "required": ["reason"] } },
            "book": { "schema": { "type": "object", "required": ["at"], "properties": {
                "at": { "type": "string", "format": "time" },
                "guests": { "type": "array", "items": { "type": "object", "required": ["name"], "properties": {
                    "name": { "type": "string" }, "vegetarian": { "type": "boolean" }, "seat": { "enum": ["a", "b", "c", "d", "e"] } } } } } } },
            "delete_draft": {}
        }
    })
}

#[test]
fn values_are_shown_by_meaning() {
    let source = generate(approval_contract());
    assert!(source.contains("<StatusBadge value={asText(at(props, \"status\"))} />"));
    assert!(source.contains("{formatMoney(at(props, \"amount\"), at(props, \"currency\"))}"));
    assert!(source.contains("{formatMoney(at(row0, \"price\"), at(row0, \"currency\"))}"));
    assert!(source.contains("{formatPercent(at(props, \"change_percent\"), true)}"));
    assert!(source.contains("{formatPercent(at(props, \"conversion_rate\"), false)}"));
    assert!(source.contains("{formatUnit(at(props, \"weight\"), \"kilogram\")}"));
    assert!(source.contains("<p style={styles.prose}>{asText(at(props, \"description\"))}</p>"));
    assert!(source.contains("{formatTime(at(props, \"opens_at\"))}"));
    assert!(source.contains("<div style={styles.tiles}>"), "numbers are KPI tiles");
    assert!(
        source.contains("<dl style={styles.facts}>"),
        "scalars are key facts in a grid"
    );
    assert!(source.contains("numeric: true,"));
    assert!(source.contains("label: \"SKU\","));
    assert!(!source.contains("<Chart "), "line items are no series");
}

#[test]
fn numeric_series_get_a_chart_beside_their_numbers() {
    let contract = charts_contract();
    let source = generate(contract);
    assert!(
        source.contains("<Chart kind=\"bar\" label={\"Scores\"} points={chartPoints(asRows(at(props, \"scores\")).map((value) => ({ label: \"\", value })))} />"),
        "a list of numbers: bars"
    );
    assert!(
        source.contains("<Chart kind=\"line\" label={\"Latency history\"} points={chartPoints(asRows(at(props, \"latency_history\"))"),
        "a history: a line"
    );
    assert!(
        source.contains("<Chart kind=\"line\" label={\"Revenue USD\"} points={chartPoints(asRows(at(props, \"days\")).map((row0) => ({ label: formatDate(at(row0, \"day\")), value: at(row0, \"revenue_usd\") })))} />"),
        "a series over dates: a line"
    );
    assert!(
        source.contains("<Chart kind=\"bar\" label={\"Visits\"} points={chartPoints(asRows(at(props, \"weeks\")).map((row0) => ({ label: asText(at(row0, \"week\")), value: at(row0, \"visits\") })))} />"),
        "a series over named periods: bars"
    );
    assert!(
        source.contains("<Chart kind=\"sparkline\" label={\"Revenue trend\"} points={chartPoints(asRows(at(props, \"revenue_trend\")).map((value) => ({ label: \"\", value })))} format={(point: unknown): string => formatNumber(point)} />"),
        "a number's history is a sparkline in its tile"
    );
    assert!(
        !source.contains("<h2 style={styles.sectionTitle}>{\"Revenue trend\"}</h2>"),
        "and no block of its own"
    );
    assert!(
        source.contains("import { useProps, Chart, DataTable } from \"@svc/gadgets\";"),
        "the charts are the kit's, imported as a language model's card imports them"
    );
    assert!(
        source.contains("<DataTable rows={asRows(at(props, \"days\"))}"),
        "the numbers stay as the fallback"
    );
    assert_compiles(&source);
}

#[test]
fn at_most_two_buttons_sit_at_the_bottom() {
    let contract = json!({ "actionSpec": { "approve": {}, "reject": {}, "snooze": {}, "escalate": {} } });
    let source = generate(contract);
    let bar = &source
        [source.find("<div style={styles.actions}>").unwrap()..source.find("<details data-more-actions").unwrap()];
    assert!(bar.contains("<Action0 />") && bar.contains("<Action1 />") && !bar.contains("<Action2 />"));
    let more = &source[source.find("<details data-more-actions").unwrap()..];
    assert!(more.contains("<Action2 />") && more.contains("<Action3 />"));
    assert_compiles(&source);
}

#[test]
fn an_action_taking_a_row_id_is_a_button_on_every_row() {
    let mut contract = approval_contract();
    contract["actionSpec"]["remove_line"] =
        json!({ "schema": { "type": "object", "required": ["sku"], "properties": { "sku": { "type": "string" } } } });
    let source = generate(contract);
    assert!(source.contains("function Action4({ row }: { row: unknown }): ReactNode {"));
    assert!(source.contains("void submit({ \"sku\": at(row, \"sku\") }).then((outcome) => {"));
    assert!(source.contains(
        "{ label: \"Remove line\", numeric: false, cell: (row0: unknown): ReactNode => <Action4 row={row0} /> },"
    ));
    assert!(!source.contains("<Action4 />"), "no separate form asking for the SKU");
    assert_compiles(&source);
}

#[test]
fn a_multi_step_contract_shows_a_stepper_with_back_and_next() {
    let contract = json!({
        "propsSpec": { "type": "object", "properties": {
            "title": { "type": "string" },
            "step": { "type": "integer", "minimum": 1 },
            "steps": { "type": "array", "items": { "type": "string" } }
        } },
        "actionSpec": { "back": {}, "next": {} }
    });
    let source = generate(contract);
    assert!(source.contains("{`Step ${asText(at(props, \"step\"))} of ${asRows(at(props, \"steps\")).length}`}"));
    assert!(source.contains("aria-current={index + 1 === at(props, \"step\") ? \"step\" : undefined}"));
    assert!(
        !source.contains("<div style={styles.tiles}>"),
        "the step number is no KPI tile"
    );
    assert!(source.contains("data-intent={\"back\"} data-tone=\"secondary\""));
    assert!(source.contains("data-intent={\"next\"} data-tone=\"primary\""));
    assert_compiles(&source);
}

#[test]
fn forms_send_what_the_schema_accepts_once_per_gesture() {
    let source = generate(approval_contract());
    assert!(source.contains("<input type=\"time\""));
    assert!(
        source.contains("data[\"at\"] = toFullTime(value0);"),
        "09:30 is sent as RFC 3339 full-time"
    );
    assert!(
        source.contains("if (once.current !== null && once.current.props === current) return;"),
        "a double click sends once"
    );
    assert!(
        source.contains("data-tone=\"danger\" style={styles.dangerButton}"),
        "reject is danger"
    );
    assert!(source.contains("data-intent={\"approve\"} data-tone=\"primary\""));
    assert!(source.contains("data-intent={\"delete_draft\"} data-tone=\"danger\""));
    assert!(source.contains("{\"Add row\"}"), "arrays of objects are row editors");
    assert!(source.contains("item[\"vegetarian\"] = (row[\"vegetarian\"] ?? \"\") === \"true\";"));
    assert!(!source.contains("placeholder=\"JSON\""), "no raw JSON box");
    assert!(source.contains("Sent: Approve"));
    assert!(
        source.contains("setStatus({ props, phase: \"sending\", text, message: \"\", errors: {} });")
            && source.contains("disabled={sending || sent !== null} aria-busy={sending}"),
        "a sending state: the button is disabled while the server has not answered"
    );
    assert!(
        source.contains("errors: fieldErrors(outcome.violations)")
            && source.contains("aria-invalid={errorAt(errors, \"at\") !== undefined}")
            && source.contains("data-field-error={\"at\"}"),
        "the field the server names in a refusal shows its error inline"
    );
    assert!(source.contains("Not sent: Approve"), "a refusal says nothing was sent");
}

#[test]
fn variance_changes_spacing_and_layout() {
    let contract = table_contract();
    let stack = generate_with(contract.clone(), json!({"density": "comfortable", "layout": "stack"}));
    let grid = generate_with(contract.clone(), json!({"density": "compact", "layout": "grid"}));
    assert_ne!(stack, grid);
    assert!(grid.contains("gridTemplateColumns: \"repeat(auto-fit"));
    assert!(stack.contains("flexDirection: \"column\", gap: \"calc(var(--svc-space) * 2)\""));
    assert_eq!(
        generate_with(contract.clone(), json!({"tone": "playful"})),
        generate(contract)
    );
}

#[test]
fn props_are_shown_by_type() {
    let source = generate(table_contract());
    assert!(source.contains("<h1 style={styles.title}>{asText(at(props, \"title\"))}</h1>"));
    assert!(source.contains("<DataTable rows={asRows(at(props, \"orders\"))} columns={["));
    assert!(source.contains("label: \"Customer name\","));
    assert!(source.contains("label: \"Placed at\","));
    assert!(source.contains("{formatDateTime(at(row0, \"placedAt\"))}"));
    assert!(source.contains("{formatDate(at(row0, \"shipDate\"))}"));
    assert!(source.contains("<SafeLink href={at(row0, \"tracking\")} />"));
    assert!(source.contains("{formatBoolean(at(row0, \"paid\"))}"));
    assert!(source.contains("{formatNumber(at(row0, \"total\"))}"));
    assert!(source.contains("asRows(at(props, \"tags\")).map((item0, index0)"));
    assert!(source.contains("<JsonValue value={at(props, \"union\")} />"));
    assert!(source.contains("{\"Open orders\"}"));
    let imports: Vec<&str> = source.lines().filter(|line| line.starts_with("import ")).collect();
    assert!(
        imports.contains(&"import { useProps, Chart, DataTable, StatusBadge } from \"@svc/gadgets\";"),
        "the kit's table comes from @svc/gadgets: {imports:?}"
    );
}

#[test]
fn nested_objects_are_key_value_views_down_to_a_depth() {
    let source = generate(nested_contract());
    assert!(source.contains("<h1 style={styles.title}>{asText(at(props, \"name\"))}</h1>"));
    assert!(source.contains("<dt style={styles.factName}>{\"City\"}</dt>"));
    assert!(source.contains("{formatNumber(at(at(at(at(props, \"customer\"), \"address\"), \"geo\"), \"lat\"))}"));
    assert!(
        source.contains("<JsonValue value={at(at(at(at(props, \"customer\"), \"address\"), \"geo\"), \"deeper\")} />")
    );
    assert!(source.contains("<JsonValue value={at(props, \"openObject\")} />"));
}

#[test]
fn actions_become_forms_and_buttons_with_data_intent() {
    let source = generate(actions_contract());
    for intent in [
        "submit_everything",
        "refresh",
        "clear",
        "rename",
        "rate",
        "pick_rows",
        "either",
    ] {
        assert!(source.contains(&format!("useAction(\"{intent}\")")), "{intent}");
        assert!(source.contains(&format!("data-intent={{\"{intent}\"}}")), "{intent}");
    }
    assert!(source.contains("<form data-intent={\"submit_everything\"}"));
    assert!(source.contains("<input type=\"text\""));
    assert!(source.contains("<input type=\"email\""));
    assert!(source.contains("<input type=\"url\""));
    assert!(source.contains("<input type=\"date\""));
    assert!(source.contains("<input type=\"datetime-local\""));
    assert!(source.contains("step={1} min={1} max={10}"));
    assert!(source.contains("<input type=\"checkbox\""));
    assert!(
        source.contains("<input type=\"radio\" name=\"action0-8\""),
        "a short enum is a segmented control"
    );
    assert!(
        source.contains("<fieldset style={styles.fieldset}>"),
        "an object is a fieldset"
    );
    assert!(source.contains("<textarea"));
    assert!(source.contains("data[\"count\"] = Number(value"));
    assert!(source.contains("[\"red\",\"green\",7,null][Number("));
    assert!(source.contains("onClick={() => send()}"));
    assert!(source.contains("onClick={() => send({})}"));
    assert!(source.contains("let data: unknown = undefined;"));
}

#[test]
fn streams_use_use_stream_by_mode() {
    let source = generate(streams_contract());
    for channel in ["log", "progress", "quote", "rows"] {
        assert!(source.contains(&format!("useStream(\"{channel}\")")), "{channel}");
    }
    assert!(!source.contains("_svc:lifecycle"), "reserved channels are not rendered");
    assert!(source.contains("asRows(items).map((entry, position)"));
    assert!(
        source.contains("<span>{asText(at(entry, \"line\"))}</span>{\" \"}"),
        "a record of scalars on an append channel is one log line"
    );
    assert!(source.contains("{last === undefined ? ("));
    assert!(source.contains("{formatNumber(last)}"));
}

#[test]
fn context_slots_are_bound_inputs() {
    let source = generate(slots_contract());
    for slot in ["query", "page", "showClosed", "sort", "since", "filters"] {
        assert!(source.contains(&format!("useContextSlot(\"{slot}\")")), "{slot}");
    }
    assert!(source.contains("setValue(event.target.checked)"));
    assert!(source.contains("setValue(options[Number(event.target.value)])"));
    assert!(source.contains("setValue(toIsoDateTime(event.target.value))"));
    assert!(source.contains("parseJson(text)"));
}

#[test]
fn hostile_strings_never_reach_the_source_raw() {
    let source = generate(hostile_contract());
    assert_compiles(&source);
    assert!(!source.contains("</script>"));
    assert!(!source.contains("<b>"));
    assert!(!source.contains("</form>{"));
    assert!(!source.contains('\u{2028}'));
    assert!(source.contains("\\u003c/script\\u003e"));
}

#[test]
fn empty_contract_shows_the_intent() {
    let source = BuiltinGenerator
        .generate_now(&request("weather report", json!({}), json!({})))
        .unwrap()
        .source;
    assert!(source.contains("{\"Weather report\"}"));
    assert!(source.contains("{\"Nothing to show yet.\"}"));
    assert!(!source.contains("@svc/gadgets"), "no hooks needed, none imported");
    assert_compiles(&source);
}

#[test]
fn styling_uses_only_theme_variables() {
    for (name, contract) in all_contracts() {
        let source = generate(contract);
        let mut rest = source.as_str();
        while let Some(start) = rest.find("--svc-") {
            let variable: String = rest[start..]
                .chars()
                .take_while(|character| character.is_ascii_alphanumeric() || *character == '-')
                .collect();
            assert!(
                CSS_VARIABLE_NAMES.contains(&variable.as_str()),
                "{name}: unknown theme variable {variable}"
            );
            rest = &rest[start + variable.len()..];
        }
        assert!(!source.contains('#'), "{name}: no hard-coded colours");
        assert!(!source.contains(".css"), "{name}: no CSS imports");
    }
}

#[test]
fn reports_the_builtin_slug_and_no_model() {
    let component = BuiltinGenerator
        .generate_now(&request("x", json!({}), json!({})))
        .unwrap();
    assert_eq!(component.generator, "builtin");
    assert_eq!(component.model, None);
}
