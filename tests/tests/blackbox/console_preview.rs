//! The console's blueprint previews (docs/console.md, "Blueprint previews"): a blueprint of the
//! session's app is served at `/console/blueprints/<id>/preview` as a card document (the mount
//! runtime and the compiled component inline, its fixture props in the bootstrap) under a policy
//! that allows no connection and only this origin as a framer; registered and listed through the
//! console's `/ops` tools, whose `Blueprint` rows say whether a blueprint can be mounted.

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

use crate::console_session::{Session, open, tool};

const TITLE_CONTRACT: &str = r#"{
  "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] }
}"#;

const TITLE_COMPONENT: &str = "import { useProps } from '@svc/gadgets';\n\
export default function Title() { const { title } = useProps<{ title: string }>(); return <h2>{title}</h2>; }";

async fn preview(base: &str, cookie: Option<&str>, blueprint_id: &str) -> reqwest::Response {
    let mut req = reqwest::Client::new().get(format!("{base}/console/blueprints/{blueprint_id}/preview"));
    if let Some(cookie) = cookie {
        req = req.header("cookie", cookie);
    }
    req.send().await.unwrap()
}

async fn refusal_code(resp: reqwest::Response) -> (StatusCode, Value) {
    let status = resp.status();
    let body: Value = resp.json().await.unwrap_or(Value::Null);
    (status, body["error"]["code"].clone())
}

async fn register(base: &str, session: &Session, code: &str) -> String {
    let contract: Value = serde_json::from_str(TITLE_CONTRACT).unwrap();
    let stored = tool(
        base,
        session,
        "svc_ops_register_blueprint",
        json!({ "contract": contract, "componentCode": code }),
    )
    .await;
    stored["blueprintId"].as_str().unwrap().to_owned()
}

#[tokio::test]
async fn a_blueprint_preview_mounts_the_component_with_props_and_no_connection() {
    let app = TestApp::spawn("console_preview", Backend::Sqlite, Auth::Strict)
        .await
        .unwrap();
    let session = open(&app.base, json!({ "key": app.bearer })).await;
    let id = register(&app.base, &session, TITLE_COMPONENT).await;

    let listed = tool(&app.base, &session, "svc_ops_list_blueprints", json!({})).await;
    let row = listed["blueprints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["blueprintId"] == id.as_str())
        .unwrap()
        .clone();
    assert_eq!(row["mountable"], true, "{row}");
    assert!(
        row.get("fixtureProps").is_none(),
        "a registered component has none: {row}"
    );

    let resp = preview(&app.base, Some(&session.cookie), &id).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let policy = resp.headers()["content-security-policy"].to_str().unwrap().to_owned();
    for directive in [
        "connect-src 'none'",
        "frame-ancestors 'self'",
        "default-src 'none'",
        "frame-src 'none'",
        // Opened as a tab of its own, the blueprint still runs on an opaque origin.
        "sandbox allow-scripts",
    ] {
        assert!(policy.contains(directive), "{directive} missing from {policy}");
    }
    assert!(!policy.contains("unsafe-eval"), "{policy}");
    assert!(!policy.contains("allow-same-origin"), "{policy}");
    assert_eq!(resp.headers()["referrer-policy"], "no-referrer");
    let html = resp.text().await.unwrap();
    assert!(
        html.contains(r#"<script type="application/json" id="svc-bootstrap">"#),
        "{html:.300}"
    );
    assert!(
        html.contains(&format!(r#""blueprintId":"{id}""#)),
        "the component is inline"
    );
    // Props built from the contract: an object with a string `title`.
    let bootstrap_start = html.find(r#"id="svc-bootstrap">"#).unwrap() + r#"id="svc-bootstrap">"#.len();
    let bootstrap_end = bootstrap_start + html[bootstrap_start..].find("</script>").unwrap();
    let bootstrap: Value = serde_json::from_str(&html[bootstrap_start..bootstrap_end]).unwrap();
    assert!(bootstrap["props"]["title"].is_string(), "{}", bootstrap["props"]);
    assert_eq!(bootstrap["frozen"], true);
    assert_eq!(bootstrap["preview"], true, "the runtime opens no live channel");
    assert!(bootstrap.get("wsToken").is_none(), "no live channel: {bootstrap}");

    // The console page may frame its own origin (the previews) and nothing else.
    let page = reqwest::get(format!("{}/console", app.base)).await.unwrap();
    let page_policy = page.headers()["content-security-policy"].to_str().unwrap().to_owned();
    assert!(page_policy.contains("frame-src 'self'"), "{page_policy}");
    assert!(page.text().await.unwrap().contains(r#"data-sign-in="key""#));
}

#[tokio::test]
async fn a_preview_needs_a_session_a_known_blueprint_of_its_app_and_a_compiled_component() {
    let app = TestApp::spawn("console_preview_refusals", Backend::Sqlite, Auth::Strict)
        .await
        .unwrap();
    let session = open(&app.base, json!({ "key": app.bearer })).await;
    let id = register(&app.base, &session, TITLE_COMPONENT).await;

    let (status, code) = refusal_code(preview(&app.base, None, &id).await).await;
    assert_eq!((status, code), (StatusCode::UNAUTHORIZED, json!("signed_out")));

    let (status, code) = refusal_code(preview(&app.base, Some(&session.cookie), "bp_unknown").await).await;
    assert_eq!((status, code), (StatusCode::NOT_FOUND, json!("blueprint_not_found")));

    let broken = register(&app.base, &session, "export default (").await;
    let listed = tool(&app.base, &session, "svc_ops_list_blueprints", json!({})).await;
    let row = listed["blueprints"]
        .as_array()
        .unwrap()
        .iter()
        .find(|b| b["blueprintId"] == broken.as_str())
        .unwrap()
        .clone();
    assert_eq!(row["mountable"], false, "{row}");
    let (status, code) = refusal_code(preview(&app.base, Some(&session.cookie), &broken).await).await;
    assert_eq!((status, code), (StatusCode::NOT_FOUND, json!("not_mountable")));

    // A session locked to another app sees this blueprint as unknown.
    let other = tool(
        &app.base,
        &session,
        "svc_ops_create_app",
        json!({ "displayName": "Other" }),
    )
    .await;
    let issued = tool(
        &app.base,
        &session,
        "svc_ops_issue_connector_key",
        json!({ "name": "other", "appId": other["appId"] }),
    )
    .await;
    let locked = open(&app.base, json!({ "key": issued["plaintextKey"] })).await;
    let (status, code) = refusal_code(preview(&app.base, Some(&locked.cookie), &id).await).await;
    assert_eq!((status, code), (StatusCode::NOT_FOUND, json!("blueprint_not_found")));
}
