//! Bodies sent to the routes that take no credential (the account forms, OAuth) count against a
//! budget of their own (`[connections] unauthenticated_body_bytes_in_flight_mib`): strangers
//! holding it with slow bodies are refused there, and `/mcp` still reads its bodies.

use std::time::Duration;

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

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn strangers_holding_the_form_budget_leave_mcp_able_to_read_its_bodies() {
    let app = TestApp::spawn_configured("unauthenticated_bodies", Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.connections.idle_timeout_seconds = 30;
        s.connections.body_read_timeout_seconds = 30;
        s.connections.body_bytes_in_flight_mib = 1;
        s.connections.unauthenticated_body_bytes_in_flight_mib = 1;
    })
    .await
    .expect("sqlite always runs");
    let address = app.base.trim_start_matches("http://").to_owned();

    // A stranger's slow form: 700 KiB of a 1 MiB budget, the rest never sent.
    let mut holder = TcpStream::connect(&address).await.unwrap();
    holder
        .write_all(&chunked_head_and("/account/forgot", 700 * 1024))
        .await
        .unwrap();
    // Held: another stranger's 700 KiB is refused (polled: the server reads the first in its
    // own time).
    let mut refused = String::new();
    for _ in 0..20 {
        let mut second = TcpStream::connect(&address).await.unwrap();
        let _ = second.write_all(&chunked_head_and("/oauth/register", 700 * 1024)).await;
        let (_, answer) = closed_within(&mut second, Duration::from_secs(8))
            .await
            .expect("the refused body's connection closes");
        refused = answer;
        if refused.starts_with("HTTP/1.1 503") {
            break;
        }
    }
    assert!(refused.starts_with("HTTP/1.1 503"), "{refused}");
    assert!(refused.contains("\"SERVER_BUSY\""), "{refused}");

    // An authenticated caller's body of the same size is read: `/mcp` answers.
    let padding = " ".repeat(700 * 1024);
    let ping = format!("{}{padding}", json!({ "jsonrpc": "2.0", "id": 7, "method": "ping" }));
    let (status, _, body) = app.post_raw(Some(&app.bearer), ping).await;
    assert_eq!(status, 200, "{body}");
    assert_eq!(body["id"], 7, "{body}");
    assert_eq!(body["result"], json!({}), "{body}");
    drop(holder);
}
