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
