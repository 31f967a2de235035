//! Org wallets on a hosted server (PostgreSQL): an app put in an org with `svc apps configure
//! --org-id` has its renders charged to the org's wallet, whoever calls (a native key or a
//! federated identity); an app in no org charges a native caller's own wallet and a federated
//! caller's render to the app's owner. `svc_ops_get_credit_balance` and
//! `svc_ops_list_credit_transactions` read an org's wallet with `orgId`, for its members only.

use crate::federation_support;
use crate::hosted_support;
use crate::ops_support;

use federation_support::{Issuer, SigningKey, claims, configure_app};
use jsonwebtoken::Algorithm;
use ops_support::{BINARY, Client};
use serde_json::{Value, json};

use hosted_support::accounts::{create_user, hosted_strict_app, mint_key};

const PASSWORD: &str = "correct horse battery staple";
const PRICE: i64 = 6;

/// Handshakes and renders a card on `/apps/<app_id>/mcp` as `caller`; a fresh contract each
/// time (`field`), so the render is a cold generation. The render's `structuredContent`.
async fn render(caller: &Client, app_id: &str, field: &str) -> Value {
    let path = format!("/apps/{app_id}/mcp");
    let contract = json!({ "propsSpec": { "type": "object", "properties": { field: { "type": "string" } } } });
    let (_, _, hs) = caller
        .post(
            &path,
            "tools/call",
            json!({ "name": "svc_handshake", "arguments": { "intent": format!("card {field}"), "blueprintDraft": { "contract": contract } } }),
        )
        .await;
    let handshake_id = hs["result"]["structuredContent"]["handshakeId"].clone();
    assert!(handshake_id.is_string(), "{hs}");
    let (_, _, rendered) = caller
        .post(
            &path,
            "tools/call",
            json!({ "name": "svc_render", "arguments": { "handshakeId": handshake_id, "props": { field: "x" } } }),
        )
        .await;
    rendered["result"]["structuredContent"].clone()
}

fn assert_rendered(rendered: &Value) -> String {
    assert_eq!(rendered["outcome"], "rendered", "{rendered}");
    rendered["sessionId"].as_str().unwrap().to_owned()
}

async fn balance(ops: &Client, org: Option<&str>) -> i64 {
    let arguments = org.map_or(json!({}), |o| json!({ "orgId": o }));
    ops.ok("svc_ops_get_credit_balance", arguments).await["balanceCents"]
        .as_i64()
        .unwrap()
}

/// The ledger as `(kind, deltaCents, relatedSessionId)`, newest first.
async fn ledger(ops: &Client, org: Option<&str>) -> Vec<(String, i64, Option<String>)> {
    let arguments = org.map_or(json!({}), |o| json!({ "orgId": o }));
    ops.ok("svc_ops_list_credit_transactions", arguments).await["transactions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            (
                t["kind"].as_str().unwrap().to_owned(),
                t["deltaCents"].as_i64().unwrap(),
                t["relatedSessionId"].as_str().map(str::to_owned),
            )
        })
        .collect()
}

fn configure_refused(db: &str, app_id: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(BINARY)
        .args(["apps", "configure", "--database-url", db, "--app-id", app_id])
        .args(args)
        .output()
        .expect("svc runs");
    assert_eq!(out.status.code(), Some(1), "{args:?} should fail");
    String::from_utf8(out.stderr).unwrap().trim_end().to_owned()
}

