//! Two replicas on one PostgreSQL database behind a real nginx with TLS, configured by the file
//! we ship (`deploy/nginx/svc.conf`, its marked lines rewritten for loopback ports and a
//! certificate made here): a render goes through the proxy, the card's socket subscribes
//! through it (`wss://`, landing on one replica), a user action sent on it is consumed on the
//! other replica, and an emit through the proxy reaches the socket.
//!
//! Needs Debian's nginx (`apt-get install nginx-light`) and `openssl`; without them the test
//! prints `skipped: ...` and passes, unless `SVC_REQUIRE_PROXY=1` (CI). Needs
//! `SVC_TEST_DATABASE_URL` (replicas share PostgreSQL).

use crate::proxy_support;

use std::path::Path;
use std::time::Duration;

use futures_util::{SinkExt, StreamExt};
use proxy_support::{ProxyPlan, shipped_config};
use serde_json::{Value, json};
use svc_tests::process::ServerProcess;
use svc_tests::{Backend, ScratchDatabase, temp_dir};
use tokio_tungstenite::tungstenite::Message;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const SHARED_SECRET: &str = "behind-nginx-test-secret-shared-by-both-replicas-0123456789";

/// A replica listening on `port` (its `base` is the public URL it was given, the proxy's).
fn replica(data_dir: &Path, port: u16, database_url: &str, public_base: &str) -> ServerProcess {
    std::fs::create_dir_all(data_dir).unwrap();
    let config = data_dir.join("svc.toml");
    std::fs::write(&config, format!("[server]\nws_secret = \"{SHARED_SECRET}\"\n")).unwrap();
    ServerProcess::start_on_port(
        BINARY,
        data_dir,
        port,
        &[
            "--config",
            config.to_str().unwrap(),
            "--database-url",
            database_url,
            "--dev-allow-all",
            "--public-base-url",
            public_base,
        ],
    )
}

/// `svc_live_sockets` of one replica, scraped on its own loopback port.
async fn live_sockets(client: &reqwest::Client, replica: &str) -> f64 {
    let text = client
        .get(format!("{replica}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    text.lines()
        .find_map(|line| line.strip_prefix("svc_live_sockets "))
        .and_then(|value| value.trim().parse().ok())
        .expect("svc_live_sockets in the scrape")
}

async fn tool(client: &reqwest::Client, base: &str, name: &str, arguments: Value) -> Value {
    let body: Value = client
        .post(format!("{base}/mcp"))
        .bearer_auth("proxy-test")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } }))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{name} via {base}: {e}"))
        .json()
        .await
        .unwrap();
    assert!(
        body["result"]["isError"] != true && body.get("error").is_none(),
        "{name}: {body}"
    );
    body["result"].clone()
}

type TlsSocket = tokio_tungstenite::WebSocketStream<tokio_rustls::client::TlsStream<tokio::net::TcpStream>>;

async fn send(socket: &mut TlsSocket, frame: Value) {
    socket.send(Message::Text(frame.to_string().into())).await.unwrap();
}

