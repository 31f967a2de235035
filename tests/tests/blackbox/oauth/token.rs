//! `POST /oauth/token`: the code grant, its bindings (client, redirect URI, PKCE, resource), a
//! code's single use and lifetime, and the key it yields on `/mcp` until revoked.

use reqwest::StatusCode;
use serde_json::json;
use svc_tests::{Auth, Backend};

use crate::oauth::support::{CHALLENGE, OAuthApp, VERIFIER, with};

oauth_scenarios!(Auth::Strict =>
    the_token_is_a_listed_key_that_works_until_revoked,
    a_client_that_connects_again_keeps_one_active_key,
    a_client_connected_to_the_server_and_to_an_app_keeps_a_key_for_each,
    a_code_is_single_use_and_a_replay_revokes_its_key,
    pkce_is_verified,
    the_resource_must_match_the_authorization,
    token_request_errors,
    a_database_dump_holds_no_usable_token,
);

async fn the_token_is_a_listed_key_that_works_until_revoked(app: OAuthApp) {
    let client_id = app.client("Claude Desktop").await;
    let code = app.code_for(&app.request(&client_id)).await;
    let (status, headers, token) = app.token(&app.token_form(&client_id, &code)).await;
    assert_eq!(status, StatusCode::OK, "{token}");
    assert_eq!(headers["cache-control"], "no-store");
    let access_token = token["access_token"].as_str().unwrap().to_owned();
    assert_eq!(
        token,
        json!({ "access_token": access_token, "token_type": "Bearer", "scope": "mcp" }),
        "no refresh_token, no expires_in"
    );
    assert_eq!(app.mcp_status(&access_token).await, StatusCode::OK);

    let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
    let rows: Vec<_> = keys["keys"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|k| k["name"] == "Claude Desktop")
        .collect();
    assert_eq!(rows.len(), 1, "one row per connected client: {keys}");
    assert_eq!(rows[0]["status"], "active");
    assert!(rows[0].get("appId").is_none(), "a universal key: {}", rows[0]);

    app.ops("svc_ops_revoke_connector_key", json!({ "keyId": rows[0]["id"] }))
        .await;
    assert_eq!(app.mcp_status(&access_token).await, StatusCode::UNAUTHORIZED);
}

/// Document 2: each connected client is one row of the key list, and re-authentication is one
/// OAuth round trip. A second redeemed code for the same client and owner revokes the key of
/// the first, so the first token stops working and one active row remains.
async fn a_client_that_connects_again_keeps_one_active_key(app: OAuthApp) {
    let client_id = app.client("Reconnecting host").await;
    let other_client = app.client("Another host").await;
    let mut tokens = Vec::new();
    for client in [&client_id, &other_client, &client_id] {
        let code = app.code_for(&app.request(client)).await;
        let (status, _, token) = app.token(&app.token_form(client, &code)).await;
        assert_eq!(status, StatusCode::OK, "{token}");
        tokens.push(token["access_token"].as_str().unwrap().to_owned());
    }
    assert_eq!(
        app.mcp_status(&tokens[0]).await,
        StatusCode::UNAUTHORIZED,
        "the replaced token"
    );
    assert_eq!(
        app.mcp_status(&tokens[1]).await,
        StatusCode::OK,
        "another client's token"
    );
    assert_eq!(app.mcp_status(&tokens[2]).await, StatusCode::OK, "the new token");

    let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
    let statuses = |name: &str| -> Vec<String> {
        keys["keys"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["name"] == name)
            .map(|k| k["status"].as_str().unwrap().to_owned())
            .collect()
    };
    let mut reconnecting = statuses("Reconnecting host");
    reconnecting.sort();
    assert_eq!(reconnecting, ["active", "revoked"], "{keys}");
    assert_eq!(statuses("Another host"), ["active"], "{keys}");
}

