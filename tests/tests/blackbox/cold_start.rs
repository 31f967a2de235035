//! Cold start with a large blueprint cache (issue 18): the index is built in the background, so
//! `/healthz` answers at once while `/readyz` says 503 "building the blueprint index"; meanwhile
//! the handshake still reuses cached blueprints (the exact key and the semantic lookup read the
//! database), and once the build is done `/readyz` is 200 and search answers from the index.
//!
//! The build is held open deterministically: the restarted server embeds with an
//! OpenAI-compatible loopback fake whose batch requests (the build's) wait for the test to open
//! a gate, while single-text requests (a handshake's query) answer at once.

use std::time::Duration;

use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::{Data, Json};
use poem::{EndpointExt, Route, Server, handler, post};
use sea_orm::{ConnectionTrait, Database, DbBackend, Statement};
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};
use tokio::sync::watch;

/// Blueprints seeded beside the one the first server generated.
const SEEDED: usize = 2_000;
const FAKE_MODEL: &str = "fake-embedding-1";
/// How the server names the fake's vectors (`openai:<model>`).
const FAKE_MODEL_ID: &str = "openai:fake-embedding-1";
const SEMANTIC_INTENT: &str = "quarterly revenue chart";

/// A bag of words hashed into 32 buckets: texts with the same words get the same vector.
fn bag(text: &str) -> Vec<f32> {
    let mut v = vec![0f32; 32];
    for word in text.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()) {
        let h = word
            .to_lowercase()
            .bytes()
            .fold(7u32, |h, b| h.wrapping_mul(31).wrapping_add(u32::from(b)));
        v[(h % 32) as usize] += 1.0;
    }
    v
}

#[handler]
async fn embeddings(Json(body): Json<Value>, Data(gate): Data<&watch::Receiver<bool>>) -> poem::Response {
    let inputs = body["input"].as_array().cloned().unwrap_or_default();
    if inputs.len() > 1 {
        let mut gate = gate.clone();
        let _ = gate.wait_for(|open| *open).await;
    }
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, t)| json!({ "index": i, "embedding": bag(t.as_str().unwrap_or_default()) }))
        .collect();
    poem::Response::builder()
        .content_type("application/json")
        .body(json!({ "data": data }).to_string())
}

/// The fake's base URL and the gate that releases the build's batches.
async fn gated_embeddings() -> (String, watch::Sender<bool>) {
    let (gate, open) = watch::channel(false);
    let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
    let port = acceptor.local_addr()[0].as_socket_addr().unwrap().port();
    let app = Route::new().at("/v1/embeddings", post(embeddings)).data(open);
    tokio::spawn(Server::new_with_acceptor(acceptor).run(app));
    (format!("http://127.0.0.1:{port}/v1"), gate)
}

fn contract() -> Value {
    json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } })
}

async fn handshake(app: &TestApp, intent: &str) -> Value {
    app.tool_ok(
        "svc_handshake",
        json!({ "intent": intent, "blueprintDraft": { "contract": contract() } }),
    )
    .await
}

/// Copies the generated blueprint `SEEDED` times (intents `<intent> <n>`) with vectors of a
/// retired embedder, so the restarted server must embed them all, and once more as
/// [`SEMANTIC_INTENT`] with the fake's own vector, which the semantic lookup can use at once.
async fn seed(app: &TestApp, original: &str) {
    let (url, backend) = if app.is_postgres() {
        (app.settings.server.database_url.clone(), DbBackend::Postgres)
    } else {
        let file = app.data_dir.join("svc.db");
        (format!("sqlite://{}?mode=rwc", file.display()), DbBackend::Sqlite)
    };
    let db = Database::connect(&url)
        .await
        .expect("the test reaches the server's database");
    let columns = "app_id, contract_hash, variant_key, contract, variance, source, code, code_hash, generator, \
                   model, created_at, name, description, category, fixture_props, featured, persona, aesthetic, \
                   is_operator_default, source_kind, updated_at";
    let copies = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {SEEDED}) \
         INSERT INTO blueprints (blueprint_id, intent, embedding, embedding_model, {columns}) \
         SELECT blueprint_id || '-' || i, intent || ' ' || i, embedding, 'retired-model', {columns} \
         FROM blueprints, n WHERE blueprint_id = '{original}'"
    );
    db.execute_unprepared(&copies).await.expect("seed copies");
    let vector: Vec<u8> = bag(SEMANTIC_INTENT).iter().flat_map(|f| f.to_le_bytes()).collect();
    let placeholders = match backend {
        DbBackend::Postgres => ("$1", "$2", "$3"),
        _ => ("?", "?", "?"),
    };
    let semantic = format!(
        "INSERT INTO blueprints (blueprint_id, intent, embedding, embedding_model, {columns}) \
         SELECT {}, {}, {}, '{FAKE_MODEL_ID}', {columns} FROM blueprints WHERE blueprint_id = '{original}'",
        placeholders.0, placeholders.1, placeholders.2
    );
    db.execute_raw(Statement::from_sql_and_values(
        backend,
        semantic,
        [
            "bp-semantic-target".into(),
            SEMANTIC_INTENT.into(),
            sea_orm::Value::Bytes(Some(vector)),
        ],
    ))
    .await
    .expect("seed the semantic target");
    let _ = db.close().await;
}

