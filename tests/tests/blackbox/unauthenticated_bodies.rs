//! Bodies sent to the routes that take no credential (the account forms, OAuth) count against a
//! budget of their own (`[connections] unauthenticated_body_bytes_in_flight_mib`): strangers
//! holding it with slow bodies are refused there, and `/mcp` still reads its bodies. Each of
//! those routes reads under its own small limit as the body arrives: a chunked body past it is
//! refused there and then, never read on up to the 4 MiB ceiling of the other routes.

use std::time::Duration;

use reqwest::StatusCode;

use serde_json::json;
use svc_tests::raw_http::closed_within;
use svc_tests::{Auth, Backend, TestApp};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;

/// A chunked request to `path` whose first chunk is `bytes` long; the body never ends.
fn chunked_head_and(path: &str, bytes: usize) -> Vec<u8> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Transfer-Encoding: chunked\r\n\r\n{bytes:x}\r\n"
    )
    .into_bytes();
    request.resize(request.len() + bytes, b'a');
    request.extend_from_slice(b"\r\n");
    request
}

/// A server with OAuth on (its forms read bodies) and a 1 MiB budget for strangers' bodies.
async fn spawn(test: &str) -> TestApp {
    TestApp::spawn_configured(test, Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.oauth.enabled = true;
        s.connections.idle_timeout_seconds = 30;
        s.connections.body_read_timeout_seconds = 30;
        s.connections.body_bytes_in_flight_mib = 1;
        s.connections.unauthenticated_body_bytes_in_flight_mib = 1;
    })
    .await
    .expect("sqlite always runs")
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_holding_the_form_budget_leave_mcp_able_to_read_its_bodies() {
    let app = spawn("unauthenticated_bodies").await;
    let address = app.base.trim_start_matches("http://").to_owned();

    // Strangers' slow token requests, each within the route's 64 KiB: 17 of 60 KiB hold 1020
    // KiB of the 1 MiB budget, their rest never sent.
    let mut holders = Vec::new();
    for _ in 0..17 {
        let mut holder = TcpStream::connect(&address).await.unwrap();
        holder
            .write_all(&chunked_head_and("/oauth/token", 60 * 1024))
            .await
            .unwrap();
        holders.push(holder);
    }
    // Held: another stranger's 60 KiB is refused (polled: the server reads the others in its
    // own time).
    let mut refused = String::new();
    for _ in 0..20 {
        let mut another = TcpStream::connect(&address).await.unwrap();
        let _ = another.write_all(&chunked_head_and("/oauth/token", 60 * 1024)).await;
        let Some((_, answer)) = closed_within(&mut another, Duration::from_secs(4)).await else {
            // Read whole before one of the holders was: it holds its share now.
            holders.push(another);
            continue;
        };
        refused = answer;
        if refused.starts_with("HTTP/1.1 503") {
            break;
        }
    }
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("\"SERVER_BUSY\""), "{refused}");

    // An authenticated caller's body of 700 KiB is read: `/mcp` answers.
    let padding = " ".repeat(700 * 1024);
    let ping = format!("{}{padding}", json!({ "jsonrpc": "2.0", "id": 7, "method": "ping" }));
    let (status, _, body) = app.post_raw(Some(&app.bearer), ping).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], 7, "{body}");
    assert_eq!(body["result"], json!({}), "{body}");
    drop(holders);
}