/// A host that reuses one `client_id` for several connectors (the whole server, and one app's
/// endpoint) holds one key per connection: reconnecting one revokes only that one's earlier key.
async fn a_client_connected_to_the_server_and_to_an_app_keeps_a_key_for_each(app: OAuthApp) {
    let client_id = app.client("Multi-connector host").await;
    let app_resource = format!("{}/apps/{}/mcp", app.issuer(), app.default_app_id().await);
    let connect = |resource: Option<String>| {
        let (app, client_id) = (&app, &client_id);
        async move {
            let request = with(&app.request(client_id), "resource", resource.as_deref());
            let code = app.code_for(&request).await;
            let form = with(&app.token_form(client_id, &code), "resource", resource.as_deref());
            let (status, _, token) = app.token(&form).await;
            assert_eq!(status, StatusCode::OK, "{token}");
            token["access_token"].as_str().unwrap().to_owned()
        }
    };
    let server = connect(None).await;
    let per_app = connect(Some(app_resource.clone())).await;
    assert_eq!(
        app.mcp_status(&server).await,
        StatusCode::OK,
        "the other connection's key stays"
    );
    assert_eq!(app.mcp_status(&per_app).await, StatusCode::OK);

    let per_app_again = connect(Some(app_resource)).await;
    assert_eq!(app.mcp_status(&per_app).await, StatusCode::UNAUTHORIZED, "replaced");
    assert_eq!(app.mcp_status(&per_app_again).await, StatusCode::OK);
    assert_eq!(app.mcp_status(&server).await, StatusCode::OK, "not the same connection");
}

/// The earlier key is revoked as every revocation is (announced on the bus): a replica that
/// holds it in its cache refuses it too, within a second.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_reconnection_on_one_replica_revokes_the_earlier_token_on_another() {
    let Some(app) = OAuthApp::spawn("oauth_reconnect_replicas", Backend::Postgres, Auth::Strict, |_| {}).await else {
        return;
    };
    let other = app.app.replica().await;
    let client_id = app.client("Replicated host").await;
    let connect = || async {
        let code = app.code_for(&app.request(&client_id)).await;
        let (status, _, token) = app.token(&app.token_form(&client_id, &code)).await;
        assert_eq!(status, StatusCode::OK, "{token}");
        token["access_token"].as_str().unwrap().to_owned()
    };
    let first = connect().await;
    let on_other = |bearer: String| {
        let url = format!("{}/mcp", other.base);
        let http = app.http.clone();
        async move {
            http.post(url)
                .bearer_auth(bearer)
                .header("accept", "application/json, text/event-stream")
                .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }))
                .send()
                .await
                .unwrap()
                .status()
        }
    };
    // Twice: the second answer comes from the other replica's cache.
    assert_eq!(on_other(first.clone()).await, StatusCode::OK);
    assert_eq!(on_other(first.clone()).await, StatusCode::OK);

    let second = connect().await;
    let reconnected_at = std::time::Instant::now();
    assert_eq!(app.mcp_status(&first).await, StatusCode::UNAUTHORIZED);
    while on_other(first.clone()).await != StatusCode::UNAUTHORIZED {
        assert!(
            reconnected_at.elapsed() < std::time::Duration::from_secs(1),
            "the other replica still accepts the replaced token"
        );
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    assert_eq!(on_other(second).await, StatusCode::OK);
}

async fn a_code_is_single_use_and_a_replay_revokes_its_key(app: OAuthApp) {
    let client_id = app.client("Replayer").await;
    let code = app.code_for(&app.request(&client_id)).await;
    let form = app.token_form(&client_id, &code);
    let (status, _, token) = app.token(&form).await;
    assert_eq!(status, StatusCode::OK);
    let access_token = token["access_token"].as_str().unwrap();
    assert_eq!(app.mcp_status(access_token).await, StatusCode::OK);
    let (status, _, replay) = app.token(&form).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(replay["error"], "invalid_grant", "{replay}");
    assert_eq!(
        app.mcp_status(access_token).await,
        StatusCode::UNAUTHORIZED,
        "a replayed code revokes the key it delivered (RFC 6749 section 4.1.2)"
    );
}

async fn pkce_is_verified(app: OAuthApp) {
    let client_id = app.client("PKCE").await;
    let wrong = "x".repeat(43);
    let rows = [
        (Some(wrong.as_str()), "invalid_grant"),
        (Some(CHALLENGE), "invalid_grant"),
        (Some(&VERIFIER[..42]), "invalid_grant"),
        (None, "invalid_request"),
    ];
    for (verifier, error) in rows {
        let code = app.code_for(&app.request(&client_id)).await;
        let form = with(&app.token_form(&client_id, &code), "code_verifier", verifier);
        let (status, _, answer) = app.token(&form).await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{verifier:?}");
        assert_eq!(answer["error"], error, "{verifier:?}: {answer}");
        if verifier.is_some() {
            let (_, _, again) = app.token(&app.token_form(&client_id, &code)).await;
            assert_eq!(again["error"], "invalid_grant", "a failed attempt burns the code");
        }
    }
}

