//! Running it for real: the wsToken secret survives a restart and rotates, replicas started
//! together on an empty PostgreSQL database all come up (migrations under an advisory lock), and
//! `svc migrate` prepares a database before any replica starts.

use serde_json::{Value, json};
use svc::{Application, Settings};
use svc_tests::live::LiveClient;
use svc_tests::{Auth, Backend, ScratchDatabase, TestApp, on_both_backends, temp_dir};

on_both_backends!(
    a_restart_keeps_live_cards_tokens_valid,
    a_rotated_out_secret_verifies_until_it_is_dropped,
);

const OLD_SECRET: &str = "old-3f0c9a7d51be4e2a8c6d0b9f17e5a2c4d8b6";
const NEW_SECRET: &str = "new-8e1d2c3b4a5968778695a4b3c2d1e0f9a7b5";

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": {} }
    })
}

/// Renders a card; returns its `_meta['ai.svc/render']` slice.
async fn card(base: &str, client: &reqwest::Client) -> Value {
    let call = |name: &str, arguments: Value| {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
                           "params": { "name": name, "arguments": arguments } });
        client
            .post(format!("{base}/mcp"))
            .bearer_auth("dev-bearer")
            .header("accept", "application/json, text/event-stream")
            .json(&body)
            .send()
    };
    let hs: Value = call(
        "svc_handshake",
        json!({ "intent": "restart card", "blueprintDraft": { "contract": contract() } }),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let handshake_id = hs["result"]["structuredContent"]["handshakeId"].clone();
    let render: Value = call(
        "svc_render",
        json!({ "handshakeId": handshake_id, "props": { "title": "t" } }),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let slice = render["result"]["_meta"]["ai.svc/render"].clone();
    assert!(slice["wsToken"].is_string(), "{render}");
    slice
}

/// Subscribes with `credential` (`wsToken` or `sessionToken`); the ack's or error's payload and type.
async fn subscribe(base: &str, session: &Value, credential: (&str, &Value)) -> (String, Value) {
    let mut ws = LiveClient::connect(base).await;
    let mut payload = json!({ "sessionId": session });
    payload[credential.0] = credential.1.clone();
    ws.send("subscribe", payload).await;
    let frame = ws.recv().await;
    (
        frame["type"].as_str().unwrap_or_default().to_owned(),
        frame["payload"].clone(),
    )
}

async fn a_restart_keeps_live_cards_tokens_valid(backend: Backend) {
    let no_secret = |s: &mut Settings| s.server.ws_secret = "".into();
    let Some(mut app) = TestApp::spawn_configured("restart_tokens", backend, Auth::DevAllowAll, no_secret).await else {
        return;
    };
    let slice = card(&app.base, &app.client).await;
    let session = slice["sessionId"].clone();
    let (kind, ack) = subscribe(&app.base, &session, ("wsToken", &slice["wsToken"])).await;
    assert_eq!(kind, "ack", "{ack}");
    let session_token = ack["sessionToken"].clone();

    app.restart(|_| {}).await;
    let (kind, answer) = subscribe(&app.base, &session, ("sessionToken", &session_token)).await;
    assert_eq!(kind, "ack", "the session token survives a restart: {answer}");
    let (kind, answer) = subscribe(&app.base, &session, ("wsToken", &slice["wsToken"])).await;
    assert_eq!(kind, "ack", "so does the wsToken: {answer}");

    if backend == Backend::Sqlite {
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let kept = std::fs::metadata(app.data_dir.join("ws_secret")).expect("the kept secret");
            assert_eq!(
                kept.permissions().mode() & 0o777,
                0o600,
                "only the server's user reads it"
            );
        }
    } else {
        // Kept in the database: a replica with a data directory of its own shares it.
        let replica = app.replica().await;
        let (kind, answer) = subscribe(&replica.base, &session, ("sessionToken", &session_token)).await;
        assert_eq!(kind, "ack", "{answer}");
    }
}