/// A chunked body one byte past the route's limit, whose end never comes, is answered as a
/// declared length over it is, at once: the server did not wait to read it on to the 4 MiB
/// ceiling (before, it did, and answered nothing until the body paused for the idle timeout).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_chunked_body_past_the_routes_limit_is_refused_before_its_end() {
    let app = spawn("unauthenticated_bodies_limit").await;
    let address = app.base.trim_start_matches("http://").to_owned();
    for (path, limit) in [
        ("/oauth/authorize", 64 * 1024),
        ("/oauth/token", 64 * 1024),
        ("/oauth/register", 64 * 1024),
        ("/_svc/pair", 16 * 1024),
        ("/console/session", 16 * 1024),
        ("/account/invite", 16 * 1024),
    ] {
        // How the route answers a declared length over its limit.
        let declared = app
            .client
            .post(format!("{}{path}", app.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(vec![b'a'; limit + 1])
            .send()
            .await
            .unwrap();
        let status = declared.status();
        let answer = declared.text().await.unwrap();
        assert_eq!(status, StatusCode::PAYLOAD_TOO_LARGE, "{path}: {answer}");

        let mut stranger = TcpStream::connect(&address).await.unwrap();
        stranger.write_all(&chunked_head_and(path, limit + 1)).await.unwrap();
        let (_, raw) = closed_within(&mut stranger, Duration::from_secs(20))
            .await
            .unwrap_or_else(|| panic!("{path}: no answer while the body was still arriving"));
        assert!(raw.starts_with("HTTP/1.1 413"), "{path}: {raw}");
        let (_, body) = raw.split_once("\r\n\r\n").expect("a head and a body");
        assert_eq!(body, answer, "{path}");
    }
}

/// The head and body of a raw HTTP/1.1 answer, the body parsed as JSON.
fn json_answer(raw: &str) -> (&str, serde_json::Value) {
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head and a body");
    let body = serde_json::from_str(body).unwrap_or_else(|e| panic!("{e}: {raw}"));
    (head, body)
}

/// The token endpoint and client registration answer a body over their 64 KiB with 413 and an
/// OAuth error (RFC 6749 section 5.2's shape, never cached), whether its length is declared or it
/// is chunked past the limit; a body that cannot be read, within the limit, stays 400.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oauth_token_and_registration_answer_an_oversized_body_413_with_an_oauth_error() {
    let app = spawn("unauthenticated_bodies_oauth").await;
    let address = app.base.trim_start_matches("http://").to_owned();
    let limit = 64 * 1024;
    let too_large = json!({
        "error": "invalid_request",
        "error_description": format!("the request body is larger than {limit} bytes"),
    });
    for (path, unreadable_code) in [
        ("/oauth/token", "invalid_request"),
        ("/oauth/register", "invalid_client_metadata"),
    ] {
        let declared = app
            .client
            .post(format!("{}{path}", app.base))
            .header("content-type", "application/x-www-form-urlencoded")
            .body(vec![b'a'; limit + 1])
            .send()
            .await
            .unwrap();
        assert_eq!(declared.status(), StatusCode::PAYLOAD_TOO_LARGE, "{path}");
        assert_eq!(declared.headers()["cache-control"], "no-store", "{path}");
        let body: serde_json::Value = declared.json().await.unwrap();
        assert_eq!(body, too_large, "{path}");

        let mut stranger = TcpStream::connect(&address).await.unwrap();
        stranger.write_all(&chunked_head_and(path, limit + 1)).await.unwrap();
        let (_, raw) = closed_within(&mut stranger, Duration::from_secs(20))
            .await
            .unwrap_or_else(|| panic!("{path}: no answer while the body was still arriving"));
        assert!(raw.starts_with("HTTP/1.1 413"), "{path}: {raw}");
        let (head, body) = json_answer(&raw);
        assert!(
            head.to_ascii_lowercase().contains("cache-control: no-store"),
            "{path}: {head}"
        );
        assert_eq!(body, too_large, "{path}");

        // A chunk size that is not hexadecimal: the body breaks off unread, within the limit.
        let mut broken = TcpStream::connect(&address).await.unwrap();
        let request = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n\
             Transfer-Encoding: chunked\r\n\r\nzz\r\n"
        );
        broken.write_all(request.as_bytes()).await.unwrap();
        let (_, raw) = closed_within(&mut broken, Duration::from_secs(20))
            .await
            .unwrap_or_else(|| panic!("{path}: no answer to a broken body"));
        assert!(raw.starts_with("HTTP/1.1 400"), "{path}: {raw}");
        let (_, body) = json_answer(&raw);
        assert_eq!(
            body,
            json!({ "error": unreadable_code, "error_description": "the request body could not be read" }),
            "{path}"
        );
    }
    let document: serde_json::Value = reqwest::get(format!("{}/openapi.json", app.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for path in ["/oauth/token", "/oauth/register"] {
        let documented = &document["paths"][path]["post"]["responses"]["413"];
        assert_eq!(
            documented["content"]["application/json; charset=utf-8"]["schema"]["$ref"],
            "#/components/schemas/OAuthError",
            "{path}: {documented}"
        );
    }
}