async fn get(app: &TestApp, path: &str) -> (u16, Value) {
    let response = app.client.get(format!("{}{path}", app.base)).send().await.unwrap();
    let status = response.status().as_u16();
    (status, response.json().await.unwrap_or(Value::Null))
}

async fn cold_start_serves_while_the_index_builds(backend: Backend) {
    let Some(mut app) = TestApp::spawn("cold_start", backend, Auth::DevAllowAll).await else {
        return;
    };
    let first = app.render("seeded card", contract(), json!({ "title": "t" })).await;
    assert_eq!(first["outcome"], "rendered", "{first}");
    let original = first["blueprintId"].as_str().unwrap().to_owned();
    seed(&app, &original).await;

    let (url, gate) = gated_embeddings().await;
    app.restart(|s| {
        s.blueprints.embedder = "openai".into();
        s.blueprints.embedding_url = url.clone();
        s.blueprints.embedding_model = FAKE_MODEL.into();
        s.blueprints.embedding_api_key = "sk-fake".into();
        s.blueprints.semantic_threshold = 0.99;
    })
    .await;

    // Serving, not ready: the build waits at the gate.
    assert_eq!(get(&app, "/healthz").await, (200, json!({ "status": "ok" })));
    assert_eq!(
        get(&app, "/readyz").await,
        (
            503,
            json!({ "status": "unavailable", "reason": "building the blueprint index" })
        )
    );

    // The exact key reads the database: a seeded copy is reused.
    let exact = handshake(&app, "seeded card 42").await;
    assert_eq!(exact["action"], "reuse", "{exact}");
    let expected = format!("{original}-42");
    assert_eq!(
        exact["suggestion"]["blueprintMeta"]["blueprintId"],
        expected.as_str(),
        "{exact}"
    );
    assert_eq!(exact["suggestion"]["cache"]["kind"], "exact", "{exact}");

    // The semantic lookup reads the stored vectors of the contract's blueprints.
    let semantic = handshake(&app, "revenue chart quarterly").await;
    assert_eq!(semantic["action"], "reuse", "{semantic}");
    assert_eq!(
        semantic["suggestion"]["blueprintMeta"]["blueprintId"], "bp-semantic-target",
        "{semantic}"
    );
    assert_eq!(semantic["suggestion"]["cache"]["kind"], "semantic", "{semantic}");
    assert_eq!(get(&app, "/readyz").await.0, 503, "still building");

    // Open the gate: the build finishes and the server reports ready.
    gate.send_replace(true);
    let mut ready = (0, Value::Null);
    for _ in 0..600 {
        ready = get(&app, "/readyz").await;
        if ready.0 == 200 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert_eq!(ready, (200, json!({ "status": "ready" })));

    // Search answers from the built index, seeded blueprints included.
    let found = app
        .tool_ok("svc_search_blueprints", json!({ "query": "seeded card 7", "limit": 3 }))
        .await;
    assert!(
        found["total"].as_u64().unwrap_or(0) >= 3,
        "the index holds the seeded blueprints: {found}"
    );
}

svc_tests::on_both_backends!(cold_start_serves_while_the_index_builds);
