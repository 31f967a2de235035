//! The hosted story end to end, black-box: two `--hosted` replicas on one PostgreSQL database
//! behind the shipped nginx configuration with TLS (`proxy_support`), every step through the
//! proxy's public URL unless it names a replica:
//!
//! 1. the official TypeScript SDK connects from the URL alone (OAuth discovery, registration,
//!    PKCE); the person signs up at the consent page (`authorize_through_consent` in
//!    `hosted_deployment_support`) and confirms the address with the link mailed to a real SMTP
//!    sink (aiosmtpd on loopback);
//! 2. a cold render is charged `hosted.render_price_cents` (balance and ledger), a cached render
//!    is free;
//! 3. a provider key set through `/ops` is exactly what the (fake) provider receives;
//! 4. an empty wallet's render is refused `insufficient_credit`; a coupon redeemed through `/ops`
//!    tops it up and the SAME handshake renders;
//! 5. a federated caller with an access token from a real OpenID provider (npm `oidc-provider`,
//!    `tests/peers/oidc-issuer.mjs`, client-credentials grant) calls `/apps/<appId>/mcp`, and
//!    `svc_discover` answers there;
//! 6. one replica is stopped (SIGTERM) and every action and emit it acknowledged is readable
//!    through the survivor.
//!
//! Needs nginx and openssl (`SVC_REQUIRE_PROXY`), the peers of `tests/peers/install.sh`
//! (`SVC_REQUIRE_PEERS`) and `SVC_TEST_DATABASE_URL`; without them it prints `skipped: ...`.

use crate::federation_support;
use crate::hosted_deployment_support;
use crate::hosted_support;
use crate::proxy_support;

use std::path::Path;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use federation_support::configure_app;
use hosted_deployment_support::{Person, oauth_token_from_the_url_alone, oidc_issuer, peers_installed};
use hosted_support::master_key;
use proxy_support::ProxyPlan;
use serde_json::{Value, json};
use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};
use svc_tests::process::ServerProcess;
use svc_tests::smtp_sink::SmtpSink;
use svc_tests::{Backend, ScratchDatabase, temp_dir};

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const SHARED_SECRET: &str = "hosted-deployment-secret-shared-by-both-replicas-012345";
const FREE_CREDIT_CENTS: i64 = 10;
const RENDER_PRICE_CENTS: i64 = 5;
const MODEL: &str = "openai:gpt-4.1-mini";
const PROVIDER_KEY: &str = "sk-hosted-e2e-caller-7777";
const GOOD: &str = "import { useProps } from \"@svc/gadgets\";\n\
export default function Card() {\n\
  const { title } = useProps<{ title: string }>();\n\
  return <h2>{title}</h2>;\n\
}";

/// A strict hosted replica on `port`, told the proxy's URL; its providers point at `fake`.
fn replica(
    data_dir: &Path,
    port: u16,
    database_url: &str,
    public: &str,
    fake: &FakeProvider,
    mail: &SmtpSink,
) -> ServerProcess {
    std::fs::create_dir_all(data_dir).unwrap();
    let config = data_dir.join("svc.toml");
    std::fs::write(
        &config,
        format!(
            "[server]\nws_secret = \"{SHARED_SECRET}\"\n\n\
             [hosted]\nenabled = true\nmaster_keys = [\"{key}\"]\nfree_credit_cents = {FREE_CREDIT_CENTS}\n\
             render_price_cents = {RENDER_PRICE_CENTS}\nsignup = \"open\"\n\n\
             [mail]\nsmtp_url = \"{smtp}\"\nfrom = \"svc hosted <svc@example.org>\"\npoll_seconds = 1\n\n\
             [generation.providers.openai]\nbase_url = \"{fake}/v1\"\napi_key_env = \"SVC_TEST_UNSET_KEY_VARIABLE\"\n",
            key = master_key("k1", 7),
            fake = fake.base_url,
            smtp = mail.url(),
        ),
    )
    .unwrap();
    ServerProcess::start_on_port(
        BINARY,
        data_dir,
        port,
        &[
            "--config",
            config.to_str().unwrap(),
            "--database-url",
            database_url,
            "--hosted",
            "--public-base-url",
            public,
        ],
    )
}

