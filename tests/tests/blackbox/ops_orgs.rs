//! The orgs domain of `/ops` and invite acceptance: every tool, the invite state table, every
//! error code, cross-tenant probes and concurrent revokes. On SQLite and PostgreSQL.

use crate::ops_support;

use std::collections::BTreeSet;

use ops_support::{Client, Tenants, assert_time, scalar};
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict =>
    org_names_are_1_to_120_characters,
    invite_arguments_are_validated,
    a_key_locked_to_a_deleted_app_cannot_accept,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::Strict =>
    creating_an_org_makes_the_caller_its_owner,
);

with_tenants!(
    inviting_twice_reuses_the_pending_invite_and_emails_once,
    revoking_follows_the_state_table,
    an_accepted_invite_makes_a_member_with_the_invited_role,
    only_owners_and_admins_administer_invites,
    an_administered_org_lists_its_invites_with_their_status,
    another_tenant_sees_no_org_and_no_invite,
    concurrent_revokes_yield_one_revoked,
);

async fn create_org(ops: &Client, name: &str) -> Value {
    ops.ok("svc_ops_create_org", json!({ "name": name })).await
}

async fn invite(ops: &Client, org: &Value, email: &str, role: &str) -> Value {
    ops.ok(
        "svc_ops_invite_to_org",
        json!({ "orgId": org["orgId"], "email": email, "role": role }),
    )
    .await
}

