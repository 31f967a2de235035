//! Org provider keys on a hosted server (PostgreSQL): `svc_ops_set_provider_key`,
//! `svc_ops_list_provider_keys` and `svc_ops_remove_provider_key` take an `orgId`. Setting and
//! removing an org's key takes its owner or an admin (`org_invite_access_denied` for a plain
//! member), listing any member; a caller outside the org, or a missing org, is `org_not_found`.
//! A render of an app in an org, and an operator generation (`svc_ops_generate_blueprint`) in
//! it, send exactly the org's key to the provider, never the caller's own key.

use crate::federation_support::configure_app;
use crate::hosted_provider_keys::{GOOD, MODEL, use_fake_openai};
use crate::hosted_support::accounts::{create_user_with, hosted_strict_app, mint_key};
use crate::ops_support::{self, BINARY, Client};

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};
use svc_tests::TestApp;

const PASSWORD: &str = "correct horse battery staple";
const NO_ORG: &str = "01NOSUCHORG";

/// A user account with a key of its own and a verified address (an invitee accepting by its
/// address alone must have proven it), on `app`'s database.
fn account(app: &TestApp, email: &str) -> Client {
    let db = app.settings.database_url();
    create_user_with(&db, email, PASSWORD, &["--verified"]);
    Client::with_bearer(app, &mint_key(&db, email, None))
}

/// `owner` invites `email` into `org_id` as `role`, and the invitee (its account's address is
/// the invited one) accepts with `invitee`'s key.
async fn join(app: &TestApp, owner: &Client, invitee: &Client, org_id: &str, email: &str, role: &str) {
    let invite = owner
        .ok(
            "svc_ops_invite_to_org",
            json!({ "orgId": org_id, "email": email, "role": role }),
        )
        .await;
    let resp = app
        .client
        .post(format!(
            "{}/_svc/invites/{}/accept",
            app.base,
            invite["inviteId"].as_str().unwrap()
        ))
        .bearer_auth(invitee.bearer.as_deref().unwrap())
        .send()
        .await
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK, "{}", resp.text().await.unwrap());
}

fn set(key: &str, org_id: Option<&str>) -> Value {
    let mut arguments = json!({ "provider": "openai", "plaintextKey": key });
    if let Some(org_id) = org_id {
        arguments["orgId"] = json!(org_id);
    }
    arguments
}

