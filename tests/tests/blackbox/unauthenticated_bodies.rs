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

/// A request to `path` declaring a body of `declared` bytes, of which only the first `bytes` are
/// sent.
fn declared_head_and(path: &str, declared: usize, bytes: usize) -> Vec<u8> {
    let mut request = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/x-www-form-urlencoded\r\n\
         Content-Length: {declared}\r\n\r\n"
    )
    .into_bytes();
    request.resize(request.len() + bytes, b'a');
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
    // The token endpoint's OAuth error for a body refused for the budget.
    assert!(refused.contains("\"temporarily_unavailable\""), "{refused}");

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

/// The OAuth error, `Cache-Control: no-store` and `Retry-After` of a raw answer.
fn oauth_answer(raw: &str) -> (Option<String>, serde_json::Value) {
    let (head, body) = json_answer(raw);
    let head = head.to_ascii_lowercase();
    assert!(head.contains("cache-control: no-store"), "{head}");
    let retry_after = head
        .lines()
        .find_map(|line| line.strip_prefix("retry-after: "))
        .map(str::to_owned);
    (retry_after, body)
}

/// The token endpoint and client registration answer a body that stops arriving the same way
/// whether its length is declared or it is chunked: 408 and an OAuth error, never cached (before,
/// a chunked one got the body-limit layer's own `{ error: { code: "REQUEST_TIMEOUT" } }`, which
/// an OAuth client cannot read).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oauth_token_and_registration_answer_a_stalled_body_408_in_both_transfer_forms() {
    let app = TestApp::spawn_configured(
        "unauthenticated_bodies_stalled",
        Backend::Sqlite,
        Auth::DevAllowAll,
        |s| {
            s.oauth.enabled = true;
            s.connections.idle_timeout_seconds = 1;
        },
    )
    .await
    .expect("sqlite always runs");
    let address = app.base.trim_start_matches("http://").to_owned();
    for path in ["/oauth/token", "/oauth/register"] {
        let mut declared = TcpStream::connect(&address).await.unwrap();
        declared.write_all(&declared_head_and(path, 100, 10)).await.unwrap();
        let (_, raw) = closed_within(&mut declared, Duration::from_secs(20))
            .await
            .unwrap_or_else(|| panic!("{path}: no answer to a stalled body"));
        assert!(raw.starts_with("HTTP/1.1 408"), "{path}: {raw}");
        let (retry_after, body) = oauth_answer(&raw);
        assert_eq!(retry_after, None, "{path}");
        assert_eq!(
            body,
            json!({ "error": "invalid_request", "error_description": "the request body did not arrive in time" }),
            "{path}"
        );

        let mut chunked = TcpStream::connect(&address).await.unwrap();
        chunked.write_all(&chunked_head_and(path, 10)).await.unwrap();
        let (_, raw) = closed_within(&mut chunked, Duration::from_secs(20))
            .await
            .unwrap_or_else(|| panic!("{path}: no answer to a stalled chunked body"));
        assert!(raw.starts_with("HTTP/1.1 408"), "{path}: {raw}");
        let (retry_after, body) = oauth_answer(&raw);
        assert_eq!(retry_after, None, "{path}");
        assert_eq!(
            body,
            json!({ "error": "invalid_request", "error_description": "the request body did not arrive in time" }),
            "{path}"
        );
    }
}

/// While strangers' slow bodies hold the budget for bodies in flight, the token endpoint and
/// client registration refuse another body 503 with `Retry-After: 1` and the OAuth error
/// `temporarily_unavailable`, never cached, whether its length is declared or it is chunked
/// (before, a declared length was 400, and a chunked one got the body-limit layer's own
/// `{ error: { code: "SERVER_BUSY" } }`).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_oauth_token_and_registration_answer_a_body_over_the_budget_503_in_both_transfer_forms() {
    let app = spawn("unauthenticated_bodies_oauth_budget").await;
    let address = app.base.trim_start_matches("http://").to_owned();
    // 17 slow chunked bodies of 60 KiB hold 1020 KiB of the 1 MiB budget, their rest never sent.
    let mut holders = Vec::new();
    for _ in 0..17 {
        let mut holder = TcpStream::connect(&address).await.unwrap();
        holder
            .write_all(&chunked_head_and("/oauth/token", 60 * 1024))
            .await
            .unwrap();
        holders.push(holder);
    }
    let sent = 60 * 1024;
    for path in ["/oauth/token", "/oauth/register"] {
        for declared in [true, false] {
            // Polled: the server reads the holders in its own time; one read whole first holds
            // its share too.
            let mut refused = String::new();
            for _ in 0..20 {
                let request = if declared {
                    declared_head_and(path, sent + 1, sent)
                } else {
                    chunked_head_and(path, sent)
                };
                let mut another = TcpStream::connect(&address).await.unwrap();
                let _ = another.write_all(&request).await;
                let Some((_, answer)) = closed_within(&mut another, Duration::from_secs(4)).await else {
                    holders.push(another);
                    continue;
                };
                refused = answer;
                if refused.starts_with("HTTP/1.1 503") {
                    break;
                }
            }
            let form = if declared { "declared" } else { "chunked" };
            assert!(refused.starts_with("HTTP/1.1 503"), "{path} {form}: {refused}");
            assert!(
                refused.to_ascii_lowercase().contains("\r\nretry-after: 1\r\n"),
                "{path} {form}: {refused}"
            );
            let (_, body) = oauth_answer(&refused);
            assert_eq!(
                body,
                json!({
                    "error": "temporarily_unavailable",
                    "error_description": "the server is receiving as many request bodies as it holds at once; retry shortly",
                }),
                "{path} {form}"
            );
        }
    }
    let document: serde_json::Value = reqwest::get(format!("{}/openapi.json", app.base))
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    for path in ["/oauth/token", "/oauth/register"] {
        for status in ["408", "503"] {
            let documented = &document["paths"][path]["post"]["responses"][status];
            assert_eq!(
                documented["content"]["application/json; charset=utf-8"]["schema"]["$ref"],
                "#/components/schemas/OAuthError",
                "{path} {status}: {documented}"
            );
        }
    }
    drop(holders);
}
