//! Provider keys in hosted mode, black-box on PostgreSQL: set, listed by `lastFour` only,
//! rotated by setting again, removed idempotently, scoped to their owner; a generation uses
//! exactly the caller's key (the fake provider receives it), never the deployment's; without
//! one `svc_ops_generate_blueprint` is `missing_credentials` and `svc_render` fails with
//! `NO_CREDENTIALS`; `svc hosted rotate-master-key` re-seals every key; a dump of the whole
//! database and the server's debug log never contain a key.

use crate::hosted_support;
use crate::ops_support;

use hosted_support::{handshake, hosted_app, master_key, postgres_available, render};
use ops_support::{BINARY, Client, scalar};
use sea_orm::{ConnectionTrait, Database, Statement};
use serde_json::{Value, json};
use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};
use svc_tests::process::ServerProcess;
use svc_tests::{Auth, Backend, ScratchDatabase, TestApp, temp_dir};

pub const MODEL: &str = "openai:gpt-4.1-mini";
const PLATFORM_KEY: &str = "sk-platform-key-never-used";

pub const GOOD: &str = "import { useProps } from \"@svc/gadgets\";\n\
export default function Card() {\n\
  const { title } = useProps<{ title: string }>();\n\
  return <h2>{title}</h2>;\n\
}";

/// A hosted server whose `openai` provider is `fake` and has a deployment key of its own.
async fn app_with_fake(test: &str, fake: &FakeProvider) -> Option<TestApp> {
    hosted_app(test, |s| use_fake_openai(s, fake)).await
}

/// Settings whose only provider is `fake` (as `openai`, the default model's), with a deployment
/// key a generation must never send; every wallet starts with 1,000 cents.
pub fn use_fake_openai(s: &mut svc::Settings, fake: &FakeProvider) {
    s.hosted.free_credit_cents = 1_000;
    for provider in s.generation.providers.values_mut() {
        provider.api_key_env = "SVC_TEST_UNSET_KEY_VARIABLE".into();
        provider.api_key = String::new();
    }
    let openai = s.generation.providers.get_mut("openai").unwrap();
    openai.base_url = format!("{}/v1", fake.base_url);
    openai.api_key = PLATFORM_KEY.into();
    s.generation.default_model = MODEL.into();
}

