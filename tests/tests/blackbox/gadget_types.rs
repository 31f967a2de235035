//! `GET /_svc/gadgets.d.ts`: the TypeScript declarations of `@svc/gadgets` that a card (generated
//! or hand-written) is typed against, served as the committed file the mount runtime's exports are
//! checked against; and `svc_list_gadgets` lists the same components the file declares.

use std::path::Path;

use reqwest::StatusCode;
use serde_json::json;
use svc_tests::{Auth, Backend, TestApp};

fn committed_declarations() -> String {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/mount/gadgets.d.ts");
    std::fs::read_to_string(path).expect("read adapters/mount/gadgets.d.ts")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gadget_declarations_are_served_and_match_the_catalog() {
    let Some(app) = TestApp::spawn("gadget_types", Backend::Sqlite, Auth::DevAllowAll).await else {
        return;
    };
    let response = app
        .client
        .get(format!("{}/_svc/gadgets.d.ts", app.base))
        .send()
        .await
        .expect("GET /_svc/gadgets.d.ts");
    assert_eq!(response.status(), StatusCode::OK);
    assert_eq!(
        response.headers()["content-type"],
        "application/typescript; charset=utf-8"
    );
    let body = response.text().await.expect("body");
    assert_eq!(body, committed_declarations());
    assert!(body.contains("declare module '@svc/gadgets'"));
    assert!(body.contains("export function useAction(intent: string): (data?: unknown) => Promise<ActionOutcome>;"));

    let listed = app.tool_ok("svc_list_gadgets", json!({})).await;
    let text = listed.to_string();
    for component in ["ActionButton", "Chart", "DataTable", "StatusBadge"] {
        assert!(
            body.contains(&format!("export function {component}")),
            "{component} declared"
        );
        assert!(
            text.contains(&format!("\"component\":\"{component}\"")),
            "{component} listed: {text}"
        );
    }
}

/// A card as a language model (or a person) writes one with the kit, per the generation prompt.
const HAND_WRITTEN_CARD: &str = r#"import { useState } from "react";
import type { ReactNode } from "react";
import { useProps, useAction, ActionButton, Chart, DataTable, StatusBadge, statusTone } from "@svc/gadgets";

interface Props { title: string; status: string; days: { day: string; revenue: number }[] }

export default function Card(): ReactNode {
  const props = useProps<Props>();
  const approve = useAction("approve");
  const [note, setNote] = useState("");
  return (
    <main>
      <h1>{props.title}</h1>
      <StatusBadge value={props.status} tone={statusTone(props.status)} />
      <Chart kind="line" label="Revenue per day" points={props.days.map((d) => ({ label: d.day, value: d.revenue }))} format={(v) => v.toFixed(2)} />
      <DataTable rows={props.days} columns={[{ label: "Day", cell: (d) => d.day }, { label: "Revenue", numeric: true, cell: (d) => d.revenue }]} />
      <input aria-label="Note" value={note} onChange={(e) => setNote(e.target.value)} />
      <ActionButton intent="approve" tone="primary" data={{ note }} onOutcome={(outcome) => { if (!outcome.ok) setNote(outcome.violations[0]?.message ?? ""); }}>Approve</ActionButton>
      <button type="button" onClick={() => void approve({ note }).then((outcome) => outcome.ok && setNote(""))}>Approve quietly</button>
    </main>
  );
}
"#;

/// The same card misusing the kit: the check must refuse it.
const MISTYPED_CARD: &str = r#"import type { ReactNode } from "react";
import { Chart, StatusBadge } from "@svc/gadgets";
export default function Card(): ReactNode {
  return (<main><StatusBadge value={3} /><Chart kind="pie" label="x" points={[]} /></main>);
}
"#;

fn mount_dir() -> std::path::PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../adapters/mount")
}

