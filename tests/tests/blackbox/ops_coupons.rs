//! Coupons: issued by the operator command `svc coupons issue`, redeemed once on `/ops` into a
//! user's or an org's wallet; every coupon error code; 20 concurrent redemptions credit once;
//! failed redemptions limited per caller across replicas. On SQLite and PostgreSQL.

use crate::ops_support;

use ops_support::{Client, Tenants, assert_time, issue_coupon, issue_coupon_cli, scalar};
use reqwest::StatusCode;
use serde_json::json;
use sha2::{Digest, Sha256};

with_tenants!(
    the_operator_command_prints_a_code_as_its_last_line,
    a_coupon_credits_the_callers_wallet_once,
    coupon_errors,
    a_coupon_can_credit_an_org_the_caller_belongs_to,
    twenty_concurrent_redemptions_credit_once,
    only_a_hash_of_a_code_is_stored,
    failed_redemptions_are_limited_per_caller_across_replicas,
);

fn is_code(code: &str) -> bool {
    code.len() == 12 && code.starts_with("cpn_") && code[4..].chars().all(|c| c.is_ascii_alphanumeric())
}

async fn the_operator_command_prints_a_code_as_its_last_line(t: Tenants) {
    let code = issue_coupon(&t.database_url, 500, None);
    assert!(is_code(&code), "{code}");
    if !t.database_url.starts_with("postgres") {
        let data_dir = t.owner_app.data_dir.to_str().unwrap();
        let (ok, stdout, stderr) = issue_coupon_cli(&["--cents", "100", "--data-dir", data_dir]);
        assert!(ok, "{stderr}");
        assert!(is_code(stdout.lines().last().unwrap()), "{stdout}");
        assert_eq!(scalar(&t.database_url, "SELECT count(*) FROM coupons").await, 2);
    }
    for bad in [
        vec!["--cents", "0", "--database-url", &t.database_url],
        vec!["--cents", "-5", "--database-url", &t.database_url],
        vec![
            "--cents",
            "5",
            "--expires-at",
            "soon",
            "--database-url",
            &t.database_url,
        ],
        vec!["--database-url", &t.database_url],
    ] {
        let (ok, stdout, stderr) = issue_coupon_cli(&bad);
        assert!(!ok, "{bad:?} should fail: {stdout}");
        assert!(!stderr.trim().is_empty());
    }
}

async fn a_coupon_credits_the_callers_wallet_once(t: Tenants) {
    let code = issue_coupon(&t.database_url, 750, Some("2999-01-01T00:00:00Z"));
    let receipt = t.owner.ok("svc_ops_redeem_coupon", json!({ "couponCode": code })).await;
    assert_eq!(receipt["couponCode"], code.as_str());
    assert_eq!(receipt["creditCents"], 750);
    assert_eq!(receipt["redeemedByPrincipalType"], "user");
    assert_eq!(receipt["redeemedByPrincipalId"], "owner");
    assert_time(&receipt["activatedAt"]);
    for who in [&t.owner, &t.other] {
        who.refused(
            "svc_ops_redeem_coupon",
            json!({ "couponCode": code }),
            "coupon_already_redeemed",
        )
        .await;
    }
    let balance = scalar(
        &t.database_url,
        "SELECT balance_cents FROM wallets WHERE principal_type = 'user' AND principal_id = 'owner'",
    )
    .await;
    assert_eq!(balance, 750);
    let ledger = "SELECT count(*) FROM ledger_entries WHERE principal_id = 'owner'";
    assert_eq!(scalar(&t.database_url, ledger).await, 1);
}

async fn coupon_errors(t: Tenants) {
    let unknown = "cpn_00000000";
    t.owner
        .refused(
            "svc_ops_redeem_coupon",
            json!({ "couponCode": unknown }),
            "coupon_not_found",
        )
        .await;
    for malformed in ["cpn_short", "cpn_toolong123", "CPN_AbCd1234", "cpn_AbCd-234", ""] {
        t.owner
            .invalid(
                "svc_ops_redeem_coupon",
                json!({ "couponCode": malformed }),
                "couponCode",
            )
            .await;
    }
    let expired = issue_coupon(&t.database_url, 100, Some("2020-01-01T00:00:00Z"));
    t.owner
        .refused(
            "svc_ops_redeem_coupon",
            json!({ "couponCode": expired }),
            "coupon_expired",
        )
        .await;

    let org = t.owner.ok("svc_ops_create_org", json!({ "name": "Acme" })).await;
    let code = issue_coupon(&t.database_url, 100, None);
    for target in [org["orgId"].clone(), json!("missing")] {
        t.other
            .refused(
                "svc_ops_redeem_coupon",
                json!({ "couponCode": code, "targetOrgId": target }),
                "coupon_access_denied",
            )
            .await;
    }
    t.other
        .refused(
            "svc_ops_redeem_coupon",
            json!({ "couponCode": unknown, "targetOrgId": org["orgId"] }),
            "coupon_access_denied",
        )
        .await;
    let receipt = t.other.ok("svc_ops_redeem_coupon", json!({ "couponCode": code })).await;
    assert_eq!(
        receipt["redeemedByPrincipalId"], "builder",
        "the refusals left it unredeemed"
    );
}