fn grant_org(db: &str, org_id: &str, cents: &str) {
    let out = std::process::Command::new(BINARY)
        .args([
            "credits",
            "grant",
            "--database-url",
            db,
            "--org",
            org_id,
            "--cents",
            cents,
            "--reason",
            "seed",
        ])
        .output()
        .expect("svc runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_org_apps_renders_are_charged_to_the_org_and_a_federated_callers_to_the_apps_owner() {
    let Some(app) = hosted_strict_app("org_wallets", |s| {
        s.hosted.render_price_cents = PRICE;
        s.hosted.free_credit_cents = 100;
    })
    .await
    else {
        return;
    };
    let db = app.settings.database_url();
    create_user(&db, "owner@example.org", PASSWORD);
    create_user(&db, "outsider@example.org", PASSWORD);
    let owner = Client::with_bearer(&app, &mint_key(&db, "owner@example.org", None));
    let outsider = Client::with_bearer(&app, &mint_key(&db, "outsider@example.org", None));
    let app_id = owner.ok("svc_ops_create_app", json!({ "displayName": "Shop" })).await["appId"]
        .as_str()
        .unwrap()
        .to_owned();
    let key = SigningKey::generate(Algorithm::ES256, "es-1");
    let issuer = Issuer::start(&[&key]).await;
    configure_app(
        BINARY,
        &db,
        &app_id,
        &[
            "--auth-mode",
            "both",
            "--federation-issuer",
            &issuer.url,
            "--jwks-url",
            &issuer.jwks_url(),
        ],
    );
    let federated = Client::with_bearer(&app, &key.sign(&claims(&issuer.url, &app_id, "shopper-1")));

    // No org: a federated caller has no wallet, so the app's owner pays.
    let session = assert_rendered(&render(&federated, &app_id, "a").await);
    assert_eq!(balance(&owner, None).await, 100 - PRICE);
    assert_eq!(
        ledger(&owner, None).await[0],
        ("render_charge".to_owned(), -PRICE, Some(session))
    );

    // Into an org (which must exist); the org is funded by the operator.
    let org_id = owner.ok("svc_ops_create_org", json!({ "name": "Acme" })).await["orgId"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(
        configure_refused(&db, &app_id, &["--org-id", "01NOSUCHORG"]),
        format!("svc: cannot configure app {app_id}: no org with id 01NOSUCHORG")
    );
    let printed = configure_app(BINARY, &db, &app_id, &["--org-id", &org_id]);
    assert!(printed.contains(&format!("org_id: {org_id}")), "{printed}");
    assert!(printed.contains("auth_mode: both"), "other settings kept: {printed}");
    grant_org(&db, &org_id, "10");
    assert_eq!(balance(&owner, Some(&org_id)).await, 10);

    // A native caller's render of the org's app is the org's charge, not the caller's.
    let session = assert_rendered(&render(&owner, &app_id, "b").await);
    assert_eq!(balance(&owner, Some(&org_id)).await, 10 - PRICE);
    assert_eq!(
        balance(&owner, None).await,
        100 - PRICE,
        "the owner's wallet is untouched"
    );
    let org_ledger = ledger(&owner, Some(&org_id)).await;
    assert_eq!(
        org_ledger,
        [
            ("render_charge".to_owned(), -PRICE, Some(session)),
            ("topup".to_owned(), 10, None),
        ]
    );

    // The org cannot pay for another: refused with the org's balance, though the owner could.
    let refused = render(&federated, &app_id, "c").await;
    assert_eq!(refused["outcome"], "refused", "{refused}");
    assert_eq!(refused["refusal"]["code"], "insufficient_credit");
    assert_eq!(refused["refusal"]["balanceCentsAtCheck"], 10 - PRICE);
    assert_eq!(balance(&owner, None).await, 100 - PRICE);

    // Only members read an org's wallet; a missing org answers the same.
    for (caller, org) in [(&outsider, org_id.as_str()), (&owner, "01NOSUCHORG")] {
        caller
            .refused("svc_ops_get_credit_balance", json!({ "orgId": org }), "org_not_found")
            .await;
        caller
            .refused(
                "svc_ops_list_credit_transactions",
                json!({ "orgId": org }),
                "org_not_found",
            )
            .await;
    }

    // Out of the org again: the owner pays for the federated caller.
    let printed = configure_app(BINARY, &db, &app_id, &["--no-org"]);
    assert!(printed.contains("org_id: (not set)"), "{printed}");
    assert_rendered(&render(&federated, &app_id, "d").await);
    assert_eq!(balance(&owner, None).await, 100 - 2 * PRICE);
    assert_eq!(balance(&owner, Some(&org_id)).await, 10 - PRICE);
}