/// The next JSON frame within 10 s.
async fn next(socket: &mut TlsSocket) -> Value {
    loop {
        let message = tokio::time::timeout(Duration::from_secs(10), socket.next())
            .await
            .expect("a frame within 10 s")
            .expect("the socket stays open")
            .expect("a frame");
        if let Message::Text(text) = message {
            return serde_json::from_str(&text).unwrap();
        }
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_replicas_behind_the_shipped_nginx_config_share_a_card() {
    let test = "two_replicas_behind_the_shipped_nginx_config_share_a_card";
    if !proxy_support::available(test) {
        return;
    }
    let dir = temp_dir("svc-nginx");
    let Some(database) = ScratchDatabase::create(test, Backend::Postgres, &dir).await else {
        return;
    };
    let plan = ProxyPlan::new(&dir);
    let (port, public, replica_ports) = (plan.port, plan.public.clone(), plan.replica_ports);
    let first = replica(&dir.join("a"), replica_ports[0], &database.url, &public);
    let second = replica(&dir.join("b"), replica_ports[1], &database.url, &public);
    let own = |replica: usize| plan.replica_base(replica);
    let _nginx = plan.start().await;
    let proxied = plan.client();
    let direct = reqwest::Client::new();

    // A render through the proxy; its slice points the card back at the proxy.
    let contract = json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
        "actionSpec": { "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } } } } },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } }
    });
    let hs = tool(
        &proxied,
        &public,
        "svc_handshake",
        json!({ "intent": "behind nginx", "blueprintDraft": { "contract": contract } }),
    )
    .await;
    let rendered = tool(
        &proxied,
        &public,
        "svc_render",
        json!({ "handshakeId": hs["structuredContent"]["handshakeId"], "props": { "title": "through the proxy" } }),
    )
    .await;
    let slice = &rendered["_meta"]["ai.svc/render"];
    let session = slice["sessionId"].as_str().unwrap().to_owned();
    assert_eq!(slice["wsUrl"], format!("wss://127.0.0.1:{port}/ws"), "{slice}");
    assert_eq!(slice["pollingUrl"], format!("{public}/_svc/poll/{session}"), "{slice}");

    // The card's socket, over TLS through the proxy.
    let stream = plan.tls_stream().await;
    let (mut socket, _) = tokio_tungstenite::client_async(slice["wsUrl"].as_str().unwrap(), stream)
        .await
        .expect("the WebSocket upgrade passes nginx");
    send(
        &mut socket,
        json!({ "type": "subscribe", "payload": { "sessionId": session, "wsToken": slice["wsToken"] } }),
    )
    .await;
    let mut frames = Vec::new();
    let ack = next(&mut socket).await;
    assert_eq!(ack["type"], "ack", "{ack}");
    frames.push(ack);

    // Which replica holds the socket: the other one must see what the card sends.
    let other = match (
        live_sockets(&direct, &own(0)).await,
        live_sockets(&direct, &own(1)).await,
    ) {
        (a, b) if a >= 1.0 && b == 0.0 => own(1),
        (a, b) if b >= 1.0 && a == 0.0 => own(0),
        counts => panic!("the socket should be on exactly one replica: {counts:?}"),
    };

    let action = json!({ "sessionId": session, "type": "data:submit", "payload": { "action": "approve", "data": { "note": "from behind nginx" } }, "clientSeq": 1 });
    send(&mut socket, json!({ "type": "action", "payload": action })).await;
    let consumed = tool(
        &direct,
        &other,
        "svc_consume",
        json!({ "sessionId": session, "timeout": 10 }),
    )
    .await;
    let events = consumed["structuredContent"]["events"].as_array().unwrap().clone();
    assert_eq!(events.len(), 1, "{consumed}");
    assert_eq!(events[0]["intent"], "approve");
    assert_eq!(events[0]["actionData"], json!({ "note": "from behind nginx" }));

    // An emit through the proxy (either replica) reaches the socket.
    tool(
        &proxied,
        &public,
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": "via nginx" }),
    )
    .await;
    loop {
        let frame = next(&mut socket).await;
        if frame["type"] == "data" && frame["payload"]["channel"] == "log" {
            assert_eq!(frame["payload"]["payload"], "via nginx", "{frame}");
            break;
        }
        frames.push(frame);
        assert!(frames.len() < 20, "no data frame: {frames:?}");
    }
    // The polling fallback through the proxy; its token (in the query) never reaches nginx's log.
    let polled = proxied
        .get(format!(
            "{}?token={}&wait=0",
            slice["pollingUrl"].as_str().unwrap(),
            slice["wsToken"].as_str().unwrap()
        ))
        .send()
        .await
        .unwrap();
    assert_eq!(polled.status(), 200);
    // The metrics stay off the edge.
    assert_eq!(
        proxied.get(format!("{public}/metrics")).send().await.unwrap().status(),
        404
    );
    drop(_nginx);
    let access_log = std::fs::read_to_string(dir.join("svc-access.log")).expect("nginx wrote its access log");
    assert!(access_log.contains("/_svc/poll/"), "{access_log}");
    let token = slice["wsToken"].as_str().unwrap();
    assert!(
        !access_log.contains(token) && !access_log.contains("token="),
        "{access_log}"
    );
    drop((first, second));
    let _ = std::fs::remove_dir_all(&dir);
}

/// deploy/nginx/compose.conf is deploy/nginx/svc.conf with the compose services as upstreams:
/// the two never drift apart in anything else.
#[test]
fn the_compose_nginx_file_is_the_shipped_one_but_for_its_upstreams() {
    let compose = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../deploy/nginx/compose.conf"))
        .expect("deploy/nginx/compose.conf");
    let directives = |text: &str| -> Vec<String> {
        text.lines()
            .map(str::trim)
            .filter(|line| {
                !line.is_empty()
                    && !line.starts_with('#')
                    && !line.starts_with("server svc-")
                    && !line.starts_with("server 127.0.0.1:")
            })
            .map(str::to_owned)
            .collect()
    };
    assert_eq!(directives(&compose), directives(&shipped_config()));
    assert!(compose.contains("server svc-a:6781;") && compose.contains("server svc-b:6781;"));
}
