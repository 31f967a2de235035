//! `TestApp`: a real server on a free port, with request helpers, for black-box tests.
//!
//! Every scenario runs on SQLite (a fresh file database) and on PostgreSQL when
//! `SVC_TEST_DATABASE_URL` is set (a fresh database created there and dropped afterwards); the
//! scenarios listed with `mariadb` run on MariaDB too when `SVC_TEST_MARIADB_URL` is set. Unset,
//! those variants print `skipped: <name> (<VAR> unset)` and pass (MariaDB fails instead when
//! `SVC_REQUIRE_MARIADB=1`); set but unreachable, they fail. The databases come from
//! `svc_sql::testing::ScratchDatabase`, the one helper. List scenarios with [`on_every_backend!`]:
//!
//! ```ignore
//! svc_tests::on_every_backend!(Auth::Strict => renders_a_card);
//! svc_tests::on_every_backend!(mariadb, Auth::Strict => renders_a_card);  // and on MariaDB
//! async fn renders_a_card(app: svc_tests::TestApp) { /* ... */ }
//! ```

pub mod external;
pub mod h2;
pub mod live;
pub mod nats;
pub mod output_schemas;
pub mod process;
pub mod raw_http;
pub mod smtp_sink;
pub mod verify_link;

use std::path::PathBuf;

use reqwest::StatusCode;
use serde_json::{Value, json};
use svc::Application;
pub use svc::Settings;
pub use svc_sql::testing::{Backend, POSTGRES_URL_VAR, ScratchDatabase};
use tokio::sync::oneshot;

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
    database: ScratchDatabase,
}

/// `/readyz`'s status once it is 200, or its last status after `limit`: a server answers
/// `/healthz` at once but reports ready only when its blueprint index is built.
pub async fn readiness_within(client: &reqwest::Client, base: &str, limit: std::time::Duration) -> reqwest::StatusCode {
    let started = std::time::Instant::now();
    loop {
        let status = client
            .get(format!("{base}/readyz"))
            .send()
            .await
            .expect("readyz")
            .status();
        if status == reqwest::StatusCode::OK || started.elapsed() >= limit {
            return status;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}
/// serde_json's raw-value marker nested in its own strings, `levels` deep, each text 120 arrays
/// deep: each level is parsed by a reader with a recursion limit of its own, so a few KiB of it
/// took a `Value` parse past any stack (the servers refuse it before parsing; the domain keeps
/// the same builder for the crates' own tests, which black-box tests do not link).
pub fn nested_raw_value_markers(levels: usize) -> String {
    let mut text = format!("{}0{}", "[".repeat(120), "]".repeat(120));
    for _ in 0..levels {
        let inner = serde_json::to_string(&text).unwrap();
        text = format!(
            r#"{}{{"$serde_json::private::RawValue":{inner}}}{}"#,
            "[".repeat(120),
            "]".repeat(120)
        );
    }
    text
}

pub fn temp_dir(prefix: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("{prefix}-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    dir
}

impl TestApp {
    /// Starts a server; `None` when the backend is not available (its server not configured).
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
        let database = ScratchDatabase::create(test, backend, &data_dir).await?;
        let mut settings = Settings::load(None).expect("default settings");
        settings.server.port = 0;
        settings.server.data_dir = data_dir.clone();
        settings.server.dev_allow_all = auth == Auth::DevAllowAll;
        if backend != Backend::Sqlite {
            settings.server.database_url = database.url.clone();
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
            database,
        })
    }

    /// A second server on the same database with the same secret: another replica.
    pub async fn replica(&self) -> Replica {
        let mut settings = self.settings.clone();
        settings.server.data_dir = temp_dir("svc-replica");
        let (base, pair_code, shutdown) = start(&settings).await;
        Replica {
            base,
            pair_code,
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
    /// Every result is checked against the tool's published `outputSchema`.
    pub async fn call(&self, tool: &str, arguments: Value) -> Value {
        let body = self
            .rpc("tools/call", json!({ "name": tool, "arguments": arguments }))
            .await
            .1;
        output_schemas::check(&self.client, &self.mcp_url(), Some(&self.bearer), tool, &body).await;
        body
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
        self.database.backend == Backend::Postgres
    }

    /// The backend this server's database runs on.
    pub fn backend(&self) -> Backend {
        self.database.backend
    }

    /// Whether [`TestApp::replica`] can start beside this server: a server database not claimed
    /// by a sole server.
    pub fn can_have_replicas(&self) -> bool {
        self.backend() != Backend::Sqlite && !self.settings.server.database_sole_server
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
    /// The pair code this replica printed (strict mode).
    pub pair_code: Option<String>,
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
/// for scenarios that configure their own servers; with `mariadb, ` first, `<scenario>::mariadb`
/// too.
#[macro_export]
macro_rules! on_both_backends {
    (mariadb, $($scenario:ident),+ $(,)?) => {
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

                #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
                async fn mariadb() {
                    super::$scenario($crate::Backend::Mariadb).await;
                }
            }
        )+
    };
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

/// Generates `<scenario>::sqlite` and `<scenario>::postgres` tests for `async fn scenario(TestApp)`;
/// with `mariadb, ` before the auth mode, a `<scenario>::mariadb` test too, and
/// `<scenario>::postgres_sole`: PostgreSQL claimed by a sole server, which keeps the read paths'
/// rows in memory (`server.database_sole_server`). `sole, ` adds only the latter.
#[macro_export]
macro_rules! on_every_backend {
    (mariadb, $auth:expr => $($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[allow(unused_imports)]
                use super::*;

                $crate::backend_variant!(sqlite, Sqlite, $auth, $scenario);
                $crate::backend_variant!(postgres, Postgres, $auth, $scenario);
                $crate::backend_variant!(mariadb, Mariadb, $auth, $scenario);
                $crate::sole_postgres_variant!($auth, $scenario);
            }
        )+
    };
    (sole, $auth:expr => $($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[allow(unused_imports)]
                use super::*;

                $crate::backend_variant!(sqlite, Sqlite, $auth, $scenario);
                $crate::backend_variant!(postgres, Postgres, $auth, $scenario);
                $crate::sole_postgres_variant!($auth, $scenario);
            }
        )+
    };
    ($auth:expr => $($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[allow(unused_imports)]
                use super::*;

                $crate::backend_variant!(sqlite, Sqlite, $auth, $scenario);
                $crate::backend_variant!(postgres, Postgres, $auth, $scenario);
            }
        )+
    };
}

/// The `postgres_sole` test of [`on_every_backend!`].
#[doc(hidden)]
#[macro_export]
macro_rules! sole_postgres_variant {
    ($auth:expr, $scenario:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn postgres_sole() {
            let sole = |settings: &mut $crate::Settings| settings.server.database_sole_server = true;
            let test = stringify!($scenario);
            if let Some(app) = $crate::TestApp::spawn_configured(test, $crate::Backend::Postgres, $auth, sole).await {
                super::$scenario(app).await;
            }
        }
    };
}

/// One `#[tokio::test]` of [`on_every_backend!`]: `scenario` on a server over `backend`.
#[doc(hidden)]
#[macro_export]
macro_rules! backend_variant {
    ($name:ident, $backend:ident, $auth:expr, $scenario:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $name() {
            if let Some(app) = $crate::TestApp::spawn(stringify!($scenario), $crate::Backend::$backend, $auth).await {
                super::$scenario(app).await;
            }
        }
    };
}