async fn a_coupon_can_credit_an_org_the_caller_belongs_to(t: Tenants) {
    let org = t.owner.ok("svc_ops_create_org", json!({ "name": "Acme" })).await;
    let code = issue_coupon(&t.database_url, 300, None);
    let receipt = t
        .owner
        .ok(
            "svc_ops_redeem_coupon",
            json!({ "couponCode": code, "targetOrgId": org["orgId"] }),
        )
        .await;
    assert_eq!(receipt["redeemedByPrincipalType"], "org");
    assert_eq!(receipt["redeemedByPrincipalId"], org["orgId"]);
    let org_id = org["orgId"].as_str().unwrap();
    let balance =
        format!("SELECT balance_cents FROM wallets WHERE principal_type = 'org' AND principal_id = '{org_id}'");
    assert_eq!(scalar(&t.database_url, &balance).await, 300);
    let user_wallets = "SELECT count(*) FROM wallets WHERE principal_id = 'owner' AND balance_cents > 0";
    assert_eq!(scalar(&t.database_url, user_wallets).await, 0);
}

async fn twenty_concurrent_redemptions_credit_once(t: Tenants) {
    let code = issue_coupon(&t.database_url, 1000, None);
    let attempts = (0..20).map(|i| {
        let client = if i % 2 == 0 { t.owner.clone() } else { t.other.clone() };
        let code = code.clone();
        tokio::spawn(async move {
            client
                .call("svc_ops_redeem_coupon", json!({ "couponCode": code }))
                .await
        })
    });
    let mut winners = 0;
    for handle in attempts.collect::<Vec<_>>() {
        let body = handle.await.unwrap();
        if body["result"]["isError"] == true {
            assert_eq!(
                body["result"]["structuredContent"]["error"]["code"], "coupon_already_redeemed",
                "{body}"
            );
        } else {
            assert_eq!(body["result"]["structuredContent"]["creditCents"], 1000, "{body}");
            winners += 1;
        }
    }
    assert_eq!(winners, 1);
    let credited = "SELECT count(*) FROM ledger_entries";
    assert_eq!(scalar(&t.database_url, credited).await, 1, "one ledger row");
    let total = "SELECT CAST(sum(balance_cents) AS BIGINT) FROM wallets";
    assert_eq!(scalar(&t.database_url, total).await, 1000, "credited once");
}

/// A code is a bearer secret: the table holds its sha256 (hex), never the code itself, and
/// redemption finds the coupon by that hash.
async fn only_a_hash_of_a_code_is_stored(t: Tenants) {
    let code = issue_coupon(&t.database_url, 300, None);
    let hash = hex::encode(Sha256::digest(code.as_bytes()));
    let by_hash = format!("SELECT count(*) FROM coupons WHERE code_hash = '{hash}'");
    assert_eq!(scalar(&t.database_url, &by_hash).await, 1);
    let plaintext = format!("SELECT count(*) FROM coupons WHERE code_hash = '{code}'");
    assert_eq!(scalar(&t.database_url, &plaintext).await, 0);
    let receipt = t.owner.ok("svc_ops_redeem_coupon", json!({ "couponCode": code })).await;
    assert_eq!(receipt["couponCode"], code.as_str());
    t.owner
        .refused(
            "svc_ops_redeem_coupon",
            json!({ "couponCode": code }),
            "coupon_already_redeemed",
        )
        .await;
    assert_eq!(
        scalar(&t.database_url, &plaintext).await,
        0,
        "not after redemption either"
    );
}

/// Guessing codes has a budget per caller, counted in the database so every replica shares it:
/// ten failed redemptions per fifteen minutes (`svc_domain::coupon::REDEEM_FAILURES_PER_WINDOW`).
/// The next attempt, even with a genuine code, is Document 2's rate-limited tool call; another
/// caller redeems that code meanwhile.
async fn failed_redemptions_are_limited_per_caller_across_replicas(t: Tenants) {
    let genuine = issue_coupon(&t.database_url, 400, None);
    let replica = t.other_app.replica().await;
    let other_on_replica = Client {
        base: replica.base.clone(),
        ..t.other.clone()
    };
    for i in 0..10 {
        let caller = if i % 2 == 0 { &t.other } else { &other_on_replica };
        caller
            .refused(
                "svc_ops_redeem_coupon",
                json!({ "couponCode": format!("cpn_0000000{i}") }),
                "coupon_not_found",
            )
            .await;
    }
    for caller in [&t.other, &other_on_replica] {
        let arguments = json!({ "name": "svc_ops_redeem_coupon", "arguments": { "couponCode": genuine } });
        let (status, headers, body) = caller.post("/ops", "tools/call", arguments).await;
        assert_eq!(status, StatusCode::OK, "never HTTP 429: {body}");
        assert!(headers.get("retry-after").is_none(), "{headers:?}");
        assert!(body.get("error").is_none(), "not a JSON-RPC error: {body}");
        let result = &body["result"];
        assert_eq!(result["isError"], true, "{body}");
        let retry_after_ms = result["structuredContent"]["error"]["retryAfterMs"]
            .as_u64()
            .unwrap_or_else(|| panic!("retryAfterMs is a number: {body}"));
        assert!((1..=900_000).contains(&retry_after_ms), "{retry_after_ms}");
        let message =
            format!("too many failed coupon redemptions: at most 10 per 900 seconds; retry in {retry_after_ms} ms");
        assert_eq!(
            result["structuredContent"],
            json!({ "error": { "code": "rate_limited", "message": message, "retryAfterMs": retry_after_ms } })
        );
        assert_eq!(result["content"][0]["text"], format!("rate_limited: {message}"));
    }
    let receipt = t
        .owner
        .ok("svc_ops_redeem_coupon", json!({ "couponCode": genuine }))
        .await;
    assert_eq!(
        receipt["redeemedByPrincipalId"], "owner",
        "another caller's budget is its own"
    );
}