/// One `tools/call` on `<base><path>` with `bearer`; the whole JSON-RPC body.
async fn call(client: &reqwest::Client, base: &str, path: &str, bearer: &str, tool: &str, arguments: Value) -> Value {
    client
        .post(format!("{base}{path}"))
        .bearer_auth(bearer)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } }))
        .send()
        .await
        .unwrap_or_else(|e| panic!("{tool} via {base}{path}: {e}"))
        .json()
        .await
        .unwrap()
}

/// The same, asserting success; its `structuredContent`.
async fn ok(client: &reqwest::Client, base: &str, path: &str, bearer: &str, tool: &str, arguments: Value) -> Value {
    let body = call(client, base, path, bearer, tool, arguments).await;
    assert!(
        body["result"]["isError"] != true && body.get("error").is_none(),
        "{tool} on {path}: {body}"
    );
    body["result"]["structuredContent"].clone()
}

fn card_contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object", "properties": { "n": { "type": "integer" } } } } },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "integer" } } }
    })
}

/// The caller's view of the deployment through the proxy, with its OAuth token.
struct Caller {
    client: reqwest::Client,
    public: String,
    token: String,
}

impl Caller {
    async fn mcp(&self, tool: &str, arguments: Value) -> Value {
        ok(&self.client, &self.public, "/mcp", &self.token, tool, arguments).await
    }

    async fn ops(&self, tool: &str, arguments: Value) -> Value {
        ok(&self.client, &self.public, "/ops", &self.token, tool, arguments).await
    }

    async fn handshake(&self, intent: &str) -> String {
        let hs = self
            .mcp(
                "svc_handshake",
                json!({ "intent": intent, "blueprintDraft": { "contract": card_contract() } }),
            )
            .await;
        hs["handshakeId"].as_str().unwrap().to_owned()
    }

    /// `svc_render` of a handshake with `infra`; the whole `result`.
    async fn render(&self, handshake_id: &str, infra: Value) -> Value {
        let body = call(
            &self.client,
            &self.public,
            "/mcp",
            &self.token,
            "svc_render",
            json!({ "handshakeId": handshake_id, "props": { "title": "Order 42" }, "infra": infra }),
        )
        .await;
        assert!(body.get("error").is_none(), "{body}");
        body["result"].clone()
    }

    async fn balance(&self) -> i64 {
        self.ops("svc_ops_get_credit_balance", json!({})).await["balanceCents"]
            .as_i64()
            .unwrap()
    }

    async fn newest_transaction(&self) -> Value {
        self.ops("svc_ops_list_credit_transactions", json!({ "limit": 1 }))
            .await["transactions"][0]
            .clone()
    }
}

