//! Credits in hosted mode, black-box on PostgreSQL: the first use of a wallet grants the free
//! credit; a cold render is charged (the built-in generator too), a cache hit is free, a failed
//! generation is refunded; two concurrent renders with balance for one give one render and one
//! `insufficient_credit` refusal whose handshake works after a coupon top-up; a storm of renders,
//! refunds and coupons leaves a balance that is never negative and equals the ledger's sum; the
//! transaction listing pages with a cursor that stays stable while rows are added; `svc credits
//! grant` tops up from the command line, and refuses an org or user id the deployment does not
//! know.

use crate::hosted_support;
use crate::ops_support;

use hosted_support::{handshake, hosted_app, render};
use ops_support::{BINARY, Client, issue_coupon, scalar};
use serde_json::{Value, json};
use svc_tests::TestApp;

async fn app_with(test: &str, free: i64, price: i64) -> Option<TestApp> {
    hosted_app(test, |s| {
        s.hosted.free_credit_cents = free;
        s.hosted.render_price_cents = price;
        // The storm's 14 renders of one caller are all in flight at once: these tests are about
        // the ledger, the per-caller generation cap about itself (`hosted_quotas`).
        s.hosted.generations_per_principal = 16;
    })
    .await
}

async fn balance(ops: &Client) -> Value {
    ops.ok("svc_ops_get_credit_balance", json!({})).await
}

async fn transactions(ops: &Client, arguments: Value) -> Value {
    ops.ok("svc_ops_list_credit_transactions", arguments).await
}

fn kinds(page: &Value) -> Vec<(String, i64)> {
    page["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["kind"].as_str().unwrap().to_owned(),
                t["deltaCents"].as_i64().unwrap(),
            )
        })
        .collect()
}

/// The identity the test's bearer acts for, as the ledger knows it.
async fn identity(app: &TestApp) -> String {
    let code = issue_coupon(&app.settings.database_url(), 1, None);
    let receipt = Client::of(app)
        .ok("svc_ops_redeem_coupon", json!({ "couponCode": code }))
        .await;
    receipt["redeemedByPrincipalId"].as_str().unwrap().to_owned()
}

