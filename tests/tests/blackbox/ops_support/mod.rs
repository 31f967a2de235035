//! Helpers of the `/ops` black-box tests: a JSON-RPC client of `/ops` and `/mcp` with any bearer,
//! and [`Tenants`], two servers over one database that authenticate two different identities, so
//! every tool can be probed across tenants over real HTTP.

#![allow(dead_code, unused_macros)]

use reqwest::StatusCode;
use sea_orm::{ConnectionTrait, Database, Statement};
use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp};

pub const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

/// A JSON-RPC caller of one server with one bearer.
#[derive(Clone)]
pub struct Client {
    pub base: String,
    pub client: reqwest::Client,
    pub bearer: Option<String>,
}

impl Client {
    pub fn of(app: &TestApp) -> Self {
        Self::with_bearer(app, &app.bearer)
    }

    pub fn with_bearer(app: &TestApp, bearer: &str) -> Self {
        Self {
            base: app.base.clone(),
            client: app.client.clone(),
            bearer: Some(bearer.to_owned()),
        }
    }

    pub fn anonymous(app: &TestApp) -> Self {
        Self {
            bearer: None,
            ..Self::of(app)
        }
    }

    /// A JSON-RPC request to `path` (`/ops` or `/mcp`); returns the HTTP status, headers and body.
    pub async fn post(
        &self,
        path: &str,
        method: &str,
        params: Value,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let body = json!({ "jsonrpc": "2.0", "id": 7, "method": method, "params": params });
        let mut req = self
            .client
            .post(format!("{}{path}", self.base))
            .header("accept", "application/json, text/event-stream")
            .json(&body);
        if let Some(b) = &self.bearer {
            req = req.bearer_auth(b);
        }
        let resp = req.send().await.expect("request");
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let json = serde_json::from_str(&text).unwrap_or(Value::String(text));
        (status, headers, json)
    }

    pub async fn ops(&self, method: &str, params: Value) -> (StatusCode, Value) {
        let (status, _, body) = self.post("/ops", method, params).await;
        (status, body)
    }

    pub async fn mcp(&self, method: &str, params: Value) -> (StatusCode, Value) {
        let (status, _, body) = self.post("/mcp", method, params).await;
        (status, body)
    }

    /// `tools/call` on `/ops`: the whole JSON-RPC body. Every result is checked against the
    /// tool's published `outputSchema`.
    pub async fn call(&self, tool: &str, arguments: Value) -> Value {
        let (status, body) = self
            .ops("tools/call", json!({ "name": tool, "arguments": arguments }))
            .await;
        assert_eq!(status, StatusCode::OK, "{tool}: {body}");
        let url = format!("{}/ops", self.base);
        svc_tests::output_schemas::check(&self.client, &url, self.bearer.as_deref(), tool, &body).await;
        body
    }

    /// A tool call that must succeed; its `structuredContent`.
    pub async fn ok(&self, tool: &str, arguments: Value) -> Value {
        let body = self.call(tool, arguments).await;
        let result = &body["result"];
        assert!(
            result.is_object() && result.get("isError").is_none(),
            "{tool} failed: {body}"
        );
        let text: Value = serde_json::from_str(result["content"][0]["text"].as_str().unwrap()).unwrap();
        assert_eq!(text, result["structuredContent"], "the text is the same JSON");
        result["structuredContent"].clone()
    }

    /// A tool call that must be refused with `code`; its `error` object.
    pub async fn refused(&self, tool: &str, arguments: Value, code: &str) -> Value {
        let body = self.call(tool, arguments).await;
        assert_eq!(
            body["result"]["isError"],
            json!(true),
            "{tool} should be refused: {body}"
        );
        let error = body["result"]["structuredContent"]["error"].clone();
        assert_eq!(error["code"], code, "{tool}: {body}");
        assert!(error["message"].as_str().is_some_and(|m| !m.is_empty()), "{body}");
        error
    }

    /// A tool call that must be -32602 naming `field`; the message.
    pub async fn invalid(&self, tool: &str, arguments: Value, field: &str) -> String {
        let body = self.call(tool, arguments).await;
        assert_eq!(body["error"]["code"], -32602, "{tool} should be invalid params: {body}");
        let message = body["error"]["message"].as_str().unwrap().to_owned();
        assert!(
            message.starts_with(&format!("Invalid params: {field}: ")),
            "{tool}: {message}"
        );
        message
    }