async fn the_resource_must_match_the_authorization(app: OAuthApp) {
    let client_id = app.client("Resources").await;
    let mcp = format!("{}/mcp", app.issuer());
    let app_id = app.default_app_id().await;
    let per_app = format!("{}/apps/{app_id}", app.issuer());
    // The form the per-app protected-resource metadata names.
    let per_app_endpoint = format!("{per_app}/mcp");
    let rows = [
        (Some(per_app_endpoint.as_str()), Some(per_app_endpoint.as_str()), Ok(())),
        (Some(per_app_endpoint.as_str()), None, Ok(())),
        (
            Some(per_app_endpoint.as_str()),
            Some(per_app.as_str()),
            Err("invalid_target"),
        ),
        (None, Some(per_app_endpoint.as_str()), Err("invalid_target")),
        (Some(mcp.as_str()), Some(per_app.as_str()), Err("invalid_target")),
        (Some(per_app.as_str()), Some(mcp.as_str()), Err("invalid_target")),
        (
            Some(mcp.as_str()),
            Some("https://evil.example/mcp"),
            Err("invalid_target"),
        ),
        (None, Some(per_app.as_str()), Err("invalid_target")),
        (Some(mcp.as_str()), None, Ok(())),
        (Some(mcp.as_str()), Some(mcp.as_str()), Ok(())),
        (None, Some(mcp.as_str()), Ok(())),
        (None, None, Ok(())),
    ];
    for (authorized, presented, expected) in rows {
        let code = app
            .code_for(&with(&app.request(&client_id), "resource", authorized))
            .await;
        let form = with(&app.token_form(&client_id, &code), "resource", presented);
        let (status, _, answer) = app.token(&form).await;
        match expected {
            Ok(()) => assert_eq!(status, StatusCode::OK, "{authorized:?} {presented:?}: {answer}"),
            Err(error) => {
                assert_eq!(status, StatusCode::BAD_REQUEST, "{authorized:?} {presented:?}");
                assert_eq!(answer["error"], error, "{authorized:?} {presented:?}");
            }
        }
    }
}