fn ledger_sum_sql(owner: &str) -> String {
    format!(
        "SELECT COALESCE(SUM(delta_cents), 0)::bigint FROM ledger_entries WHERE principal_type = 'user' AND principal_id = '{owner}'"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cold_render_is_charged_a_cache_hit_is_free_and_a_failure_is_refunded() {
    let Some(app) = app_with("credits_charges", 20, 5).await else {
        return;
    };
    let ops = Client::of(&app);
    let wallet = balance(&ops).await;
    assert_eq!(
        (
            &wallet["balanceCents"],
            &wallet["lifetimeGrantedCents"],
            &wallet["lifetimeSpentCents"]
        ),
        (&json!(20), &json!(20), &json!(0)),
        "first use grants the free credit: {wallet}"
    );
    ops_support::assert_time(&wallet["updatedAt"]);
    assert_eq!(
        balance(&ops).await["balanceCents"],
        20,
        "the free credit is granted once"
    );

    // A cold render with the built-in generator is charged.
    let cold = render(&app, &handshake(&app, "order card").await, json!({})).await;
    let cold = &cold["result"]["structuredContent"];
    assert_eq!(cold["outcome"], "rendered", "{cold}");
    assert_eq!(cold["cache"]["hit"], false);
    assert_eq!(balance(&ops).await["balanceCents"], 15);
    let page = transactions(&ops, json!({})).await;
    assert_eq!(kinds(&page), [("render_charge".into(), -5), ("free_credit".into(), 20)]);
    let charge = &page["transactions"][0];
    assert_eq!(charge["relatedSessionId"], cold["sessionId"]);
    assert_eq!(charge["balanceAfterCents"], 15);
    ops_support::assert_time(&charge["createdAt"]);
    assert!(charge["transactionId"].as_str().is_some_and(|id| !id.is_empty()));

    // The same intent again is served from the cache: free.
    let warm = render(&app, &handshake(&app, "order card").await, json!({})).await;
    let warm = &warm["result"]["structuredContent"];
    assert_eq!(warm["outcome"], "rendered", "{warm}");
    assert_eq!(warm["cache"]["hit"], true, "{warm}");
    assert_eq!(balance(&ops).await["balanceCents"], 15);

    // A generation that fails (a model whose provider has no key) is charged, then refunded.
    let failed = render(
        &app,
        &handshake(&app, "llm card").await,
        json!({ "infra": { "model": "openai:gpt-4.1-mini" } }),
    )
    .await;
    let failed = &failed["result"]["structuredContent"];
    assert_eq!(failed["outcome"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], "NO_CREDENTIALS", "{failed}");
    let page = transactions(&ops, json!({ "limit": 2 })).await;
    assert_eq!(kinds(&page), [("refund".into(), 5), ("render_charge".into(), -5)]);
    assert_eq!(page["transactions"][0]["relatedSessionId"], failed["sessionId"]);
    let wallet = balance(&ops).await;
    assert_eq!(
        (&wallet["balanceCents"], &wallet["lifetimeSpentCents"]),
        (&json!(15), &json!(5)),
        "{wallet}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn two_concurrent_renders_with_balance_for_one_give_one_render_and_one_refusal() {
    let Some(app) = app_with("credits_race", 5, 5).await else {
        return;
    };
    let (a, b) = (handshake(&app, "card a").await, handshake(&app, "card b").await);
    let (first, second) = tokio::join!(render(&app, &a, json!({})), render(&app, &b, json!({})));
    let outcomes = [&first, &second].map(|b| b["result"]["structuredContent"]["outcome"].clone());
    assert!(
        outcomes.contains(&json!("rendered")) && outcomes.contains(&json!("refused")),
        "{first} {second}"
    );
    let (refused_body, refused_handshake) = if outcomes[0] == "refused" {
        (&first, &a)
    } else {
        (&second, &b)
    };
    assert_eq!(refused_body["result"]["isError"], true);
    assert!(
        refused_body["result"].get("_meta").is_none(),
        "a refusal carries no _meta"
    );
    let content = &refused_body["result"]["structuredContent"];
    assert_eq!(
        content.as_object().unwrap().keys().collect::<Vec<_>>(),
        ["outcome", "refusal"],
        "{content}"
    );
    let refusal = &content["refusal"];
    assert_eq!(refusal["code"], "insufficient_credit");
    assert_eq!(refusal["retry"], "after-fix");
    assert_eq!(refusal["handshake"], "intact");
    assert_eq!(refusal["balanceCentsAtCheck"], 0);
    for field in ["message", "fix"] {
        assert!(refusal[field].as_str().is_some_and(|t| !t.is_empty()), "{refusal}");
    }
    assert_eq!(balance(&Client::of(&app)).await["balanceCents"], 0, "never negative");

    // A coupon tops the wallet up; the refused handshake renders now.
    let code = issue_coupon(&app.settings.database_url(), 5, None);
    Client::of(&app)
        .ok("svc_ops_redeem_coupon", json!({ "couponCode": code }))
        .await;
    let retried = render(&app, refused_handshake, json!({})).await;
    assert_eq!(
        retried["result"]["structuredContent"]["outcome"], "rendered",
        "{retried}"
    );
    let page = transactions(&Client::of(&app), json!({ "limit": 2 })).await;
    assert_eq!(kinds(&page), [("render_charge".into(), -5), ("topup".into(), 5)]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_storm_of_renders_refunds_and_coupons_keeps_the_balance_at_the_ledger_sum() {
    let Some(app) = app_with("credits_storm", 30, 5).await else {
        return;
    };
    let owner = identity(&app).await;
    let url = app.settings.database_url();
    let coupons: Vec<String> = (0..4).map(|_| issue_coupon(&url, 10, None)).collect();
    let mut handshakes = Vec::new();
    for i in 0..14 {
        handshakes.push((i, handshake(&app, &format!("storm card {i}")).await));
    }
    let renders = handshakes.iter().map(|(i, hs)| {
        let app = &app;
        // Every third render names a model without a key: charged, failed, refunded.
        let extra = if i % 3 == 0 {
            json!({ "infra": { "model": "openai:gpt-4.1-mini" } })
        } else {
            json!({})
        };
        async move { render(app, hs, extra).await["result"]["structuredContent"]["outcome"].clone() }
    });
    let redemptions = coupons.iter().map(|code| {
        let ops = Client::of(&app);
        async move { ops.ok("svc_ops_redeem_coupon", json!({ "couponCode": code })).await }
    });
    let (outcomes, _) = tokio::join!(
        futures_util::future::join_all(renders),
        futures_util::future::join_all(redemptions)
    );
    let rendered = outcomes.iter().filter(|o| **o == "rendered").count() as i64;
    let refused = outcomes.iter().filter(|o| **o == "refused").count();
    assert!(
        rendered > 0
            && outcomes
                .iter()
                .all(|o| ["rendered", "failed", "refused"].contains(&o.as_str().unwrap())),
        "{outcomes:?}"
    );

    let wallet = balance(&Client::of(&app)).await;
    let balance_cents = wallet["balanceCents"].as_i64().unwrap();
    assert!(balance_cents >= 0, "{wallet}");
    assert_eq!(
        balance_cents,
        scalar(&url, &ledger_sum_sql(&owner)).await,
        "balance = ledger sum"
    );
    // 30 free + 1 (identity probe) + 40 of coupons, minus 5 per rendered card.
    assert_eq!(balance_cents, 71 - 5 * rendered, "{outcomes:?} ({refused} refused)");
    let negative = scalar(
        &url,
        "SELECT count(*) FROM ledger_entries WHERE balance_after_cents < 0",
    )
    .await;
    assert_eq!(negative, 0);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn transactions_page_with_a_cursor_that_stays_stable_while_rows_are_added() {
    let Some(app) = app_with("credits_pages", 0, 5).await else {
        return;
    };
    let owner = identity(&app).await;
    let url = app.settings.database_url();
    for cents in [2, 3, 4, 5] {
        grant(
            &url,
            &["--user", &owner, "--cents", &cents.to_string(), "--reason", "support"],
        )
        .unwrap();
    }
    let ops = Client::of(&app);
    let first = transactions(&ops, json!({ "limit": 2 })).await;
    assert_eq!(kinds(&first), [("topup".into(), 5), ("topup".into(), 4)]);
    assert_eq!(first["transactions"][0]["reason"], "support");
    let cursor = first["nextCursor"].as_str().unwrap().to_owned();

    // Rows written after the first page never shift the next one.
    grant(&url, &["--user", &owner, "--cents", "9", "--reason", "late"]).unwrap();
    let second = transactions(&ops, json!({ "limit": 2, "cursor": cursor })).await;
    assert_eq!(kinds(&second), [("topup".into(), 3), ("topup".into(), 2)]);
    let last = transactions(&ops, json!({ "limit": 2, "cursor": second["nextCursor"] })).await;
    assert_eq!(kinds(&last), [("topup".into(), 1)], "the identity probe's coupon");
    assert!(last.get("nextCursor").is_none(), "{last}");
    let all = transactions(&ops, json!({})).await;
    assert_eq!(
        all["transactions"].as_array().unwrap().len(),
        6,
        "default limit 20 holds all"
    );

    for (arguments, field) in [
        (json!({ "limit": 0 }), "limit"),
        (json!({ "limit": 101 }), "limit"),
        (json!({ "cursor": "not-a-cursor" }), "cursor"),
        (json!({ "cursor": "-3" }), "cursor"),
    ] {
        ops.invalid("svc_ops_list_credit_transactions", arguments, field).await;
    }
}

/// `svc credits grant ARGS --database-url URL`: Ok(stdout) or Err(stderr).
fn grant(url: &str, args: &[&str]) -> Result<String, String> {
    let out = std::process::Command::new(BINARY)
        .args(["credits", "grant", "--database-url", url])
        .args(args)
        .output()
        .expect("run svc credits grant");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    if out.status.success() { Ok(stdout) } else { Err(stderr) }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_grant_command_tops_up_a_user_or_an_org_and_refuses_bad_input() {
    let Some(app) = app_with("credits_grant_cli", 0, 5).await else {
        return;
    };
    let url = app.settings.database_url();
    let ops = Client::of(&app);
    let org = ops.ok("svc_ops_create_org", json!({ "name": "Acme" })).await["orgId"]
        .as_str()
        .unwrap()
        .to_owned();
    let printed = grant(&url, &["--org", &org, "--cents", "700", "--reason", "invoice 12"]).unwrap();
    assert!(printed.contains("balance 700 cents"), "{printed}");
    let org_sum = scalar(
        &url,
        &format!("SELECT balance_cents FROM wallets WHERE principal_type = 'org' AND principal_id = '{org}'"),
    )
    .await;
    assert_eq!(org_sum, 700);

    // An id nothing on the deployment knows is refused in one line, exit 1: a typo opens no
    // wallet no one will own.
    for (flag, id, said) in [
        ("--org", "01NOSUCHORG", "no org with id 01NOSUCHORG"),
        ("--user", "usr_nosuchuser", "no user with id usr_nosuchuser"),
    ] {
        let out = std::process::Command::new(BINARY)
            .args(["credits", "grant", "--database-url", &url, flag, id])
            .args(["--cents", "5", "--reason", "typo"])
            .output()
            .expect("run svc credits grant");
        assert_eq!(out.status.code(), Some(1), "{flag} {id}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim_end(),
            format!("svc: cannot grant the credit: {said}")
        );
    }
    let phantom = scalar(
        &url,
        "SELECT count(*) FROM wallets WHERE principal_id IN ('01NOSUCHORG', 'usr_nosuchuser')",
    )
    .await;
    assert_eq!(phantom, 0);

    for (args, needle) in [
        (vec!["--cents", "5", "--reason", "r"], "--user"),
        (
            vec!["--user", "u", "--org", "o", "--cents", "5", "--reason", "r"],
            "cannot be used with",
        ),
        (
            vec!["--user", "u", "--cents", "0", "--reason", "r"],
            "amount must be positive",
        ),
        (vec!["--user", "u", "--cents", "5", "--reason", " "], "--reason"),
    ] {
        let error = grant(&url, &args).unwrap_err();
        assert!(error.contains(needle), "{args:?}: {error}");
    }
}

/// With the orgs domain off (`[ops] orgs = false`) no org exists: a credit or provider-key tool
/// that names an `orgId` is refused `org_not_found` (Document 3), not an unknown method.
#[tokio::test(flavor = "multi_thread")]
async fn with_orgs_off_an_org_id_is_org_not_found() {
    let Some(app) = hosted_app("credits_orgs_off", |s| s.ops.orgs = false).await else {
        return;
    };
    let ops = Client::of(&app);
    let org = json!({ "orgId": "org_nowhere" });
    ops.refused("svc_ops_get_credit_balance", org.clone(), "org_not_found")
        .await;
    ops.refused("svc_ops_list_credit_transactions", org.clone(), "org_not_found")
        .await;
    ops.refused("svc_ops_list_provider_keys", org, "org_not_found").await;
    // Without an orgId the caller's own wallet answers as before.
    balance(&ops).await;
}

/// A cold render streaming its progress when the server is told to stop, whose provider never
/// answers: the grace period ends it, and its reserved charge is refunded before the database
/// closes (nothing waited for such a render, and the refund was lost with the process).
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_streamed_render_ended_by_shutdown_is_refunded_before_the_process_exits() {
    use svc_tests::process::ServerProcess;
    use svc_tests::{Backend, ScratchDatabase, temp_dir};

    let test = "credits_shutdown_refund";
    if !hosted_support::postgres_available(test) {
        return;
    }
    let dir = temp_dir("svc-shutdown-refund");
    let Some(database) = ScratchDatabase::create(test, Backend::Postgres, &dir).await else {
        return;
    };
    let (fake, config) =
        hosted_support::stalling_provider_config(&dir, "free_credit_cents = 100\nrender_price_cents = 7\n").await;
    let server = ServerProcess::start(
        BINARY,
        &dir.join("data"),
        &[
            "--config",
            config.to_str().unwrap(),
            "--database-url",
            &database.url,
            "--dev-allow-all",
        ],
    );
    let ops = Client {
        base: server.base.clone(),
        client: reqwest::Client::new(),
        bearer: Some("dev-bearer".into()),
    };
    ops.ok(
        "svc_ops_set_provider_key",
        json!({ "provider": "openai", "plaintextKey": "sk-caller-key-0001", "label": "work" }),
    )
    .await;
    let (_, body) = ops
        .mcp(
            "tools/call",
            json!({ "name": "svc_handshake", "arguments": { "intent": "never answered", "blueprintDraft": { "contract": hosted_support::contract() } } }),
        )
        .await;
    let handshake_id = body["result"]["structuredContent"]["handshakeId"].clone();
    // The render streams its progress; its client keeps reading until the server goes away.
    let render = reqwest::Client::new()
        .post(format!("{}/mcp", server.base))
        .bearer_auth("dev-bearer")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 7, "method": "tools/call", "params": {
            "name": "svc_render",
            "arguments": { "handshakeId": handshake_id, "props": { "title": "x" }, "infra": { "model": "openai:gpt-4.1-mini" } },
            "_meta": { "progressToken": "p1" } } }))
        .send()
        .await
        .unwrap();
    assert_eq!(render.status(), 200);
    let reading = tokio::spawn(async move { render.text().await });
    let started = std::time::Instant::now();
    while fake.requests().is_empty() {
        assert!(
            started.elapsed() < std::time::Duration::from_secs(20),
            "the generation never reached the provider"
        );
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let charges = "SELECT count(*) FROM ledger_entries WHERE kind = 'render_charge'";
    assert_eq!(
        scalar(&database.url, charges).await,
        1,
        "the render's charge is reserved"
    );

    server.send_term();
    let status = server
        .exit_within(std::time::Duration::from_secs(30))
        .expect("the server exits after its grace period");
    assert!(status.success(), "{status:?}");
    let _ = reading.await;
    let refunds = "SELECT count(*) FROM ledger_entries WHERE kind = 'refund' AND delta_cents = 7";
    assert_eq!(
        scalar(&database.url, refunds).await,
        1,
        "the ended render's charge was refunded before the process exited"
    );
    let balance = "SELECT balance_cents FROM wallets WHERE principal_type = 'user'";
    assert_eq!(scalar(&database.url, balance).await, 100);
}