    /// Names of the tools `/ops` lists to this caller.
    pub async fn ops_tool_names(&self) -> Vec<String> {
        let (status, body) = self.ops("tools/list", json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["result"]["tools"]
            .as_array()
            .unwrap_or_else(|| panic!("tools/list: {body}"))
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    }

    /// The agent instructions `/mcp` `initialize` answers this caller.
    pub async fn mcp_instructions(&self) -> String {
        let (status, body) = self.mcp("initialize", json!({ "protocolVersion": "2025-06-18" })).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body["result"]["instructions"].as_str().unwrap().to_owned()
    }
}

/// The caller's default app (the oldest, first listed) as `/ops` lists it.
pub async fn default_app_id(ops: &Client) -> Value {
    ops.ok("svc_ops_list_apps", json!({})).await["apps"][0]["appId"].clone()
}

/// A new app of the caller with `prompt` as its system prompt; its id.
pub async fn app_with_prompt(ops: &Client, name: &str, prompt: &str) -> Value {
    let id = ops.ok("svc_ops_create_app", json!({ "displayName": name })).await["appId"].clone();
    ops.ok(
        "svc_ops_update_app_system_prompt",
        json!({ "appId": id, "systemPrompt": prompt }),
    )
    .await;
    id
}

/// Two servers over one database: `owner` is strict (its keys-file bearer acts for `owner`),
/// `other` runs `--dev-allow-all` (every bearer acts for `builder`). Rows one creates are
/// another tenant's rows to the other.
pub struct Tenants {
    pub owner_app: TestApp,
    pub other_app: TestApp,
    pub database_url: String,
    pub owner: Client,
    pub other: Client,
}

pub async fn tenants(test: &str, backend: Backend) -> Option<Tenants> {
    let mut database_url = String::new();
    let owner_app = TestApp::spawn_configured(test, backend, Auth::Strict, |s| database_url = s.database_url()).await?;
    let shared = database_url.clone();
    let other_app = TestApp::spawn_configured(test, Backend::Sqlite, Auth::DevAllowAll, move |s| {
        s.server.database_url = shared;
    })
    .await?;
    Some(Tenants {
        owner: Client::of(&owner_app),
        other: Client::of(&other_app),
        owner_app,
        other_app,
        database_url,
    })
}

/// Generates a `<scenario>::postgres` test for `async fn scenario(Tenants)`. Not on SQLite: a
/// SQLite file serves one `svc serve` (the second waits, then refuses: it keeps rows in memory),
/// and the tenants are two servers. The tenancy rules are the application's, the same on every
/// backend; the repositories' SQL runs on SQLite in `adapters/sql/tests`.
macro_rules! with_tenants {
    ($($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(t) = super::ops_support::tenants(stringify!($scenario), svc_tests::Backend::Postgres).await {
                        super::$scenario(t).await;
                    }
                }
            }
        )+
    };
}

/// The one integer a query over the shared database answers (a count, a balance).
pub async fn scalar(database_url: &str, sql: &str) -> i64 {
    let db = Database::connect(database_url).await.expect("connect");
    let backend = db.get_database_backend();
    let row = db
        .query_one_raw(Statement::from_string(backend, sql.to_owned()))
        .await
        .expect("query")
        .expect("a row");
    let n: i64 = row.try_get_by_index(0).expect("an integer");
    let _ = db.close().await;
    n
}

/// `svc coupons issue` against the database; its exit status, stdout and stderr.
pub fn issue_coupon_cli(args: &[&str]) -> (bool, String, String) {
    let out = std::process::Command::new(BINARY)
        .args(["coupons", "issue"])
        .args(args)
        .output()
        .expect("run svc coupons issue");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A fresh coupon worth `cents`, issued by the operator command; its code.
pub fn issue_coupon(database_url: &str, cents: i64, expires_at: Option<&str>) -> String {
    let cents = cents.to_string();
    let mut args = vec!["--cents", cents.as_str(), "--database-url", database_url];
    if let Some(t) = expires_at {
        args.extend(["--expires-at", t]);
    }
    let (ok, stdout, stderr) = issue_coupon_cli(&args);
    assert!(ok, "svc coupons issue failed: {stderr}");
    stdout.lines().last().expect("a code line").trim().to_owned()
}

/// RFC 3339 UTC with milliseconds, as every `/ops` time is.
pub fn assert_time(value: &Value) {
    let text = value.as_str().unwrap_or_else(|| panic!("not a time: {value}"));
    assert_eq!(text.len(), 24, "{text}");
    assert!(text.ends_with('Z') && text.as_bytes()[19] == b'.', "{text}");
    assert!(chrono::DateTime::parse_from_rfc3339(text).is_ok(), "{text}");
}