async fn a_rotated_out_secret_verifies_until_it_is_dropped(backend: Backend) {
    let old = |s: &mut Settings| s.server.ws_secret = OLD_SECRET.into();
    let Some(mut app) = TestApp::spawn_configured("rotation", backend, Auth::DevAllowAll, old).await else {
        return;
    };
    let before = card(&app.base, &app.client).await;

    app.restart(|s| {
        s.server.ws_secret = svc::settings::SecretList::Many(vec![NEW_SECRET.into(), OLD_SECRET.into()]);
    })
    .await;
    let (kind, answer) = subscribe(&app.base, &before["sessionId"], ("wsToken", &before["wsToken"])).await;
    assert_eq!(kind, "ack", "a token of the old secret still verifies: {answer}");
    let after = card(&app.base, &app.client).await;

    app.restart(|s| s.server.ws_secret = NEW_SECRET.into()).await;
    let (kind, answer) = subscribe(&app.base, &before["sessionId"], ("wsToken", &before["wsToken"])).await;
    assert_eq!(
        (kind.as_str(), &answer["code"]),
        ("error", &json!("AUTH_FAILED")),
        "{answer}"
    );
    let (kind, answer) = subscribe(&app.base, &after["sessionId"], ("wsToken", &after["wsToken"])).await;
    assert_eq!(
        kind, "ack",
        "the new secret signed while both were configured: {answer}"
    );
}

/// Three replicas started at the same moment on an empty PostgreSQL database: each migrates
/// under the advisory lock, they share one generated secret, and all serve.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_started_at_once_on_an_empty_database_all_come_up() {
    three_replicas_started_at_once(Backend::Postgres, "three_replicas").await;
}

/// The same on MariaDB: the migration lock there is `GET_LOCK`, the secret is kept in the
/// database too.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn three_replicas_started_at_once_on_an_empty_mariadb_database_all_come_up() {
    three_replicas_started_at_once(Backend::Mariadb, "three_replicas_mariadb").await;
}

async fn three_replicas_started_at_once(backend: Backend, test: &str) {
    let dir = temp_dir("svc-replicas-db");
    let Some(database) = ScratchDatabase::create(test, backend, &dir).await else {
        return;
    };
    let mut starts = Vec::new();
    for _ in 0..3 {
        let mut settings = Settings::load(None).expect("default settings");
        settings.server.port = 0;
        settings.server.data_dir = temp_dir("svc-replica-start");
        settings.server.database_url = database.url.clone();
        settings.server.dev_allow_all = true;
        starts.push(tokio::spawn(async move { Application::build(&settings).await }));
    }
    let mut bases = Vec::new();
    let mut stops = Vec::new();
    for start in starts {
        let app = start
            .await
            .unwrap()
            .unwrap_or_else(|e| panic!("a replica failed to start: {e}"));
        bases.push(app.base_url.clone());
        let (tx, rx) = tokio::sync::oneshot::channel::<()>();
        tokio::spawn(app.run_until(async move {
            let _ = rx.await;
        }));
        stops.push(tx);
    }
    let client = reqwest::Client::new();
    let slice = card(&bases[0], &client).await;
    for base in &bases {
        let (kind, answer) = subscribe(base, &slice["sessionId"], ("wsToken", &slice["wsToken"])).await;
        assert_eq!(kind, "ack", "every replica verifies the others' tokens: {answer}");
    }
    for stop in stops {
        let _ = stop.send(());
    }
}

/// `svc migrate` as a deploy step on PostgreSQL: it applies every migration and exits, and the
/// replicas started afterwards find nothing left to apply.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn svc_migrate_prepares_an_empty_postgresql_database() {
    svc_migrate_prepares_an_empty_database(Backend::Postgres, "svc_migrate").await;
}

/// The same on MariaDB, named by a `mariadb://` URL.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn svc_migrate_prepares_an_empty_mariadb_database() {
    svc_migrate_prepares_an_empty_database(Backend::Mariadb, "svc_migrate_mariadb").await;
}

async fn svc_migrate_prepares_an_empty_database(backend: Backend, test: &str) {
    let dir = temp_dir("svc-migrate-db");
    let Some(database) = ScratchDatabase::create(test, backend, &dir).await else {
        return;
    };
    let url = database.url.replacen("mysql://", "mariadb://", 1);
    let migrate = || {
        std::process::Command::new(env!("CARGO_BIN_EXE_svc-under-test"))
            .args(["migrate", "--database-url", &url])
            .output()
            .unwrap()
    };
    let first = migrate();
    assert!(first.status.success(), "{first:?}");
    let stdout = String::from_utf8(first.stdout).unwrap();
    assert!(
        stdout.starts_with("applied ") && !stdout.starts_with("applied 0 "),
        "{stdout}"
    );
    let again = String::from_utf8(migrate().stdout).unwrap();
    assert_eq!(again.trim(), "applied 0 migration(s); the database is up to date");

    let mut settings = Settings::load(None).expect("default settings");
    settings.server.port = 0;
    settings.server.data_dir = temp_dir("svc-after-migrate");
    settings.server.database_url = url.clone();
    let app = Application::build(&settings)
        .await
        .expect("a replica starts on the migrated database");
    drop(app);
}