/// `(provider, lastFour)` of each listed key.
async fn listed(caller: &Client, org_id: Option<&str>) -> Vec<(String, String)> {
    let arguments = org_id.map_or(json!({}), |o| json!({ "orgId": o }));
    caller.ok("svc_ops_list_provider_keys", arguments).await["keys"]
        .as_array()
        .unwrap()
        .iter()
        .map(|k| {
            (
                k["provider"].as_str().unwrap().to_owned(),
                k["lastFour"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

/// Handshakes and renders a fresh card on `/apps/<app_id>/mcp` as `caller` with the fake's
/// model; the render's `structuredContent`.
async fn render(caller: &Client, app_id: &str, intent: &str) -> Value {
    let path = format!("/apps/{app_id}/mcp");
    let (_, _, hs) = caller
        .post(
            &path,
            "tools/call",
            json!({ "name": "svc_handshake", "arguments": { "intent": intent, "blueprintDraft": { "contract": crate::hosted_support::contract() } } }),
        )
        .await;
    let handshake_id = hs["result"]["structuredContent"]["handshakeId"].clone();
    assert!(handshake_id.is_string(), "{hs}");
    let (_, _, rendered) = caller
        .post(
            &path,
            "tools/call",
            json!({ "name": "svc_render", "arguments": { "handshakeId": handshake_id, "props": { "title": "x" }, "infra": { "model": MODEL } } }),
        )
        .await;
    rendered["result"]["structuredContent"].clone()
}

fn grant_org(db: &str, org_id: &str) {
    let out = std::process::Command::new(BINARY)
        .args([
            "credits",
            "grant",
            "--database-url",
            db,
            "--org",
            org_id,
            "--cents",
            "1000",
            "--reason",
            "seed",
        ])
        .output()
        .expect("svc runs");
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_orgs_admins_set_and_remove_its_keys_its_members_list_them_and_others_are_refused() {
    let fake = FakeProvider::start().await;
    let Some(app) = hosted_strict_app("org_provider_keys_tools", |s| use_fake_openai(s, &fake)).await else {
        return;
    };
    let owner = account(&app, "owner@example.org");
    let admin = account(&app, "admin@example.org");
    let member = account(&app, "member@example.org");
    let outsider = account(&app, "outsider@example.org");
    let org = owner.ok("svc_ops_create_org", json!({ "name": "Acme" })).await;
    let org_id = org["orgId"].as_str().unwrap();
    join(&app, &owner, &admin, org_id, "admin@example.org", "admin").await;
    join(&app, &owner, &member, org_id, "member@example.org", "member").await;

    // An admin sets the org's key; every member lists it, by lastFour only.
    let summary = admin
        .ok("svc_ops_set_provider_key", set("sk-org-first-aaaa", Some(org_id)))
        .await;
    assert_eq!(
        (&summary["provider"], &summary["lastFour"]),
        (&json!("openai"), &json!("aaaa"))
    );
    let org_keys = vec![("openai".to_owned(), "aaaa".to_owned())];
    for caller in [&owner, &admin, &member] {
        assert_eq!(listed(caller, Some(org_id)).await, org_keys);
    }
    let body = member
        .call("svc_ops_list_provider_keys", json!({ "orgId": org_id }))
        .await;
    assert!(!body.to_string().contains("sk-org-first"), "never the key: {body}");

    // The org's keys and a member's own keys are apart.
    owner.ok("svc_ops_set_provider_key", set("sk-own-bbbb", None)).await;
    assert_eq!(listed(&owner, None).await, [("openai".to_owned(), "bbbb".to_owned())]);
    assert_eq!(listed(&admin, None).await, Vec::<(String, String)>::new());
    assert_eq!(listed(&owner, Some(org_id)).await, org_keys);

    // The owner rotates it by setting again.
    owner
        .ok("svc_ops_set_provider_key", set("sk-org-second-cccc", Some(org_id)))
        .await;
    assert_eq!(
        listed(&member, Some(org_id)).await,
        [("openai".to_owned(), "cccc".to_owned())]
    );

    // A plain member may not change the org's keys.
    member
        .refused(
            "svc_ops_set_provider_key",
            set("sk-member-dddd", Some(org_id)),
            "org_invite_access_denied",
        )
        .await;
    member
        .refused(
            "svc_ops_remove_provider_key",
            json!({ "provider": "openai", "orgId": org_id }),
            "org_invite_access_denied",
        )
        .await;
    // Outside the org, or a missing org: the same answer, for every tool.
    for (caller, org) in [(&outsider, org_id), (&owner, NO_ORG)] {
        caller
            .refused("svc_ops_set_provider_key", set("sk-x-eeee", Some(org)), "org_not_found")
            .await;
        caller
            .refused("svc_ops_list_provider_keys", json!({ "orgId": org }), "org_not_found")
            .await;
        caller
            .refused(
                "svc_ops_remove_provider_key",
                json!({ "provider": "openai", "orgId": org }),
                "org_not_found",
            )
            .await;
    }
    assert_eq!(
        listed(&owner, Some(org_id)).await,
        [("openai".to_owned(), "cccc".to_owned())]
    );

    // An admin removes it, idempotently; the owner's own key stays.
    for deleted in [true, false] {
        assert_eq!(
            admin
                .ok(
                    "svc_ops_remove_provider_key",
                    json!({ "provider": "openai", "orgId": org_id })
                )
                .await,
            json!({ "deleted": deleted, "provider": "openai" })
        );
    }
    assert_eq!(listed(&member, Some(org_id)).await, Vec::<(String, String)>::new());
    assert_eq!(listed(&owner, None).await, [("openai".to_owned(), "bbbb".to_owned())]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_org_apps_render_sends_exactly_the_orgs_key_never_the_callers_own() {
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(GOOD));
    let Some(app) = hosted_strict_app("org_provider_keys_render", |s| use_fake_openai(s, &fake)).await else {
        return;
    };
    let db = app.settings.database_url();
    let owner = account(&app, "owner@example.org");
    let org_id = owner.ok("svc_ops_create_org", json!({ "name": "Acme" })).await["orgId"]
        .as_str()
        .unwrap()
        .to_owned();
    grant_org(&db, &org_id);
    let app_id = owner.ok("svc_ops_create_app", json!({ "displayName": "Shop" })).await["appId"]
        .as_str()
        .unwrap()
        .to_owned();
    configure_app(BINARY, &db, &app_id, &["--org-id", &org_id]);

    // The caller's own key does not pay for the org's app: the org has none.
    let own = "sk-caller-own-1111";
    owner.ok("svc_ops_set_provider_key", set(own, None)).await;
    let failed = render(&owner, &app_id, "no org key").await;
    assert_eq!(failed["outcome"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], "NO_CREDENTIALS", "{failed}");
    assert_eq!(fake.request_count(), 0, "nothing reached the provider");

    let org_key = "sk-org-exact-2222";
    owner.ok("svc_ops_set_provider_key", set(org_key, Some(&org_id))).await;
    let rendered = render(&owner, &app_id, "org key").await;
    assert_eq!(rendered["outcome"], "rendered", "{rendered}");
    let credentials: Vec<Option<String>> = fake.requests().into_iter().map(|r| r.credential).collect();
    assert_eq!(
        credentials,
        [Some(format!("Bearer {org_key}"))],
        "the provider received exactly the org's key"
    );
    let org_keys = owner.ok("svc_ops_list_provider_keys", json!({ "orgId": org_id })).await;
    ops_support::assert_time(&org_keys["keys"][0]["lastUsedAt"]);
    let own_keys = owner.ok("svc_ops_list_provider_keys", json!({})).await;
    assert!(own_keys["keys"][0].get("lastUsedAt").is_none(), "{own_keys}");
}

/// `svc_ops_generate_blueprint` in an org's app pays as a render there does: with the org's key,
/// never the caller's own.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_org_apps_operator_generation_sends_exactly_the_orgs_key_never_the_callers_own() {
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(GOOD));
    let Some(app) = hosted_strict_app("org_provider_keys_generate", |s| use_fake_openai(s, &fake)).await else {
        return;
    };
    let db = app.settings.database_url();
    let owner = account(&app, "owner@example.org");
    let org_id = owner.ok("svc_ops_create_org", json!({ "name": "Acme" })).await["orgId"]
        .as_str()
        .unwrap()
        .to_owned();
    let app_id = owner.ok("svc_ops_create_app", json!({ "displayName": "Shop" })).await["appId"]
        .as_str()
        .unwrap()
        .to_owned();
    configure_app(BINARY, &db, &app_id, &["--org-id", &org_id]);
    // A key locked to the org's app: its operator tools act in that app.
    let issued = owner
        .ok(
            "svc_ops_issue_connector_key",
            json!({ "name": "shop", "appId": app_id }),
        )
        .await;
    let shop = Client {
        bearer: Some(issued["plaintextKey"].as_str().unwrap().to_owned()),
        ..owner.clone()
    };
    let arguments =
        json!({ "contract": crate::hosted_support::contract(), "generator": "standard", "context": "orders" });

    // The caller's own key does not pay for the org's app: the org has none.
    owner
        .ok("svc_ops_set_provider_key", set("sk-caller-own-3333", None))
        .await;
    shop.refused("svc_ops_generate_blueprint", arguments.clone(), "missing_credentials")
        .await;
    assert_eq!(fake.request_count(), 0, "nothing reached the provider");

    let org_key = "sk-org-exact-4444";
    owner.ok("svc_ops_set_provider_key", set(org_key, Some(&org_id))).await;
    let generated = shop.ok("svc_ops_generate_blueprint", arguments).await;
    assert_eq!(generated["source"]["kind"], "llm", "{generated}");
    let credentials: Vec<Option<String>> = fake.requests().into_iter().map(|r| r.credential).collect();
    assert_eq!(
        credentials,
        [Some(format!("Bearer {org_key}"))],
        "the provider received exactly the org's key"
    );
}