async fn token_request_errors(app: OAuthApp) {
    let client_id = app.client("Errors").await;
    let other_client = app.client("Other").await;
    type Change<'a> = Box<dyn Fn(&[(String, String)]) -> Vec<(String, String)> + 'a>;
    let rows: Vec<(&str, Change, StatusCode, &str)> = vec![
        (
            "refresh grant",
            Box::new(|f| with(f, "grant_type", Some("refresh_token"))),
            StatusCode::BAD_REQUEST,
            "unsupported_grant_type",
        ),
        (
            "no grant_type",
            Box::new(|f| with(f, "grant_type", None)),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            "no code",
            Box::new(|f| with(f, "code", None)),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            "no redirect_uri",
            Box::new(|f| with(f, "redirect_uri", None)),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            "no client_id",
            Box::new(|f| with(f, "client_id", None)),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
        (
            "unknown client",
            Box::new(|f| with(f, "client_id", Some("no-such-client"))),
            StatusCode::UNAUTHORIZED,
            "invalid_client",
        ),
        (
            "another client",
            Box::new(|f| with(f, "client_id", Some(&other_client))),
            StatusCode::BAD_REQUEST,
            "invalid_grant",
        ),
        (
            "unknown code",
            Box::new(|f| with(f, "code", Some("not-a-code"))),
            StatusCode::BAD_REQUEST,
            "invalid_grant",
        ),
        (
            "redirect_uri with a trailing slash",
            Box::new(|f| with(f, "redirect_uri", Some("http://127.0.0.1:47613/callback/"))),
            StatusCode::BAD_REQUEST,
            "invalid_grant",
        ),
        (
            "code sent twice",
            Box::new(|f| {
                let mut twice = f.to_vec();
                twice.push(("code".into(), "again".into()));
                twice
            }),
            StatusCode::BAD_REQUEST,
            "invalid_request",
        ),
    ];
    for (what, change, status, error) in rows {
        let code = app.code_for(&app.request(&client_id)).await;
        let (got, headers, answer) = app.token(&change(&app.token_form(&client_id, &code))).await;
        assert_eq!(got, status, "{what}: {answer}");
        assert_eq!(answer["error"], error, "{what}: {answer}");
        assert_eq!(headers["cache-control"], "no-store", "{what}");
    }
}

#[tokio::test]
async fn an_expired_code_is_refused() {
    let app = OAuthApp::spawn("expired_code", Backend::Sqlite, Auth::Strict, |s| {
        s.oauth.code_lifetime_seconds = 1;
    })
    .await
    .unwrap();
    let client_id = app.client("Slow host").await;
    let code = app.code_for(&app.request(&client_id)).await;
    tokio::time::sleep(std::time::Duration::from_millis(1200)).await;
    let (status, _, answer) = app.token(&app.token_form(&client_id, &code)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["error"], "invalid_grant", "{answer}");
    assert!(
        answer["error_description"].as_str().unwrap().contains("expired"),
        "{answer}"
    );
}

// The sweep runs as often as a code lives (at least every second).
oauth_scenarios!(Auth::Strict, |s: &mut svc::Settings| s.oauth.code_lifetime_seconds = 1 =>
    a_code_left_unredeemed_has_its_key_revoked_once_it_expires,
);

async fn a_code_left_unredeemed_has_its_key_revoked_once_it_expires(app: OAuthApp) {
    let client_id = app.client("Vanishing host").await;
    let code = app.code_for(&app.request(&client_id)).await;
    let key_status = || async {
        let keys = app.ops("svc_ops_list_connector_keys", json!({})).await;
        let named: Vec<_> = keys["keys"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|k| k["name"] == "Vanishing host")
            .map(|k| k["status"].as_str().unwrap().to_owned())
            .collect();
        assert_eq!(named.len(), 1, "the key minted at consent: {keys}");
        named[0].clone()
    };
    assert_eq!(key_status().await, "active", "the code may still be redeemed");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    while key_status().await == "active" {
        assert!(
            std::time::Instant::now() < deadline,
            "the key of an expired, unredeemed code is still active"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    assert_eq!(key_status().await, "revoked");
    let (status, _, answer) = app.token(&app.token_form(&client_id, &code)).await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(answer["error"], "invalid_grant", "{answer}");
    assert!(
        answer["error_description"].as_str().unwrap().contains("expired"),
        "a late redemption is told the code expired: {answer}"
    );
}

/// What a copy of the database holds about a code: nothing that is, or opens, the bearer.
async fn a_database_dump_holds_no_usable_token(app: OAuthApp) {
    use sea_orm::{ConnectionTrait, Database, Statement};
    let client_id = app.client("Dumped").await;
    let code = app.code_for(&app.request(&client_id)).await;
    let (status, _, token) = app.token(&app.token_form(&client_id, &code)).await;
    assert_eq!(status, StatusCode::OK, "{token}");
    let access_token = token["access_token"].as_str().unwrap().to_owned();

    let db = Database::connect(app.app.settings.database_url()).await.unwrap();
    let backend = db.get_database_backend();
    let columns = [
        "code_hash",
        "client_id",
        "redirect_uri",
        "code_challenge",
        "key_id",
        "key_owner_id",
        "sealed_token",
    ];
    let rows = db
        .query_all_raw(Statement::from_string(
            backend,
            format!("SELECT {} FROM oauth_authorization_codes", columns.join(", ")),
        ))
        .await
        .unwrap();
    assert_eq!(rows.len(), 1, "the one code");
    let secret_part = access_token.trim_start_matches("svc_user_");
    for column in columns {
        let value: String = rows[0].try_get("", column).unwrap();
        for form in [access_token.clone(), secret_part.to_owned(), hex::encode(&access_token)] {
            assert!(!value.contains(&form), "{column} holds the token");
        }
        assert_eq!(
            app.mcp_status(&value).await,
            StatusCode::UNAUTHORIZED,
            "{column} is not a bearer"
        );
    }
    let sealed: String = rows[0].try_get("", "sealed_token").unwrap();
    assert_ne!(
        sealed.len(),
        access_token.len() * 2,
        "an AEAD seal is longer than the token: it carries a tag"
    );
    db.close().await.ok();
}
