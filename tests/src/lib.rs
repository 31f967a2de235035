//! `TestApp`: a real server on a free port, with request helpers, for black-box tests.
//!
//! Every scenario runs on SQLite (a fresh file database) and on PostgreSQL when
//! `SVC_TEST_DATABASE_URL` is set (a fresh database created there and dropped afterwards). Unset,
//! the PostgreSQL variants print `skipped: <name> (SVC_TEST_DATABASE_URL unset)` and pass; set but
//! unreachable, they fail. List scenarios with [`on_every_backend!`]:
//!
//! ```ignore
//! svc_tests::on_every_backend!(renders_a_card);
//! async fn renders_a_card(app: svc_tests::TestApp) { /* ... */ }
//! ```

pub mod external;
pub mod live;
pub mod nats;
pub mod process;

use std::path::PathBuf;

use reqwest::StatusCode;
use sea_orm::{ConnectionTrait, Database};
use serde_json::{Value, json};
use svc::{Application, Settings};
use tokio::sync::oneshot;

pub const POSTGRES_URL_VAR: &str = "SVC_TEST_DATABASE_URL";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Backend {
    Sqlite,
    Postgres,
}

/// How the server authenticates.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Auth {
    DevAllowAll,
    Strict,
}

pub struct TestApp {
    pub base: String,
    pub client: reqwest::Client,
    pub bearer: String,
    pub data_dir: PathBuf,
    /// The boot pair code, in strict mode.
    pub pair_code: Option<String>,
    /// What this server was started with, so a replica can share its database and secret.
    pub settings: Settings,
    shutdown: Option<oneshot::Sender<()>>,
    postgres: Option<PostgresDatabase>,
}

/// A database created for one test, dropped when the test ends (even on panic).
pub struct PostgresDatabase {
    admin_url: String,
    name: String,
}

impl PostgresDatabase {
    /// An empty database of its own, for tests that start their servers themselves; `None` (and
    /// a `skipped:` line) when `SVC_TEST_DATABASE_URL` is unset.
    pub async fn create(test: &str) -> Option<Self> {
        create_postgres_database(test).await
    }

    pub fn url(&self) -> String {
        database_url_with_name(&self.admin_url, &self.name)
    }
}

impl Drop for PostgresDatabase {
    fn drop(&mut self) {
        let (url, name) = (self.admin_url.clone(), self.name.clone());
        // Drop runs inside the test's runtime; a separate thread gets a runtime of its own.
        let _ = std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .ok()?;
            rt.block_on(async {
                let db = Database::connect(&url).await.ok()?;
                db.execute_unprepared(&format!("DROP DATABASE IF EXISTS \"{name}\" WITH (FORCE)"))
                    .await
                    .ok()
            })
        })
        .join();
    }
}

fn database_url_with_name(admin_url: &str, name: &str) -> String {
    let (without_query, query) = admin_url
        .split_once('?')
        .map_or((admin_url, None), |(a, q)| (a, Some(q)));
    let base = without_query.rsplit_once('/').map_or(without_query, |(b, _)| b);
    match query {
        Some(q) => format!("{base}/{name}?{q}"),
        None => format!("{base}/{name}"),
    }
}

/// A fresh PostgreSQL database for one test (a spawned binary's `--database-url`); `None`, after
/// printing `skipped: <test>`, when `SVC_TEST_DATABASE_URL` is unset.
pub async fn create_postgres_database(test: &str) -> Option<PostgresDatabase> {
    let Ok(admin_url) = std::env::var(POSTGRES_URL_VAR) else {
        println!("skipped: {test} (SVC_TEST_DATABASE_URL unset)");
        return None;
    };
    let name = format!("svc_bb_{}", uuid::Uuid::new_v4().simple());
    let admin = Database::connect(&admin_url)
        .await
        .unwrap_or_else(|e| panic!("{POSTGRES_URL_VAR}={admin_url} is set but unreachable: {e}"));
    admin
        .execute_unprepared(&format!("CREATE DATABASE \"{name}\""))
        .await
        .expect("create test database");
    Some(PostgresDatabase { admin_url, name })
}

/// A database for a server process a test starts itself: a fresh PostgreSQL database (dropped
/// with this value) or a SQLite file in `data_dir`.
pub struct ScratchDatabase {
    pub url: String,
    _postgres: Option<PostgresDatabase>,
}

