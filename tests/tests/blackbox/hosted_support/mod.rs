//! Helpers of the hosted-mode black-box tests (`hosted_*.rs`). Hosted mode needs PostgreSQL:
//! without `SVC_TEST_DATABASE_URL` each test prints `skipped: <name>` and passes, unless
//! `SVC_REQUIRE_POSTGRES=1`, where it fails.

#![allow(dead_code)]

pub mod accounts;
pub mod sign_in;

use base64::Engine;
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

pub const REQUIRE_VAR: &str = "SVC_REQUIRE_POSTGRES";

/// `id:base64` of a 32-byte master key made of `byte`.
pub fn master_key(id: &str, byte: u8) -> String {
    format!("{id}:{}", base64::engine::general_purpose::STANDARD.encode([byte; 32]))
}

/// `<dir>/hosted.toml` for a hosted server whose `openai` route is a fake provider that never
/// answers (a render held mid-generation); `hosted_lines` go under `[hosted]` beside `enabled`
/// and a master key. The provider lives as long as the returned handle.
pub async fn stalling_provider_config(
    dir: &std::path::Path,
    hosted_lines: &str,
) -> (svc_generation::llm::fake_provider::FakeProvider, std::path::PathBuf) {
    use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::Stall);
    let config = dir.join("hosted.toml");
    std::fs::write(
        &config,
        format!(
            "[hosted]\nenabled = true\n{hosted_lines}master_keys = [\"{}\"]\n\n\
             [generation.providers.openai]\nwire = \"openai\"\nbase_url = \"{}/v1\"\napi_key = \"sk-platform\"\n",
            master_key("k1", 5),
            fake.base_url
        ),
    )
    .unwrap();
    (fake, config)
}

/// Fails under `SVC_REQUIRE_POSTGRES=1` when PostgreSQL is not configured.
pub fn postgres_available(test: &str) -> bool {
    if std::env::var(svc_tests::POSTGRES_URL_VAR).is_ok() {
        return true;
    }
    if std::env::var(REQUIRE_VAR).is_ok_and(|v| v == "1") {
        panic!("{test}: hosted mode needs PostgreSQL and {REQUIRE_VAR}=1, but SVC_TEST_DATABASE_URL is unset");
    }
    eprintln!("skipped: {test} (hosted mode needs PostgreSQL; SVC_TEST_DATABASE_URL unset)");
    false
}

/// A hosted server on a fresh PostgreSQL database: `--dev-allow-all` (every bearer acts for
/// `builder`), master key `k1`, and `configure` on top.
pub async fn hosted_app(test: &str, configure: impl FnOnce(&mut svc::Settings)) -> Option<TestApp> {
    if !postgres_available(test) {
        return None;
    }
    TestApp::spawn_configured(test, Backend::Postgres, Auth::DevAllowAll, |s| {
        s.hosted.enabled = true;
        s.hosted.master_keys = svc::settings::SecretList::Many(vec![master_key("k1", 1)]);
        configure(s);
    })
    .await
}

/// A contract with one required string prop.
pub fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object" } } }
    })
}

/// A fresh handshake of `intent` on `/mcp`; its id.
pub async fn handshake(app: &TestApp, intent: &str) -> String {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": intent, "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    hs["handshakeId"].as_str().unwrap().to_owned()
}

/// `svc_render` of a handshake (with extra arguments merged in); the whole JSON-RPC body.
pub async fn render(app: &TestApp, handshake_id: &str, extra: Value) -> Value {
    let mut arguments = json!({ "handshakeId": handshake_id, "props": { "title": "Order 42" } });
    if let (Some(args), Some(more)) = (arguments.as_object_mut(), extra.as_object()) {
        args.extend(more.clone());
    }
    app.call("svc_render", arguments).await
}

/// The first column of the first row of `sql` on the deployment's database, as text.
pub async fn scalar_text(database_url: &str, sql: &str) -> String {
    use sea_orm::{ConnectionTrait, Database, Statement};
    let db = Database::connect(database_url).await.expect("connect");
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), sql.to_owned()))
        .await
        .expect("query")
        .expect("a row");
    let value: String = row.try_get_by_index(0).expect("text");
    let _ = db.close().await;
    value
}

/// Runs `sql` (no result read) on the deployment's database.
pub async fn execute(database_url: &str, sql: &str) {
    use sea_orm::{ConnectionTrait, Database};
    let db = Database::connect(database_url).await.expect("connect");
    db.execute_unprepared(sql).await.expect("statement");
    let _ = db.close().await;
}