/// `tsc --noEmit` of `files` beside the served `gadgets.d.ts`, with the committed TypeScript and
/// React types of adapters/mount; the compiler's output when it refuses.
fn type_check(dir: &Path, declarations: &str, files: &[(&str, &str)]) -> Result<(), String> {
    std::fs::write(dir.join("gadgets.d.ts"), declarations).expect("write gadgets.d.ts");
    let mut names = vec!["gadgets.d.ts".to_owned()];
    for (name, source) in files {
        std::fs::write(dir.join(name), source).expect("write card");
        names.push((*name).to_owned());
    }
    let mount = mount_dir().canonicalize().expect("adapters/mount");
    let config = json!({
        "compilerOptions": {
            "target": "ES2022", "module": "ESNext", "moduleResolution": "Bundler", "jsx": "react-jsx",
            "strict": true, "noEmit": true, "skipLibCheck": true, "lib": ["ES2022", "DOM"], "types": [],
            "baseUrl": mount,
            "paths": { "react": ["node_modules/@types/react"], "react/*": ["node_modules/@types/react/*"] }
        },
        "files": names,
    });
    std::fs::write(dir.join("tsconfig.json"), config.to_string()).expect("write tsconfig.json");
    let output = std::process::Command::new("node")
        .arg(mount.join("node_modules/typescript/bin/tsc"))
        .args(["-p", "tsconfig.json"])
        .current_dir(dir)
        .output()
        .expect("run tsc");
    if output.status.success() {
        Ok(())
    } else {
        Err(format!(
            "{}{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        ))
    }
}

/// One kit for every generator: a card the built-in generator wrote (fetched back through
/// `svc_get_render_source`) and a hand-written one both type-check against the served
/// `/_svc/gadgets.d.ts`, and a card misusing the kit does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn generated_and_hand_written_cards_type_check_against_the_served_declarations() {
    let test = "generated_and_hand_written_cards_type_check_against_the_served_declarations";
    let needed = [
        mount_dir().join("node_modules/typescript/bin/tsc"),
        mount_dir().join("node_modules/@types/react"),
    ];
    if !svc_tests::external::deps_present(
        test,
        &needed,
        "SVC_REQUIRE_BROWSER",
        "adapters/mount's TypeScript",
        "run `npm ci` in adapters/mount",
    ) {
        return;
    }
    let Some(app) = TestApp::spawn("gadget_types_check", Backend::Sqlite, Auth::DevAllowAll).await else {
        return;
    };
    // Every kit piece the built-in generator draws with: a badge, charts, tables.
    let contract = json!({
        "propsSpec": { "type": "object", "properties": {
            "title": { "type": "string" },
            "status": { "type": "string", "enum": ["pending", "approved", "rejected"] },
            "revenue": { "type": "number" },
            "revenue_trend": { "type": "array", "items": { "type": "number" } },
            "days": { "type": "array", "items": { "type": "object", "properties": {
                "day": { "type": "string", "format": "date" }, "revenue_usd": { "type": "number" } } } }
        } },
        "actionSpec": { "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } } } } }
    });
    let rendered = app
        .render(
            "kit check",
            contract,
            json!({ "title": "Week", "status": "pending", "revenue": 1.0, "revenue_trend": [1, 2], "days": [] }),
        )
        .await;
    let source = app
        .tool_ok("svc_get_render_source", json!({ "sessionId": rendered["sessionId"] }))
        .await["blueprint"]["source"]
        .as_str()
        .expect("the generated TSX")
        .to_owned();
    for component in ["Chart", "DataTable", "StatusBadge"] {
        assert!(
            source.contains(&format!("<{component} ")),
            "the built-in card uses the kit's {component}:\n{source}"
        );
    }
    assert!(
        source.lines().any(|line| line.starts_with("import {")
            && line.contains("Chart, DataTable, StatusBadge")
            && line.ends_with("from \"@svc/gadgets\";")),
        "imported from the kit:\n{source}"
    );
    let declarations = app
        .client
        .get(format!("{}/_svc/gadgets.d.ts", app.base))
        .send()
        .await
        .expect("GET /_svc/gadgets.d.ts")
        .text()
        .await
        .expect("body");

    let dir = svc_tests::temp_dir("svc-kit-typecheck");
    let checked = type_check(
        &dir,
        &declarations,
        &[("generated.tsx", &source), ("hand-written.tsx", HAND_WRITTEN_CARD)],
    );
    let wrong_dir = svc_tests::temp_dir("svc-kit-typecheck-wrong");
    let refused = type_check(&wrong_dir, &declarations, &[("mistyped.tsx", MISTYPED_CARD)]);
    let _ = std::fs::remove_dir_all(&dir);
    let _ = std::fs::remove_dir_all(&wrong_dir);
    if let Err(errors) = checked {
        panic!("the cards do not type-check against /_svc/gadgets.d.ts:\n{errors}\n{source}");
    }
    let errors = refused.expect_err("a card misusing the kit must not type-check");
    assert!(errors.contains("mistyped.tsx(4,"), "{errors}");
    assert!(errors.contains("\"pie\""), "the unknown chart kind is named: {errors}");
}