fn set(key: &str) -> Value {
    json!({ "provider": "openai", "plaintextKey": key, "label": "work" })
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn keys_are_set_listed_by_last_four_rotated_and_removed_never_echoed() {
    let fake = FakeProvider::start().await;
    let Some(app) = app_with_fake("provider_keys_crud", &fake).await else {
        return;
    };
    let ops = Client::of(&app);
    let secret = "sk-caller-first-abcd1234";
    let body = ops.call("svc_ops_set_provider_key", set(secret)).await;
    assert!(!body.to_string().contains(secret), "the key is never echoed: {body}");
    let summary = ops.ok("svc_ops_set_provider_key", set(secret)).await;
    assert_eq!(summary["provider"], "openai");
    assert_eq!(summary["label"], "work");
    assert_eq!(summary["lastFour"], "1234");
    ops_support::assert_time(&summary["createdAt"]);
    assert!(summary.get("lastUsedAt").is_none(), "{summary}");

    let rotated = ops
        .ok(
            "svc_ops_set_provider_key",
            json!({ "provider": "openai", "plaintextKey": "sk-caller-second-wxyz" }),
        )
        .await;
    assert_eq!(rotated["lastFour"], "wxyz");
    assert!(
        rotated.get("label").is_none(),
        "setting again replaces the key and its label"
    );
    ops.ok(
        "svc_ops_set_provider_key",
        json!({ "provider": "mistral", "plaintextKey": "m-key-0001" }),
    )
    .await;
    let listed = ops.call("svc_ops_list_provider_keys", json!({})).await;
    assert!(!listed.to_string().contains("sk-caller"), "{listed}");
    let keys = ops.ok("svc_ops_list_provider_keys", json!({})).await["keys"].clone();
    let summaries: Vec<(&str, &str)> = keys
        .as_array()
        .unwrap()
        .iter()
        .map(|k| (k["provider"].as_str().unwrap(), k["lastFour"].as_str().unwrap()))
        .collect();
    assert_eq!(summaries, [("openai", "wxyz"), ("mistral", "0001")]);

    // Another identity on the same deployment sees none of them.
    let url = app.settings.database_url();
    let other = TestApp::spawn_configured("provider_keys_other", Backend::Sqlite, Auth::Strict, |s| {
        s.server.database_url = url.clone();
        s.hosted = app.settings.hosted.clone();
    })
    .await
    .unwrap();
    let other_ops = Client::of(&other);
    assert_eq!(
        other_ops.ok("svc_ops_list_provider_keys", json!({})).await,
        json!({ "keys": [] })
    );
    assert_eq!(
        other_ops
            .ok("svc_ops_remove_provider_key", json!({ "provider": "openai" }))
            .await,
        json!({ "deleted": false, "provider": "openai" })
    );

    assert_eq!(
        ops.ok("svc_ops_remove_provider_key", json!({ "provider": "openai" }))
            .await,
        json!({ "deleted": true, "provider": "openai" })
    );
    assert_eq!(
        ops.ok("svc_ops_remove_provider_key", json!({ "provider": "openai" }))
            .await,
        json!({ "deleted": false, "provider": "openai" }),
        "idempotent"
    );

    for (tool, arguments, field) in [
        (
            "svc_ops_set_provider_key",
            json!({ "provider": "ollama", "plaintextKey": "k" }),
            "provider",
        ),
        (
            "svc_ops_set_provider_key",
            json!({ "provider": "openai", "plaintextKey": "" }),
            "plaintextKey",
        ),
        (
            "svc_ops_set_provider_key",
            json!({ "provider": "openai", "plaintextKey": "   " }),
            "plaintextKey",
        ),
        (
            "svc_ops_set_provider_key",
            json!({ "provider": "openai", "plaintextKey": "k", "label": "x".repeat(121) }),
            "label",
        ),
        ("svc_ops_remove_provider_key", json!({ "provider": "acme" }), "provider"),
    ] {
        ops.invalid(tool, arguments, field).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_generation_uses_exactly_the_callers_key_and_none_without_one() {
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(GOOD));
    let Some(app) = app_with_fake("provider_keys_used", &fake).await else {
        return;
    };
    let ops = Client::of(&app);

    // No key of the caller's: the deployment's key is not used either.
    let contract = hosted_support::contract();
    let missing = ops
        .refused(
            "svc_ops_generate_blueprint",
            json!({ "contract": contract, "generator": "standard", "context": "orders" }),
            "missing_credentials",
        )
        .await;
    assert!(missing["message"].as_str().unwrap().contains("openai"), "{missing}");
    let failed = render(
        &app,
        &handshake(&app, "no key card").await,
        json!({ "infra": { "model": MODEL } }),
    )
    .await;
    let failed = &failed["result"]["structuredContent"];
    assert_eq!(failed["outcome"], "failed", "{failed}");
    assert_eq!(failed["error"]["code"], "NO_CREDENTIALS");
    assert!(
        failed["error"]["message"]
            .as_str()
            .unwrap()
            .contains("svc_ops_set_provider_key"),
        "the failure names the fix: {failed}"
    );
    assert_eq!(fake.request_count(), 0, "nothing reached the provider");

    let secret = "sk-caller-exact-5678";
    ops.ok("svc_ops_set_provider_key", set(secret)).await;
    let rendered = render(
        &app,
        &handshake(&app, "keyed card").await,
        json!({ "infra": { "model": MODEL } }),
    )
    .await;
    assert_eq!(
        rendered["result"]["structuredContent"]["outcome"], "rendered",
        "{rendered}"
    );
    let generated = ops
        .ok(
            "svc_ops_generate_blueprint",
            json!({ "contract": contract, "generator": "standard", "context": "orders" }),
        )
        .await;
    assert_eq!(generated["source"]["kind"], "llm");
    let credentials: Vec<Option<String>> = fake.requests().into_iter().map(|r| r.credential).collect();
    assert_eq!(
        credentials,
        [Some(format!("Bearer {secret}")), Some(format!("Bearer {secret}"))],
        "the provider received exactly the caller's key"
    );
    let keys = ops.ok("svc_ops_list_provider_keys", json!({})).await;
    ops_support::assert_time(&keys["keys"][0]["lastUsedAt"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rotating_the_master_key_reseals_every_key_and_generation_still_uses_it() {
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(GOOD));
    let Some(mut app) = app_with_fake("provider_keys_rotation", &fake).await else {
        return;
    };
    let url = app.settings.database_url();
    let secret = "sk-caller-rotated-4242";
    Client::of(&app).ok("svc_ops_set_provider_key", set(secret)).await;
    assert_eq!(
        scalar(&url, "SELECT count(*) FROM provider_keys WHERE master_key_id = 'k1'").await,
        1
    );

    let both = format!("{},{}", master_key("k2", 2), master_key("k1", 1));
    let out = std::process::Command::new(BINARY)
        .args(["hosted", "rotate-master-key", "--database-url", &url])
        .env("SVC_HOSTED__MASTER_KEYS", &both)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    assert!(
        stdout.contains("re-sealed 1 provider key(s) under master key `k2`"),
        "{stdout}"
    );
    assert_eq!(
        scalar(&url, "SELECT count(*) FROM provider_keys WHERE master_key_id = 'k2'").await,
        1
    );

    // The old master key can go: the server with only k2 still opens the key.
    app.restart(|s| s.hosted.master_keys = svc::settings::SecretList::Many(vec![master_key("k2", 2)]))
        .await;
    let rendered = render(
        &app,
        &handshake(&app, "after rotation").await,
        json!({ "infra": { "model": MODEL } }),
    )
    .await;
    assert_eq!(
        rendered["result"]["structuredContent"]["outcome"], "rendered",
        "{rendered}"
    );
    assert_eq!(
        fake.requests()[0].credential.as_deref(),
        Some(&*format!("Bearer {secret}"))
    );

    // Without the key that sealed them, rotation stops and says which key is missing.
    let out = std::process::Command::new(BINARY)
        .args(["hosted", "rotate-master-key", "--database-url", &url])
        .env("SVC_HOSTED__MASTER_KEYS", master_key("k3", 3))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("`k2`"), "{stderr}");
}

/// Every row of every table of the database, as text.
async fn dump(url: &str) -> String {
    let db = Database::connect(url).await.unwrap();
    let backend = db.get_database_backend();
    let tables = db
        .query_all_raw(Statement::from_string(
            backend,
            "SELECT tablename::text FROM pg_tables WHERE schemaname = 'public'".to_owned(),
        ))
        .await
        .unwrap();
    let mut text = String::new();
    for table in tables {
        let name: String = table.try_get_by_index(0).unwrap();
        let rows = db
            .query_all_raw(Statement::from_string(
                backend,
                format!("SELECT t::text FROM \"{name}\" t"),
            ))
            .await
            .unwrap();
        for row in rows {
            let line: String = row.try_get_by_index(0).unwrap();
            text.push_str(&line);
            text.push('\n');
        }
    }
    let _ = db.close().await;
    text
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn neither_a_database_dump_nor_the_debug_log_contains_a_provider_key() {
    if !postgres_available("provider_keys_dump") {
        return;
    }
    let dir = temp_dir("svc-hosted-dump");
    let Some(database) = ScratchDatabase::create("provider_keys_dump", Backend::Postgres, &dir).await else {
        return;
    };
    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::component(GOOD));
    let config = dir.join("hosted.toml");
    std::fs::write(
        &config,
        format!(
            "[hosted]\nenabled = true\nfree_credit_cents = 100\nmaster_keys = [\"{}\"]\n\n\
             [generation.providers.openai]\nwire = \"openai\"\nbase_url = \"{}/v1\"\napi_key = \"{PLATFORM_KEY}\"\n",
            master_key("k1", 9),
            fake.base_url
        ),
    )
    .unwrap();
    let log = dir.join("server.log");
    let server = ServerProcess::start_logging(
        BINARY,
        &dir.join("data"),
        &[
            "--config",
            config.to_str().unwrap(),
            "--database-url",
            &database.url,
            "--dev-allow-all",
        ],
        "debug",
        &log,
    );
    let client = reqwest::Client::new();
    let ops = Client {
        base: server.base.clone(),
        client: client.clone(),
        bearer: Some("dev-bearer".into()),
    };
    let secret = "sk-caller-secret-in-no-dump-31337";
    ops.ok("svc_ops_set_provider_key", set(secret)).await;
    let body = ops
        .mcp(
            "tools/call",
            json!({ "name": "svc_handshake", "arguments": { "intent": "dumped card", "blueprintDraft": { "contract": hosted_support::contract() } } }),
        )
        .await
        .1;
    let handshake_id = body["result"]["structuredContent"]["handshakeId"].clone();
    let rendered = ops
        .mcp(
            "tools/call",
            json!({ "name": "svc_render", "arguments": { "handshakeId": handshake_id, "props": { "title": "x" }, "infra": { "model": MODEL } } }),
        )
        .await
        .1;
    assert_eq!(
        rendered["result"]["structuredContent"]["outcome"], "rendered",
        "{rendered}"
    );
    assert_eq!(
        fake.requests()[0].credential.as_deref(),
        Some(&*format!("Bearer {secret}"))
    );
    server.terminate();

    let dumped = dump(&database.url).await;
    assert!(
        dumped.contains(",1337,"),
        "the dump holds the key's row, with its last four"
    );
    assert!(!dumped.contains(secret), "the database holds the key in plain text");
    assert!(!dumped.contains(&hex_of(secret)), "nor its hex");
    let logged = std::fs::read_to_string(&log).unwrap();
    assert!(
        logged.contains("provider_call") || logged.contains("generation"),
        "the log was written at debug"
    );
    assert!(!logged.contains(secret), "the log holds the key");
}

fn hex_of(text: &str) -> String {
    text.bytes().map(|b| format!("{b:02x}")).collect()
}
