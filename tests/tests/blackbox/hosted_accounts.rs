//! Hosted accounts from the operator's command line: `svc users create` (password piped in or
//! generated and shown once) and `svc keys mint --database-url --user` (a key of the account,
//! accepted at once by every replica).

use crate::hosted_support;

use reqwest::StatusCode;
use serde_json::{Value, json};

use hosted_support::accounts::{create_user, failure, hosted_strict_app, mint_key, svc};

async fn ops(base: &str, bearer: &str, tool: &str, arguments: Value) -> (StatusCode, Value) {
    let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let resp = reqwest::Client::new()
        .post(format!("{base}/ops"))
        .bearer_auth(bearer)
        .header("accept", "application/json, text/event-stream")
        .json(&body)
        .send()
        .await
        .unwrap();
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn users_create_takes_a_piped_password_or_generates_one_and_refuses_bad_input() {
    let Some(app) = hosted_strict_app("users_create", |_| {}).await else {
        return;
    };
    let db = app.settings.database_url();

    // A generated password is printed once, as the last line.
    let out = svc(
        &["users", "create", "--database-url", &db, "--email", "gen@example.org"],
        "",
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let stdout = String::from_utf8(out.stdout).unwrap();
    let lines: Vec<&str> = stdout.lines().collect();
    assert!(lines[0].starts_with("created account usr_"), "{stdout}");
    assert!(lines[0].ends_with(" for gen@example.org"), "{stdout}");
    let generated = lines.last().unwrap();
    assert_eq!(generated.len(), 24, "{stdout}");
    assert!(generated.chars().all(|c| c.is_ascii_alphanumeric()));

    // Piped: nothing secret printed.
    let out = svc(
        &["users", "create", "--database-url", &db, "--email", "Piped@Example.org"],
        "a long enough passphrase\n",
    );
    assert!(out.status.success());
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert_eq!(stdout.lines().count(), 1, "{stdout}");
    assert!(!stdout.contains("passphrase"));

    let refusals: [(&str, &str, String); 3] = [
        (
            "piped@EXAMPLE.org",
            "another long passphrase",
            "svc: cannot create the account piped@EXAMPLE.org: an account with this email exists".into(),
        ),
        (
            "not-an-email",
            "another long passphrase",
            "svc: cannot create the account not-an-email: `not-an-email` is not an email address".into(),
        ),
        (
            "short@example.org",
            "too short",
            "svc: cannot create the account short@example.org: a password must be at least 12 characters".into(),
        ),
    ];
    for (email, password, expected) in refusals {
        let out = svc(
            &["users", "create", "--database-url", &db, "--email", email],
            &format!("{password}\n"),
        );
        assert_eq!(failure(&out), (Some(1), expected), "{email}");
        assert!(out.stdout.is_empty());
    }

    // A password hash, never the password, is stored.
    let stored = hosted_support::scalar_text(
        &db,
        "SELECT password_hash FROM accounts WHERE email_key = 'piped@example.org'",
    )
    .await;
    assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{stored}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_key_minted_for_an_account_works_on_every_replica_at_once() {
    let Some(a) = hosted_strict_app("keys_mint_user", |_| {}).await else {
        return;
    };
    let b = a.replica().await;
    let db = a.settings.database_url();
    let user_id = create_user(&db, "ada@example.org", "correct horse battery staple");

    // Both replicas are running before the key exists.
    let key = mint_key(&db, "ADA@example.org", Some("laptop"));
    for base in [&a.base, &b.base] {
        let (status, body) = ops(base, &key, "svc_ops_list_connector_keys", json!({})).await;
        assert_eq!(status, StatusCode::OK, "{base}: {body}");
        let keys = body["result"]["structuredContent"]["keys"].as_array().unwrap().clone();
        assert_eq!(keys.len(), 1, "{body}");
        assert_eq!(keys[0]["name"], "laptop");
        assert!(key.starts_with(&format!("svc_user_{}", keys[0]["apiKeyPrefix"].as_str().unwrap())));
    }
    // The key acts for the account: its wallet is the account's (with its free credit).
    let (_, balance) = ops(&b.base, &key, "svc_ops_get_credit_balance", json!({})).await;
    assert_eq!(balance["result"]["structuredContent"]["balanceCents"], 100, "{balance}");
    let owner = hosted_support::scalar_text(&db, "SELECT owner_user_id FROM connector_keys").await;
    assert_eq!(owner, user_id);

    // The operator tops the account up by its email.
    let out = svc(
        &[
            "credits",
            "grant",
            "--database-url",
            &db,
            "--user",
            "Ada@example.org",
            "--cents",
            "50",
            "--reason",
            "welcome",
        ],
        "",
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let (_, balance) = ops(&a.base, &key, "svc_ops_get_credit_balance", json!({})).await;
    assert_eq!(balance["result"]["structuredContent"]["balanceCents"], 150, "{balance}");
    let out = svc(
        &[
            "credits",
            "grant",
            "--database-url",
            &db,
            "--user",
            "nobody@example.org",
            "--cents",
            "50",
            "--reason",
            "x",
        ],
        "",
    );
    assert_eq!(
        failure(&out),
        (
            Some(1),
            "svc: cannot grant the credit: no account with email nobody@example.org".into()
        )
    );

    // An unknown account is refused in one line.
    let out = svc(
        &["keys", "mint", "--database-url", &db, "--user", "nobody@example.org"],
        "",
    );
    assert_eq!(
        failure(&out),
        (
            Some(1),
            "svc: cannot mint a key: no account with email nobody@example.org".into()
        )
    );
    // `--user` needs `--database-url`.
    let out = svc(&["keys", "mint", "--user", "ada@example.org"], "");
    assert_eq!(out.status.code(), Some(2));
}
