//! A server configured with `[blueprints] embedder = "openai"` against a loopback fake of an
//! OpenAI-compatible `/embeddings` endpoint: vectors come from it, search and the semantic cache
//! use them, and an outage of the endpoint degrades to exact matches instead of failing renders.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::{Data, Json};
use poem::{EndpointExt, Request, Route, Server, handler, post};
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

#[derive(Default)]
struct Fake {
    requests: Mutex<Vec<(Option<String>, Value)>>,
    down: AtomicBool,
}

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
fn embeddings(req: &Request, Json(body): Json<Value>, Data(fake): Data<&Arc<Fake>>) -> poem::Response {
    let auth = req.header("authorization").map(str::to_owned);
    fake.requests.lock().unwrap().push((auth, body.clone()));
    if fake.down.load(Ordering::SeqCst) {
        return poem::Response::builder()
            .status(poem::http::StatusCode::SERVICE_UNAVAILABLE)
            .body("down");
    }
    let data: Vec<Value> = body["input"]
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, t)| json!({ "index": i, "embedding": bag(t.as_str().unwrap()) }))
        .collect();
    poem::Response::builder()
        .content_type("application/json")
        .body(json!({ "data": data }).to_string())
}

async fn fake_endpoint() -> (String, Arc<Fake>) {
    let fake = Arc::new(Fake::default());
    let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
    let port = acceptor.local_addr()[0].as_socket_addr().unwrap().port();
    let app = Route::new().at("/v1/embeddings", post(embeddings)).data(fake.clone());
    tokio::spawn(Server::new_with_acceptor(acceptor).run(app));
    (format!("http://127.0.0.1:{port}/v1"), fake)
}

fn contract() -> Value {
    json!({ "propsSpec": { "type": "object", "properties": { "amount": { "type": "number" } } } })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_configured_embedding_endpoint_serves_search_and_the_semantic_cache() {
    let (url, fake) = fake_endpoint().await;
    let app = TestApp::spawn_configured("openai_embedder", Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.blueprints.embedder = "openai".into();
        s.blueprints.embedding_url = url.clone();
        s.blueprints.embedding_model = "fake-embedding-1".into();
        s.blueprints.embedding_api_key = "sk-fake".into();
        s.blueprints.semantic_threshold = 0.99;
        s.blueprints.search_floor = 0.5;
    })
    .await
    .unwrap();
    let rendered = app.render("customer invoice", contract(), json!({ "amount": 3 })).await;
    let id = rendered["blueprintId"].as_str().unwrap();
    {
        let requests = fake.requests.lock().unwrap();
        let (auth, body) = requests.last().expect("the blueprint was embedded by the endpoint");
        assert_eq!(auth.as_deref(), Some("Bearer sk-fake"));
        assert_eq!(body["model"], "fake-embedding-1");
        assert_eq!(body["input"], json!(["customer invoice"]));
    }
    let found = app
        .tool_ok("svc_search_blueprints", json!({ "query": "invoice, customer" }))
        .await;
    assert_eq!(found["results"][0]["id"], id);
    assert!(
        (found["results"][0]["score"].as_f64().unwrap() - 1.0).abs() < 1e-6,
        "{found}"
    );
    // Same words, another order: identical bag-of-words vectors, a semantic hit at 0.99.
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "invoice customer", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    assert_eq!(hs["suggestion"]["cache"]["kind"], "semantic", "{hs}");
    assert_eq!(hs["suggestion"]["blueprintMeta"]["blueprintId"], id);

    // Outage: renders still work, search falls back to manifest text matches (none here), and
    // the handshake generates instead of failing.
    fake.down.store(true, Ordering::SeqCst);
    let other = app.render("shipping label", contract(), json!({})).await;
    assert_eq!(other["outcome"], "rendered");
    let found = app
        .tool_ok("svc_search_blueprints", json!({ "query": "shipping label" }))
        .await;
    assert_eq!(found["total"], 0);
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "label for shipping", "blueprintDraft": { "contract": contract() } }),
        )
        .await;
    assert_eq!(hs["suggestion"]["origin"], "agent");
}