fn assert_rendered(result: &Value) -> &Value {
    let content = &result["structuredContent"];
    assert_eq!(content["outcome"], "rendered", "{result}");
    content
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_hosted_story_runs_end_to_end_on_two_replicas_behind_nginx() {
    let test = "the_hosted_story_runs_end_to_end_on_two_replicas_behind_nginx";
    if !proxy_support::available(test) || !peers_installed(test) {
        return;
    }
    let dir = temp_dir("svc-hosted-e2e");
    let Some(database) = ScratchDatabase::create(test, Backend::Postgres, &dir).await else {
        return;
    };
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(GOOD));
    let plan = ProxyPlan::new(&dir);
    let (dir_a, dir_b) = (dir.join("a"), dir.join("b"));
    let Some(mail) = SmtpSink::start(test, 0) else {
        return;
    };
    let first = replica(&dir_a, plan.replica_ports[0], &database.url, &plan.public, &fake, &mail);
    let second = replica(&dir_b, plan.replica_ports[1], &database.url, &plan.public, &fake, &mail);
    let _nginx = plan.start().await;

    // 1. OAuth from the URL alone, through the proxy; the person signs up at the consent page and
    //    confirms the address with the link mailed to the SMTP sink.
    let person = Person {
        email: "ada@example.org",
        password: "a long enough passphrase",
    };
    let caller = Caller {
        client: plan.client(),
        public: plan.public.clone(),
        token: oauth_token_from_the_url_alone(&plan, &person).await,
    };
    let confirmation = mail
        .wait_for(person.email, "Confirm your email address", Duration::from_secs(30))
        .await;
    let link = confirmation
        .link("/account/verify?token=")
        .expect("a verification link");
    assert!(link.starts_with(&plan.public), "the link uses the public URL: {link}");
    let confirmed = svc_tests::verify_link::confirm(&caller.client, &link).await;
    assert_eq!(confirmed.status(), 200, "the mailed link confirms, through the proxy");
    assert!(
        confirmed
            .text()
            .await
            .unwrap()
            .contains("Your email address is confirmed")
    );

    // 2. A cold render is charged, a cached one is free.
    assert_eq!(
        caller.balance().await,
        FREE_CREDIT_CENTS,
        "signing up granted the free credit"
    );
    let cold = caller.render(&caller.handshake("order card").await, json!({})).await;
    let cold = assert_rendered(&cold);
    assert_eq!(cold["cache"]["hit"], false, "{cold}");
    assert_eq!(caller.balance().await, FREE_CREDIT_CENTS - RENDER_PRICE_CENTS);
    let charge = caller.newest_transaction().await;
    assert_eq!(
        (&charge["kind"], &charge["deltaCents"], &charge["relatedSessionId"]),
        (&json!("render_charge"), &json!(-RENDER_PRICE_CENTS), &cold["sessionId"]),
        "{charge}"
    );
    let warm = caller.render(&caller.handshake("order card").await, json!({})).await;
    assert_eq!(assert_rendered(&warm)["cache"]["hit"], true, "{warm}");
    assert_eq!(
        caller.balance().await,
        FREE_CREDIT_CENTS - RENDER_PRICE_CENTS,
        "a cache hit is free"
    );

    // 3. A provider key set through /ops is exactly what the provider receives.
    caller
        .ops(
            "svc_ops_set_provider_key",
            json!({ "provider": "openai", "plaintextKey": PROVIDER_KEY }),
        )
        .await;
    let keyed = caller
        .render(&caller.handshake("keyed card").await, json!({ "model": MODEL }))
        .await;
    assert_rendered(&keyed);
    let credentials: Vec<Option<String>> = fake.requests().into_iter().map(|r| r.credential).collect();
    assert_eq!(credentials, [Some(format!("Bearer {PROVIDER_KEY}"))]);
    assert_eq!(caller.balance().await, 0);

    // 4. The empty wallet refuses; a coupon tops it up and the same handshake renders.
    let pending = caller.handshake("after top-up card").await;
    let refused = caller.render(&pending, json!({})).await;
    assert_eq!(refused["isError"], true, "{refused}");
    let refusal = &refused["structuredContent"];
    assert_eq!(refusal["outcome"], "refused", "{refused}");
    assert_eq!(
        (
            &refusal["refusal"]["code"],
            &refusal["refusal"]["retry"],
            &refusal["refusal"]["handshake"],
            &refusal["refusal"]["balanceCentsAtCheck"]
        ),
        (
            &json!("insufficient_credit"),
            &json!("after-fix"),
            &json!("intact"),
            &json!(0)
        ),
        "{refused}"
    );
    let coupon = issue_coupon(&database.url, 4 * RENDER_PRICE_CENTS);
    caller
        .ops("svc_ops_redeem_coupon", json!({ "couponCode": coupon }))
        .await;
    assert_eq!(caller.balance().await, 4 * RENDER_PRICE_CENTS);
    assert_rendered(&caller.render(&pending, json!({})).await);
    assert_eq!(caller.balance().await, 3 * RENDER_PRICE_CENTS);

    // 5. A federated caller from a real OpenID provider on the app's endpoint.
    let app_id = caller
        .ops("svc_ops_create_app", json!({ "displayName": "Federated host" }))
        .await["appId"]
        .as_str()
        .unwrap()
        .to_owned();
    let (_issuer, issuer_url, client_id, client_secret) = oidc_issuer(&app_id).await;
    configure_app(
        BINARY,
        &database.url,
        &app_id,
        &["--auth-mode", "federated", "--federation-issuer", &issuer_url],
    );
    let grant: Value = reqwest::Client::new()
        .post(format!("{issuer_url}/token"))
        .basic_auth(&client_id, Some(&client_secret))
        .form(&[("grant_type", "client_credentials"), ("scope", "mcp")])
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let federated = grant["access_token"].as_str().unwrap_or_else(|| panic!("{grant}"));
    let app_path = format!("/apps/{app_id}/mcp");
    let discovered = ok(
        &caller.client,
        &caller.public,
        &app_path,
        federated,
        "svc_discover",
        json!({}),
    )
    .await;
    assert_eq!(discovered["protocolVersion"], "draft-2026-06-12", "{discovered}");
    assert_eq!(discovered["app"]["authMode"], "federated", "{discovered}");
    let on_universal = caller
        .client
        .post(format!("{}/mcp", caller.public))
        .bearer_auth(federated)
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
        .send()
        .await
        .unwrap();
    assert_eq!(on_universal.status(), 401, "a federated token is no key on /mcp");
    let native_on_federated = call(
        &caller.client,
        &caller.public,
        &app_path,
        &caller.token,
        "svc_discover",
        json!({}),
    )
    .await;
    assert_eq!(
        native_on_federated["error"]["code"], -32007,
        "a federated app refuses native keys, its owner's too: {native_on_federated}"
    );
    // The federated caller renders on the app's endpoint.
    let hs = ok(
        &caller.client,
        &caller.public,
        &app_path,
        federated,
        "svc_handshake",
        json!({ "intent": "federated card", "blueprintDraft": { "contract": card_contract() } }),
    )
    .await;
    let federated_render = call(
        &caller.client,
        &caller.public,
        &app_path,
        federated,
        "svc_render",
        json!({ "handshakeId": hs["handshakeId"], "props": { "title": "from the OpenID provider" } }),
    )
    .await;
    assert_rendered(&federated_render["result"]);

    // 6. Replica A acknowledges actions and emits, then stops; B has every one of them.
    let rendered = caller
        .render(&caller.handshake("replicated card").await, json!({}))
        .await;
    let session = assert_rendered(&rendered)["sessionId"].as_str().unwrap().to_owned();
    let ws_token = rendered["_meta"]["ai.svc/render"]["wsToken"]
        .as_str()
        .unwrap()
        .to_owned();
    let (a, b) = (plan.replica_base(0), plan.replica_base(1));
    let (session_a, token_a, bearer_a) = (session.clone(), ws_token.clone(), caller.token.clone());
    let rounds = Arc::new(AtomicUsize::new(0));
    // A card and an agent keep talking to A while it is stopped: each action and emit A
    // acknowledged is recorded, the first refused one ends the run.
    let load = tokio::spawn({
        let rounds = rounds.clone();
        async move {
            let (mut actions, mut emits) = (Vec::new(), Vec::new());
            for n in 0..200i64 {
                if !action_on(&a, &session_a, &token_a, n).await {
                    break;
                }
                actions.push(n);
                if !emit_on(&a, &session_a, &bearer_a, n).await {
                    break;
                }
                emits.push(n);
                rounds.fetch_add(1, Ordering::SeqCst);
            }
            (actions, emits)
        }
    });
    let deadline = std::time::Instant::now() + Duration::from_secs(30);
    while rounds.load(Ordering::SeqCst) < 3 {
        assert!(std::time::Instant::now() < deadline, "A acknowledged nothing in 30 s");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(first.terminate().success(), "A stops cleanly on SIGTERM");
    let (acknowledged_actions, acknowledged_emits) = load.await.unwrap();
    assert!(
        acknowledged_emits.len() >= 3,
        "A acknowledged some before it stopped: {acknowledged_actions:?} {acknowledged_emits:?}"
    );

    let direct = reqwest::Client::new();
    let consumed = ok(
        &direct,
        &b,
        "/mcp",
        &caller.token,
        "svc_consume",
        json!({ "sessionId": session, "timeout": 5 }),
    )
    .await;
    let actions: Vec<i64> = consumed["events"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["actionData"]["n"].as_i64().unwrap())
        .collect();
    assert_each_once(&acknowledged_actions, &actions, "action");
    let polled: Value = direct
        .get(format!("{b}/_svc/poll/{session}?token={ws_token}&fromSeq=0&wait=0"))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    let emits: Vec<i64> = polled["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|f| f["type"] == "data" && f["payload"]["channel"] == "log")
        .map(|f| f["payload"]["payload"].as_i64().unwrap())
        .collect();
    assert_each_once(&acknowledged_emits, &emits, "emit");
    // The proxy goes on serving from the survivor.
    ok(
        &caller.client,
        &caller.public,
        "/mcp",
        &caller.token,
        "svc_get_session",
        json!({ "sessionId": session }),
    )
    .await;
    drop((_nginx, second));
    let _ = std::fs::remove_dir_all(&dir);
}

/// A card's action `{ n }` posted on `base`'s polling door; whether it was stored (acknowledged).
async fn action_on(base: &str, session: &str, ws_token: &str, n: i64) -> bool {
    let action = json!({ "sessionId": session, "type": "data:submit", "payload": { "action": "approve", "data": { "n": n } }, "clientSeq": n });
    let Ok(answer) = reqwest::Client::new()
        .post(format!("{base}/_svc/poll/{session}?token={ws_token}"))
        .json(&json!({ "type": "action", "payload": action }))
        .send()
        .await
    else {
        return false;
    };
    let answer: Value = answer.json().await.unwrap_or_default();
    answer["frames"][0]["payload"]["event"] == "action_stored"
}

/// `svc_emit` of `n` on the `log` channel through `base`; whether it was accepted.
async fn emit_on(base: &str, session: &str, bearer: &str, n: i64) -> bool {
    let Ok(answer) = reqwest::Client::new()
        .post(format!("{base}/mcp"))
        .bearer_auth(bearer)
        .header("accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "svc_emit", "arguments": { "sessionId": session, "channel": "log", "payload": n } } }))
        .send()
        .await
    else {
        return false;
    };
    let answer: Value = answer.json().await.unwrap_or_default();
    answer["result"]["structuredContent"]["accepted"] == true
}

/// Every acknowledged value is among the survivor's exactly once.
fn assert_each_once(acknowledged: &[i64], survived: &[i64], what: &str) {
    for n in acknowledged {
        assert_eq!(
            survived.iter().filter(|s| *s == n).count(),
            1,
            "acknowledged {what} {n} is on the survivor exactly once: {survived:?}"
        );
    }
}

/// A coupon worth `cents` from the operator command (coupons are issued by the operator, not
/// through `/ops`); its code.
fn issue_coupon(database_url: &str, cents: i64) -> String {
    let out = std::process::Command::new(BINARY)
        .args([
            "coupons",
            "issue",
            "--cents",
            &cents.to_string(),
            "--database-url",
            database_url,
        ])
        .output()
        .unwrap();
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .last()
        .unwrap()
        .trim()
        .to_owned()
}
