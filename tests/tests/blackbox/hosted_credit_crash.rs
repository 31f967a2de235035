//! A hosted render's charge survives a crash: a server killed with SIGKILL while a paid
//! generation hangs at its provider leaves the charge reserved in the database, and the server
//! restarted on that database refunds it (once) when the render deadline has passed twice, as
//! the caller's ledger on `/ops` shows. Hosted mode runs on PostgreSQL only (SQLite and MariaDB
//! are refused at start-up), so this runs there.

use std::time::{Duration, Instant};

use serde_json::{Value, json};
use svc_tests::process::ServerProcess;
use svc_tests::{Backend, ScratchDatabase, temp_dir};

use crate::hosted_support;
use crate::ops_support::{BINARY, Client, scalar};

/// The render deadline the servers run with: long enough that the first server is killed
/// before its render would end itself, short enough that the sweep takes the charge soon.
const DEADLINE_SECONDS: u64 = 6;
const PRICE_CENTS: i64 = 7;
const FREE_CENTS: i64 = 100;

fn start(config: &std::path::Path, data_dir: &std::path::Path, database_url: &str) -> ServerProcess {
    ServerProcess::start(
        BINARY,
        data_dir,
        &[
            "--config",
            config.to_str().unwrap(),
            "--database-url",
            database_url,
            "--dev-allow-all",
        ],
    )
}

fn ops(server: &ServerProcess) -> Client {
    Client {
        base: server.base.clone(),
        client: reqwest::Client::new(),
        bearer: Some("dev-bearer".into()),
    }
}

/// The caller's ledger as `/ops` lists it, newest first: (kind, delta, reason, session).
async fn ledger(ops: &Client) -> Vec<(String, i64, String, Value)> {
    let page = ops.ok("svc_ops_list_credit_transactions", json!({})).await;
    page["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["kind"].as_str().unwrap().to_owned(),
                t["deltaCents"].as_i64().unwrap(),
                t["reason"].as_str().unwrap().to_owned(),
                t["relatedSessionId"].clone(),
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_render_charge_reserved_when_the_server_is_killed_is_refunded_after_a_restart() {
    let test = "credit_crash_refund";
    if !hosted_support::postgres_available(test) {
        return;
    }
    let dir = temp_dir("svc-credit-crash");
    let Some(database) = ScratchDatabase::create(test, Backend::Postgres, &dir).await else {
        return;
    };
    let hosted = format!(
        "free_credit_cents = {FREE_CENTS}\nrender_price_cents = {PRICE_CENTS}\nrender_deadline_seconds = {DEADLINE_SECONDS}\n"
    );
    let (fake, config) = hosted_support::stalling_provider_config(&dir, &hosted).await;
    let data_dir = dir.join("data");

    let server = start(&config, &data_dir, &database.url);
    let first = ops(&server);
    first
        .ok(
            "svc_ops_set_provider_key",
            json!({ "provider": "openai", "plaintextKey": "sk-caller-key-0001" }),
        )
        .await;
    let (_, body) = first
        .mcp(
            "tools/call",
            json!({ "name": "svc_handshake", "arguments": { "intent": "never answered", "blueprintDraft": { "contract": hosted_support::contract() } } }),
        )
        .await;
    let handshake_id = body["result"]["structuredContent"]["handshakeId"].clone();
    // The render hangs at the provider; its request dies with the server.
    let render = {
        let (client, base) = (first.client.clone(), server.base.clone());
        tokio::spawn(async move {
            client
                .post(format!("{base}/mcp"))
                .bearer_auth("dev-bearer")
                .json(&json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
                    "name": "svc_render",
                    "arguments": { "handshakeId": handshake_id, "props": { "title": "x" }, "infra": { "model": "openai:gpt-4.1-mini" } } } }))
                .send()
                .await
        })
    };
    let started = Instant::now();
    while fake.requests().is_empty() {
        assert!(
            started.elapsed() < Duration::from_secs(20),
            "the generation never reached the provider"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    // The charge was taken before the generation started: kill the server mid-render.
    server.kill();
    let _ = render.await;
    let open = "SELECT count(*) FROM credit_reservations";
    assert_eq!(
        scalar(&database.url, open).await,
        1,
        "the charge's reservation outlived the process"
    );

    let restarted = start(&config, &data_dir, &database.url);
    let after = ops(&restarted);
    // Twice the deadline after the charge, then at most one sweep interval (half the deadline).
    let patience = Duration::from_secs(3 * DEADLINE_SECONDS + 30);
    let refunded = loop {
        let rows = ledger(&after).await;
        if rows.iter().any(|(kind, ..)| kind == "refund") {
            break rows;
        }
        assert!(
            started.elapsed() < patience,
            "no refund within {patience:?} of the charge: {rows:?}"
        );
        tokio::time::sleep(Duration::from_millis(250)).await;
    };
    let session = refunded[1].3.clone();
    assert!(
        session.is_string(),
        "the charge names its render's session: {refunded:?}"
    );
    assert_eq!(
        refunded,
        [
            (
                "refund".to_owned(),
                PRICE_CENTS,
                "refund: the render was interrupted".to_owned(),
                session.clone()
            ),
            (
                "render_charge".to_owned(),
                -PRICE_CENTS,
                "render: openai:gpt-4.1-mini".to_owned(),
                session
            ),
            (
                "free_credit".to_owned(),
                FREE_CENTS,
                "free credit on first use".to_owned(),
                Value::Null
            ),
        ]
    );
    let wallet = after.ok("svc_ops_get_credit_balance", json!({})).await;
    assert_eq!(
        (&wallet["balanceCents"], &wallet["lifetimeSpentCents"]),
        (&json!(FREE_CENTS), &json!(0)),
        "{wallet}"
    );
    assert_eq!(scalar(&database.url, open).await, 0, "the reservation is gone");

    // Another sweep (half the deadline later) refunds nothing again.
    tokio::time::sleep(Duration::from_secs(DEADLINE_SECONDS / 2 + 1)).await;
    let refunds = ledger(&after)
        .await
        .into_iter()
        .filter(|(kind, ..)| kind == "refund")
        .count();
    assert_eq!(refunds, 1, "refunded once");
    drop(restarted);
    let _ = std::fs::remove_dir_all(dir);
}