/// `POST /_svc/invites/{id}/accept` on `app` with `bearer`.
async fn accept(app: &TestApp, bearer: Option<&str>, invite_id: &Value) -> (StatusCode, Value) {
    let mut req = app.client.post(format!(
        "{}/_svc/invites/{}/accept",
        app.base,
        invite_id.as_str().unwrap()
    ));
    if let Some(b) = bearer {
        req = req.bearer_auth(b);
    }
    let resp = req.send().await.unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

fn keys(value: &Value) -> BTreeSet<&str> {
    value.as_object().unwrap().keys().map(String::as_str).collect()
}

async fn creating_an_org_makes_the_caller_its_owner(app: TestApp) {
    let ops = Client::of(&app);
    assert_eq!(ops.ok("svc_ops_list_orgs", json!({})).await, json!({ "orgs": [] }));
    let org = create_org(&ops, "  Acme  ").await;
    assert_eq!(
        keys(&org),
        BTreeSet::from(["orgId", "name", "ownerUserId", "createdAt", "updatedAt"])
    );
    assert_eq!(org["name"], "Acme");
    assert_eq!(org["ownerUserId"], "owner", "keys-file bearers act for `owner`");
    assert_eq!(org["orgId"].as_str().unwrap().len(), 26, "a ULID");
    assert_time(&org["createdAt"]);
    let listed = ops.ok("svc_ops_list_orgs", json!({})).await;
    assert_eq!(
        listed["orgs"],
        json!([{ "orgId": org["orgId"], "name": "Acme", "ownerUserId": "owner", "role": "owner", "joinedAt": org["createdAt"], "invites": [] }])
    );
}

async fn org_names_are_1_to_120_characters(app: TestApp) {
    let ops = Client::of(&app);
    create_org(&ops, &"é".repeat(120)).await;
    ops.invalid("svc_ops_create_org", json!({ "name": "" }), "name").await;
    ops.invalid("svc_ops_create_org", json!({ "name": "x".repeat(121) }), "name")
        .await;
    ops.invalid("svc_ops_create_org", json!({ "name": "   " }), "name")
        .await;
    ops.invalid("svc_ops_create_org", json!({}), "arguments").await;
    // The limit counts the trimmed name: padding past 120 characters is not refused.
    let padded = create_org(&ops, &format!("  {}  ", "é".repeat(120))).await;
    assert_eq!(padded["name"], "é".repeat(120));
    assert_eq!(
        ops.ok("svc_ops_list_orgs", json!({})).await["orgs"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
}

async fn invite_arguments_are_validated(app: TestApp) {
    let ops = Client::of(&app);
    let org = create_org(&ops, "Acme").await;
    let args = |email: &str, role: &str| json!({ "orgId": org["orgId"], "email": email, "role": role });
    ops.invalid("svc_ops_invite_to_org", args("ada@example.com", "owner"), "role")
        .await;
    ops.invalid("svc_ops_invite_to_org", args("ada@example.com", "viewer"), "role")
        .await;
    for bad in [
        "not an email",
        "ada@",
        "@example.com",
        "a..b@example.com",
        "ada@-example.com",
    ] {
        ops.invalid("svc_ops_invite_to_org", args(bad, "member"), "email").await;
    }
    let issued = invite(&ops, &org, "Ada.Lovelace+svc@Example.COM", "admin").await;
    assert_eq!(
        issued["email"], "Ada.Lovelace+svc@example.com",
        "the domain is lowercased"
    );
    assert_eq!(issued["role"], "admin");
}

async fn inviting_twice_reuses_the_pending_invite_and_emails_once(t: Tenants) {
    let org = create_org(&t.owner, "Acme").await;
    let first = invite(&t.owner, &org, "ada@example.com", "member").await;
    assert_eq!(
        keys(&first),
        BTreeSet::from([
            "inviteId",
            "orgId",
            "email",
            "role",
            "inviterUserId",
            "status",
            "expiresAt",
            "createdAt",
            "reused"
        ])
    );
    assert_eq!(first["status"], "pending");
    assert_eq!(first["reused"], false);
    assert_eq!(first["inviterUserId"], "owner");
    assert_eq!(first["orgId"], org["orgId"]);
    let created = chrono::DateTime::parse_from_rfc3339(first["createdAt"].as_str().unwrap()).unwrap();
    let expires = chrono::DateTime::parse_from_rfc3339(first["expiresAt"].as_str().unwrap()).unwrap();
    assert_eq!(expires - created, chrono::TimeDelta::days(7), "the invite lifetime");

    let again = invite(&t.owner, &org, "ada@example.com", "admin").await;
    assert_eq!(again["reused"], true);
    assert_eq!(again["inviteId"], first["inviteId"]);
    assert_eq!(again["role"], "member", "the pending invite is reused as it is");
    let other = invite(&t.owner, &org, "bob@example.com", "member").await;
    assert_ne!(other["inviteId"], first["inviteId"]);

    let emails = |recipient: &str| {
        format!("SELECT count(*) FROM mail_outbox WHERE recipient = '{recipient}' AND kind = 'org_invite'")
    };
    assert_eq!(
        scalar(&t.database_url, &emails("ada@example.com")).await,
        1,
        "no second email"
    );
    assert_eq!(scalar(&t.database_url, &emails("bob@example.com")).await, 1);
}

async fn revoking_follows_the_state_table(t: Tenants) {
    let org = create_org(&t.owner, "Acme").await;
    let pending = invite(&t.owner, &org, "ada@example.com", "member").await;
    let id = pending["inviteId"].clone();
    let first = t.owner.ok("svc_ops_revoke_invite", json!({ "inviteId": id })).await;
    assert_eq!(
        first,
        json!({ "inviteId": id, "status": "revoked", "alreadyRevoked": false })
    );
    let again = t.owner.ok("svc_ops_revoke_invite", json!({ "inviteId": id })).await;
    assert_eq!(
        again,
        json!({ "inviteId": id, "status": "revoked", "alreadyRevoked": true })
    );
    let (status, body) = accept(&t.other_app, Some(&t.other_app.bearer), &id).await;
    assert_eq!(status, StatusCode::GONE, "the link stops working: {body}");
    assert_eq!(body["error"]["code"], "org_invite_revoked");

    let fresh = invite(&t.owner, &org, "ada@example.com", "member").await;
    assert_eq!(fresh["reused"], false, "a revoked invite is not reused");
    let (status, _) = accept(&t.other_app, Some(&t.other_app.bearer), &fresh["inviteId"]).await;
    assert_eq!(status, StatusCode::OK);
    t.owner
        .refused(
            "svc_ops_revoke_invite",
            json!({ "inviteId": fresh["inviteId"] }),
            "org_invite_already_accepted",
        )
        .await;
    t.owner
        .refused(
            "svc_ops_revoke_invite",
            json!({ "inviteId": "missing" }),
            "org_invite_not_found",
        )
        .await;
}

async fn an_accepted_invite_makes_a_member_with_the_invited_role(t: Tenants) {
    let org = create_org(&t.owner, "Acme").await;
    let issued = invite(&t.owner, &org, "builder@example.com", "admin").await;
    let id = issued["inviteId"].clone();
    let (status, body) = accept(&t.other_app, None, &id).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "{body}");
    assert_eq!(body["error"]["code"], "unauthorized");
    let (status, body) = accept(&t.other_app, Some("anything"), &json!("missing")).await;
    assert_eq!(
        (status, body["error"]["code"].clone()),
        (StatusCode::NOT_FOUND, json!("org_invite_not_found"))
    );

    let (status, membership) = accept(&t.other_app, Some("anything"), &id).await;
    assert_eq!(status, StatusCode::OK, "{membership}");
    assert_eq!(membership["orgId"], org["orgId"]);
    assert_eq!(membership["userId"], "builder");
    assert_eq!(membership["role"], "admin");
    assert_time(&membership["joinedAt"]);
    let (status, body) = accept(&t.other_app, Some("anything"), &id).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"]["code"], "org_invite_already_accepted");

    let theirs = t.other.ok("svc_ops_list_orgs", json!({})).await;
    assert_eq!(theirs["orgs"][0]["orgId"], org["orgId"]);
    assert_eq!(theirs["orgs"][0]["role"], "admin");
    assert_eq!(theirs["orgs"][0]["ownerUserId"], "owner");
    let by_admin = invite(&t.other, &org, "carol@example.com", "member").await;
    assert_eq!(by_admin["inviterUserId"], "builder");
    let revoked = t
        .other
        .ok("svc_ops_revoke_invite", json!({ "inviteId": by_admin["inviteId"] }))
        .await;
    assert_eq!(revoked["status"], "revoked");
}

async fn only_owners_and_admins_administer_invites(t: Tenants) {
    let org = create_org(&t.owner, "Acme").await;
    let to_builder = invite(&t.owner, &org, "builder@example.com", "member").await;
    let (status, _) = accept(&t.other_app, Some("x"), &to_builder["inviteId"]).await;
    assert_eq!(status, StatusCode::OK);
    let pending = invite(&t.owner, &org, "dave@example.com", "member").await;

    t.other
        .refused(
            "svc_ops_invite_to_org",
            json!({ "orgId": org["orgId"], "email": "eve@example.com", "role": "member" }),
            "org_invite_access_denied",
        )
        .await;
    t.other
        .refused(
            "svc_ops_revoke_invite",
            json!({ "inviteId": pending["inviteId"] }),
            "org_invite_access_denied",
        )
        .await;
    let still = t
        .owner
        .ok("svc_ops_revoke_invite", json!({ "inviteId": pending["inviteId"] }))
        .await;
    assert_eq!(still["alreadyRevoked"], false, "the member's attempt changed nothing");
}

async fn another_tenant_sees_no_org_and_no_invite(t: Tenants) {
    let org = create_org(&t.owner, "Acme").await;
    let pending = invite(&t.owner, &org, "ada@example.com", "member").await;
    assert_eq!(t.other.ok("svc_ops_list_orgs", json!({})).await, json!({ "orgs": [] }));
    for org_id in [org["orgId"].clone(), json!("missing")] {
        t.other
            .refused(
                "svc_ops_invite_to_org",
                json!({ "orgId": org_id, "email": "eve@example.com", "role": "admin" }),
                "org_invite_access_denied",
            )
            .await;
    }
    let foreign = t
        .other
        .refused(
            "svc_ops_revoke_invite",
            json!({ "inviteId": pending["inviteId"] }),
            "org_invite_not_found",
        )
        .await;
    let missing = t
        .other
        .refused(
            "svc_ops_revoke_invite",
            json!({ "inviteId": "missing" }),
            "org_invite_not_found",
        )
        .await;
    assert_eq!(foreign, missing, "a foreign invite answers like a missing one");
    let untouched = t
        .owner
        .ok("svc_ops_revoke_invite", json!({ "inviteId": pending["inviteId"] }))
        .await;
    assert_eq!(untouched["alreadyRevoked"], false);
}

async fn concurrent_revokes_yield_one_revoked(t: Tenants) {
    let org = create_org(&t.owner, "Acme").await;
    let pending = invite(&t.owner, &org, "ada@example.com", "member").await;
    let revokes = (0..10).map(|i| {
        let client = if i % 2 == 0 {
            t.owner.clone()
        } else {
            Client::of(&t.owner_app)
        };
        let id = pending["inviteId"].clone();
        tokio::spawn(async move { client.ok("svc_ops_revoke_invite", json!({ "inviteId": id })).await })
    });
    let mut fresh = 0;
    for handle in revokes.collect::<Vec<_>>() {
        let answer = handle.await.unwrap();
        assert_eq!(answer["status"], "revoked");
        if answer["alreadyRevoked"] == false {
            fresh += 1;
        }
    }
    assert_eq!(fresh, 1, "exactly one revoke wins the compare-and-set");
}

async fn a_key_locked_to_a_deleted_app_cannot_accept(app: TestApp) {
    let ops = Client::of(&app);
    let org = create_org(&ops, "Acme").await;
    let invited = invite(&ops, &org, "someone@example.com", "member").await;
    let doomed = ops.ok("svc_ops_create_app", json!({ "displayName": "Doomed" })).await["appId"].clone();
    let issued = ops.ok("svc_ops_issue_connector_key", json!({ "appId": doomed })).await;
    ops.ok("svc_ops_delete_app", json!({ "appId": doomed })).await;
    let (status, body) = accept(&app, issued["plaintextKey"].as_str(), &invited["inviteId"]).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert_eq!(body["error"]["code"], "app_deprovisioned", "{body}");
}

/// Our field (docs/ops.md): `svc_ops_list_orgs` lists an org's invites, newest first with their
/// status now, on the rows of orgs the caller owns or administers, and not on a member's row.
async fn an_administered_org_lists_its_invites_with_their_status(t: Tenants) {
    let org = create_org(&t.owner, "Acme").await;
    let to_builder = invite(&t.owner, &org, "builder@example.com", "member").await;
    let to_dave = invite(&t.owner, &org, "dave@example.com", "admin").await;
    t.owner
        .ok("svc_ops_revoke_invite", json!({ "inviteId": to_dave["inviteId"] }))
        .await;
    let listed = t.owner.ok("svc_ops_list_orgs", json!({})).await;
    let invites = listed["orgs"][0]["invites"].as_array().unwrap().clone();
    let summary: Vec<(Value, Value, Value)> = invites
        .iter()
        .map(|i| (i["email"].clone(), i["role"].clone(), i["status"].clone()))
        .collect();
    assert_eq!(
        summary,
        vec![
            (json!("dave@example.com"), json!("admin"), json!("revoked")),
            (json!("builder@example.com"), json!("member"), json!("pending")),
        ]
    );
    assert_eq!(invites[1]["inviteId"], to_builder["inviteId"]);
    assert_eq!(
        keys(&invites[0]),
        BTreeSet::from([
            "inviteId",
            "email",
            "role",
            "inviterUserId",
            "status",
            "expiresAt",
            "createdAt",
            "revokedAt"
        ])
    );

    let (status, _) = accept(&t.other_app, Some("x"), &to_builder["inviteId"]).await;
    assert_eq!(status, StatusCode::OK);
    let after = t.owner.ok("svc_ops_list_orgs", json!({})).await;
    assert_eq!(after["orgs"][0]["invites"][1]["status"], "accepted");
    let theirs = t.other.ok("svc_ops_list_orgs", json!({})).await;
    assert_eq!(theirs["orgs"][0]["role"], "member");
    assert!(
        theirs["orgs"][0].get("invites").is_none(),
        "a member sees no invites: {theirs}"
    );
}