impl ScratchDatabase {
    /// `None` when the backend is PostgreSQL and `SVC_TEST_DATABASE_URL` is unset.
    pub async fn create(test: &str, backend: Backend, data_dir: &std::path::Path) -> Option<Self> {
        match backend {
            Backend::Sqlite => Some(Self {
                url: format!("sqlite://{}?mode=rwc", data_dir.join("svc.db").display()),
                _postgres: None,
            }),
            Backend::Postgres => {
                let pg = create_postgres_database(test).await?;
                Some(Self {
                    url: database_url_with_name(&pg.admin_url, &pg.name),
                    _postgres: Some(pg),
                })
            }
        }
    }
}

pub fn temp_dir(prefix: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

impl TestApp {
    /// Starts a server; `None` when the backend is not available (PostgreSQL unset).
    pub async fn spawn(test: &str, backend: Backend, auth: Auth) -> Option<Self> {
        Self::spawn_configured(test, backend, auth, |_| {}).await
    }

    /// Like [`TestApp::spawn`], with settings changed by `configure` before the server starts.
    pub async fn spawn_configured(
        test: &str,
        backend: Backend,
        auth: Auth,
        configure: impl FnOnce(&mut Settings),
    ) -> Option<Self> {
        let data_dir = temp_dir("svc-bb");
        let postgres = match backend {
            Backend::Sqlite => None,
            Backend::Postgres => Some(create_postgres_database(test).await?),
        };
        let mut settings = Settings::load(None).expect("default settings");
        settings.server.port = 0;
        settings.server.data_dir = data_dir.clone();
        settings.server.dev_allow_all = auth == Auth::DevAllowAll;
        if let Some(pg) = &postgres {
            settings.server.database_url = database_url_with_name(&pg.admin_url, &pg.name);
        }
        // Replicas of one deployment share the wsToken secret.
        settings.server.ws_secret = "svc-tests-shared-secret-3f0c9a7d51be4e2a8c6d".into();
        configure(&mut settings);
        let (base, pair_code, shutdown) = start(&settings).await;

        let bearer = match auth {
            Auth::DevAllowAll => "dev-bearer".to_owned(),
            Auth::Strict => {
                let (_, plaintext) = svc::keys_file::KeysFile::in_data_dir(&data_dir)
                    .mint(Some("test".into()), chrono_now())
                    .expect("mint");
                plaintext
            }
        };
        Some(Self {
            base,
            client: reqwest::Client::new(),
            bearer,
            data_dir,
            pair_code,
            settings,
            shutdown: Some(shutdown),
            postgres,
        })
    }

    /// A second server on the same database with the same secret: another replica.
    pub async fn replica(&self) -> Replica {
        let mut settings = self.settings.clone();
        settings.server.data_dir = temp_dir("svc-replica");
        let (base, _, shutdown) = start(&settings).await;
        Replica {
            base,
            data_dir: settings.server.data_dir,
            shutdown: Some(shutdown),
        }
    }

    /// Stops this server and starts it again on the same data directory and database, with its
    /// settings changed by `configure` (a restart, a rotated secret); `base` follows the new port.
    pub async fn restart(&mut self, configure: impl FnOnce(&mut Settings)) {
        self.stop_server();
        configure(&mut self.settings);
        let (base, pair_code, shutdown) = start(&self.settings).await;
        self.base = base;
        self.pair_code = pair_code;
        self.shutdown = Some(shutdown);
    }

    /// Stops this server (graceful) but keeps its database for the replicas.
    pub fn stop_server(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }

    pub fn mcp_url(&self) -> String {
        format!("{}/mcp", self.base)
    }

    /// POSTs a raw body to `/mcp` with the given bearer (or none).
    pub async fn post_raw(
        &self,
        bearer: Option<&str>,
        body: String,
    ) -> (StatusCode, reqwest::header::HeaderMap, Value) {
        let mut req = self
            .client
            .post(self.mcp_url())
            .header("content-type", "application/json")
            .header("accept", "application/json, text/event-stream")
            .body(body);
        if let Some(b) = bearer {
            req = req.bearer_auth(b);
        }
        let resp = req.send().await.expect("request");
        let status = resp.status();
        let headers = resp.headers().clone();
        let text = resp.text().await.expect("body");
        let json = if text.is_empty() {
            Value::Null
        } else {
            serde_json::from_str(&text).unwrap_or(Value::String(text))
        };
        (status, headers, json)
    }

    /// A JSON-RPC request as the test's own caller; returns status and body.
    pub async fn rpc(&self, method: &str, params: Value) -> (StatusCode, Value) {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": method, "params": params }).to_string();
        let (status, _, json) = self.post_raw(Some(&self.bearer), body).await;
        (status, json)
    }

    /// `tools/call`; returns the whole JSON-RPC response body.
    pub async fn call(&self, tool: &str, arguments: Value) -> Value {
        self.rpc("tools/call", json!({ "name": tool, "arguments": arguments }))
            .await
            .1
    }

    /// `tools/call` that must succeed without `isError`; returns `structuredContent`.
    pub async fn tool_ok(&self, tool: &str, arguments: Value) -> Value {
        let body = self.call(tool, arguments).await;
        let result = &body["result"];
        assert!(
            result.is_object() && result.get("isError").is_none(),
            "{tool} failed: {body}"
        );
        result["structuredContent"].clone()
    }

    /// `tools/call` that must answer a JSON-RPC error; returns `error`.
    pub async fn tool_rpc_error(&self, tool: &str, arguments: Value) -> Value {
        let body = self.call(tool, arguments).await;
        assert!(
            body["error"].is_object(),
            "{tool} should fail with a JSON-RPC error: {body}"
        );
        body["error"].clone()
    }

    /// `tools/call` that must answer an error result (`isError: true`); returns `structuredContent`.
    pub async fn tool_error_result(&self, tool: &str, arguments: Value) -> Value {
        let body = self.call(tool, arguments).await;
        assert_eq!(
            body["result"]["isError"],
            json!(true),
            "{tool} should be an error result: {body}"
        );
        body["result"]["structuredContent"].clone()
    }

    /// Handshake + render of `contract` with `props`; returns the render's structuredContent.
    pub async fn render(&self, intent: &str, contract: Value, props: Value) -> Value {
        let hs = self
            .tool_ok(
                "svc_handshake",
                json!({ "intent": intent, "blueprintDraft": { "contract": contract } }),
            )
            .await;
        self.tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": props }),
        )
        .await
    }

    pub fn is_postgres(&self) -> bool {
        self.postgres.is_some()
    }
}

impl Drop for TestApp {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// Builds and runs a server; returns its URL, pair code and shutdown trigger.
async fn start(settings: &Settings) -> (String, Option<String>, oneshot::Sender<()>) {
    let app = Application::build(settings).await.expect("server starts");
    let (base, pair_code) = (app.base_url.clone(), app.pair_code.clone());
    let (tx, rx) = oneshot::channel::<()>();
    tokio::spawn(async move {
        let _ = app
            .run_until(async move {
                let _ = rx.await;
            })
            .await;
    });
    (base, pair_code, tx)
}

/// Another replica of a [`TestApp`]'s deployment; stopped when dropped.
pub struct Replica {
    pub base: String,
    data_dir: PathBuf,
    shutdown: Option<oneshot::Sender<()>>,
}

impl Replica {
    /// Stops the replica (graceful: in-flight requests finish).
    pub fn stop(mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
    }
}

impl Drop for Replica {
    fn drop(&mut self) {
        if let Some(tx) = self.shutdown.take() {
            let _ = tx.send(());
        }
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

fn chrono_now() -> chrono::DateTime<chrono::Utc> {
    chrono::Utc::now()
}

/// Generates `<scenario>::sqlite` and `<scenario>::postgres` tests for `async fn scenario(Backend)`,
/// for scenarios that configure their own servers.
#[macro_export]
macro_rules! on_both_backends {
    ($($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn sqlite() {
                    super::$scenario($crate::Backend::Sqlite).await;
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn postgres() {
                    super::$scenario($crate::Backend::Postgres).await;
                }
            }
        )+
    };
}

/// Generates `<scenario>::sqlite` and `<scenario>::postgres` tests for `async fn scenario(TestApp)`.
#[macro_export]
macro_rules! on_every_backend {
    ($auth:expr => $($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[allow(unused_imports)]
                use super::*;

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    if let Some(app) = $crate::TestApp::spawn(stringify!($scenario), $crate::Backend::Sqlite, $auth).await {
                        super::$scenario(app).await;
                    }
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(app) = $crate::TestApp::spawn(stringify!($scenario), $crate::Backend::Postgres, $auth).await {
                        super::$scenario(app).await;
                    }
                }
            }
        )+
    };
}
