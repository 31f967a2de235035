//! A registry server on a free port (`svc::registry_server::RegistryApplication`), on SQLite,
//! PostgreSQL or MariaDB, with tokens minted and versions yanked through the real `svc registry` CLI, and
//! helpers that sign and publish the way a publisher's client does (docs/registry.md).

use std::path::PathBuf;
use std::process::Command;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use reqwest::StatusCode;
use serde_json::{Value, json};
use svc::bundle_inspection::IsolatedModuleInspector;
use svc::registry_server::RegistryApplication;
use svc::settings::{ConnectionSettings, RegistrySettings};
use svc_attest::ed25519::{self, AuthorSigningKey};
use svc_attest::payload;
use svc_tests::{Backend, ScratchDatabase};
use tokio::sync::oneshot;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

pub struct Registry {
    pub base: String,
    pub client: reqwest::Client,
    data_dir: PathBuf,
    database_url: String,
    shutdown: Option<oneshot::Sender<()>>,
    _database: ScratchDatabase,
}

impl Drop for Registry {
    fn drop(&mut self) {
        if let Some(stop) = self.shutdown.take() {
            let _ = stop.send(());
        }
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

impl Registry {
    /// `None` (the test is skipped) for a server backend whose `SVC_TEST_*_URL` is unset.
    pub async fn spawn(test: &str, backend: Backend) -> Option<Self> {
        // No fixture can sign our payloads with a real Fulcio certificate, so the scenarios that
        // need public artifacts run the development mode; `spawn_verifying` runs the default.
        Self::spawn_with(test, backend, |settings| settings.accept_unverified_sigstore = true).await
    }

    /// A registry that verifies Sigstore bundles against `trusted_root` (empty: the default
    /// production root).
    pub async fn spawn_verifying(test: &str, backend: Backend, trusted_root: &std::path::Path) -> Option<Self> {
        let root = trusted_root.to_path_buf();
        Self::spawn_with(test, backend, move |settings| settings.sigstore_trusted_root = root).await
    }

    /// A registry with `adjust` applied to its settings (a quota, a trusted root).
    pub async fn spawn_with(test: &str, backend: Backend, adjust: impl FnOnce(&mut RegistrySettings)) -> Option<Self> {
        let data_dir = std::env::temp_dir().join(format!("svc-registry-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&data_dir).unwrap();
        let database = ScratchDatabase::create(test, backend, &data_dir).await?;
        let mut settings = RegistrySettings {
            host: "127.0.0.1".into(),
            port: 0,
            data_dir: data_dir.clone(),
            database_url: database.url.clone(),
            public_base_url: String::new(),
            ..RegistrySettings::default()
        };
        adjust(&mut settings);
        // Long bundles are parsed by `svc registry inspect-bundle`, not by this test binary.
        let bundles = IsolatedModuleInspector::new(env!("CARGO_BIN_EXE_svc-under-test").into());
        let app = RegistryApplication::build(&settings, &ConnectionSettings::default(), bundles)
            .await
            .expect("the registry starts");
        let base = app.base_url().to_owned();
        let (stop, stopped) = oneshot::channel::<()>();
        tokio::spawn(app.run_until(async move {
            let _ = stopped.await;
        }));
        Some(Self {
            base,
            client: reqwest::Client::new(),
            data_dir,
            database_url: database.url.clone(),
            shutdown: Some(stop),
            _database: database,
        })
    }

    /// `svc registry <args> --data-dir D --database-url U`: (exit success, stdout, stderr).
    pub fn cli(&self, args: &[&str]) -> (bool, String, String) {
        registry_cli(&self.data_dir, Some(&self.database_url), args)
    }

    /// The file where the registry stores the gadget bundle served at `bundle_url`
    /// (`<data-dir>/bundles/sha384/<hex>.js`), for tests that tamper with the storage.
    #[allow(dead_code)] // registry_end_to_end.rs only
    pub fn stored_gadget_bundle(&self, bundle_url: &str) -> PathBuf {
        let hex = bundle_url.rsplit('/').next().expect("a bundle URL");
        let file = self.data_dir.join("bundles/sha384").join(format!("{hex}.js"));
        assert!(file.is_file(), "the registry stores {bundle_url} at {}", file.display());
        file
    }

    /// The names of the bundle files the registry holds (`<data-dir>/bundles/sha384/`), sorted.
    #[allow(dead_code)] // registry_server/quotas.rs only
    pub fn bundle_files(&self) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.data_dir.join("bundles/sha384")) else {
            return Vec::new();
        };
        let mut names: Vec<String> = entries
            .map(|entry| entry.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    }

    /// A token minted by `svc registry token mint` (the last line of its stdout).
    pub fn mint(&self, publisher: &str, admin: bool) -> String {
        mint(|args| self.cli(args), publisher, admin)
    }

    pub async fn get(&self, path: &str, token: Option<&str>) -> (StatusCode, Value) {
        let mut request = self.client.get(format!("{}{path}", self.base));
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    pub async fn post(&self, path: &str, token: Option<&str>, body: &Value) -> (StatusCode, Value) {
        let mut request = self.client.post(format!("{}{path}", self.base)).json(body);
        if let Some(token) = token {
            request = request.bearer_auth(token);
        }
        let response = request.send().await.unwrap();
        let status = response.status();
        (status, response.json().await.unwrap_or(Value::Null))
    }

    /// Registers `author`'s key for its publisher; asserts 201.
    pub async fn register_key(&self, token: &str, author: &Author) {
        let (status, body) = self
            .post(
                "/author-keys",
                Some(token),
                &json!({ "publicKey": author.public_key() }),
            )
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        assert_eq!(body["publicKeyId"], author.key_id());
    }
}

/// A publisher's Ed25519 signing key. Key ids, signatures and digests come from `svc_attest`,
/// the code `svc publish` signs with, so the tests and the product cannot drift apart.
pub struct Author(AuthorSigningKey);

impl Author {
    pub fn new(seed: u8) -> Self {
        Self(AuthorSigningKey::from_bytes(&[seed; 32]))
    }

    pub fn public_key(&self) -> String {
        ed25519::encode_public_key(&self.0.verifying_key())
    }

    /// First 16 characters of base64(sha256(public key)).
    pub fn key_id(&self) -> String {
        ed25519::public_key_id(&self.0.verifying_key())
    }

    pub fn sign(&self, payload: &[u8]) -> String {
        ed25519::sign(&self.0, payload)
    }
}

/// `sha384-<base64>`: a payload's `bundleSha384` and `bundleSri`.
pub fn sri(bytes: &[u8]) -> String {
    payload::bundle_sha384(bytes)
}

pub const GADGET_JS: &str = "export function useSparkline(values) { return values.length; }\n\
                             export const useBars = (values) => values.map((v) => v * 2);\n";

pub const BLUEPRINT_TSX: &str = "import { useProps } from \"@svc/gadgets\";\n\
     export default function Board() {\n\
       const props = useProps<{ title: string }>();\n\
       return <h1>{props.title}</h1>;\n\
     }\n";

/// A private gadget manifest signed by `author` over `bundle` (hooks useSparkline, useBars).
pub fn gadget_manifest(scope: &str, name: &str, version: &str, author: &Author, bundle: &str) -> Value {
    json!({
        "kind": "gadget", "scope": scope, "name": name, "version": version,
        "visibility": "private", "description": "Sparkline and bar charts", "tags": ["chart", "svg"],
        "signature": { "algorithm": "ed25519", "publicKeyId": author.key_id(), "bundleSha384": sri(bundle.as_bytes()) },
        "authorPublicKey": author.public_key(),
        "gadget": { "exports": [
            { "hook": "useSparkline", "description": "a sparkline", "usage": "useSparkline(values)", "example": "useSparkline([1, 2])" },
            { "hook": "useBars", "description": "bars", "usage": "useBars(values)", "example": "useBars([1])" }
        ] }
    })
}

pub fn blueprint_manifest(scope: &str, name: &str, version: &str, author: &Author, source: &str) -> Value {
    json!({
        "kind": "blueprint", "scope": scope, "name": name, "version": version,
        "visibility": "private", "description": "A status board", "tags": ["board"],
        "signature": { "algorithm": "ed25519", "publicKeyId": author.key_id(), "bundleSha384": sri(source.as_bytes()) },
        "authorPublicKey": author.public_key(),
        "blueprint": {
            "contract": { "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] } },
            "entryPoint": "index.tsx",
            "fixtureProps": { "title": "Hello" }
        }
    })
}

/// The publish body a client sends: Ed25519 over sha384(bundle) for a gadget, over the RFC 8785
/// canonical manifest for a blueprint (`svc_attest::payload::signed_payload`, as `svc publish`).
pub fn signed_publish(manifest: &Value, bundle: &str, author: &Author) -> Value {
    let kind = manifest["kind"].as_str().expect("a manifest kind");
    let payload = payload::signed_payload(kind, manifest, bundle.as_bytes()).expect("a payload");
    json!({
        "manifest": manifest,
        "bundle": STANDARD.encode(bundle),
        "bundleSha384": sri(bundle.as_bytes()),
        "signature": { "algorithm": "ed25519", "publicKeyId": author.key_id(), "value": author.sign(&payload) }
    })
}

/// A public gadget with a Sigstore bundle (stored, reported `unverified`).
pub fn sigstore_publish(scope: &str, name: &str, version: &str, bundle: &str) -> Value {
    let manifest = json!({
        "kind": "gadget", "scope": scope, "name": name, "version": version,
        "visibility": "public", "description": "Public date helpers", "tags": ["date"],
        "signature": { "algorithm": "sigstore", "bundleSha384": sri(bundle.as_bytes()) },
        "gadget": { "exports": [
            { "hook": "useSparkline", "description": "d", "usage": "u", "example": "e" },
            { "hook": "useBars", "description": "d", "usage": "u", "example": "e" }
        ] }
    });
    json!({
        "manifest": manifest,
        "bundle": STANDARD.encode(bundle),
        "signature": { "algorithm": "sigstore", "sigstoreBundle": {
            "mediaType": "application/vnd.dev.sigstore.bundle.v0.3+json",
            "verificationMaterial": {}, "messageSignature": {}
        } }
    })
}

/// Runs a scenario on SQLite, PostgreSQL and MariaDB (a server backend without its
/// `SVC_TEST_*_URL` is skipped, unless `SVC_REQUIRE_MARIADB=1` asks for MariaDB).
#[macro_export]
macro_rules! on_every_registry_backend {
    ($($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                $crate::registry_backend_variant!(sqlite, Sqlite, $scenario);
                $crate::registry_backend_variant!(postgres, Postgres, $scenario);
                $crate::registry_backend_variant!(mariadb, Mariadb, $scenario);
            }
        )+
    };
}

/// One backend's test of [`on_every_registry_backend!`].
#[macro_export]
macro_rules! registry_backend_variant {
    ($test:ident, $backend:ident, $scenario:ident) => {
        #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
        async fn $test() {
            let backend = svc_tests::Backend::$backend;
            if let Some(registry) = super::registry_support::Registry::spawn(stringify!($scenario), backend).await {
                super::$scenario(registry).await;
            }
        }
    };
}

/// `svc registry serve` as a real process on a free port, stopped when dropped.
pub struct RegistryProcess {
    child: std::process::Child,
    pub base: String,
    data_dir: std::path::PathBuf,
    // Kept open until the end: the banner has more lines, and a closed pipe would end the server.
    _banner: std::io::BufReader<std::process::ChildStdout>,
}

impl RegistryProcess {
    /// Started with `config` layered over the defaults (`--config`).
    pub fn start(config: Option<&str>) -> Self {
        Self::spawn(config, &[], false)
    }

    /// Started with `config`, `flags` and `RUST_LOG=debug`, its stderr kept for [`Self::stopped_log`].
    pub fn start_logging(config: &str, flags: &[&str]) -> Self {
        Self::spawn(Some(config), flags, true)
    }

    fn spawn(config: Option<&str>, flags: &[&str], logging: bool) -> Self {
        use std::io::BufRead;

        let data_dir = std::env::temp_dir().join(format!("svc-registry-serve-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&data_dir).unwrap();
        let mut command = Command::new(BINARY);
        command
            .args(["registry", "serve", "--port", "0", "--data-dir"])
            .arg(&data_dir)
            .args(flags);
        if let Some(config) = config {
            let path = data_dir.join("registry-test.toml");
            std::fs::write(&path, config).unwrap();
            command.arg("--config").arg(path);
        }
        if logging {
            let log = std::fs::File::create(data_dir.join(STDERR_LOG)).unwrap();
            command.env("RUST_LOG", "debug").stderr(log);
        } else {
            command.stderr(std::process::Stdio::null());
        }
        let mut child = command
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("the svc binary starts");
        let mut banner = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut first_line = String::new();
        banner.read_line(&mut first_line).unwrap();
        let base = first_line
            .trim()
            .strip_prefix("svc registry listening on ")
            .unwrap_or_else(|| panic!("unexpected banner: {first_line:?}"))
            .to_owned();
        Self {
            child,
            base,
            data_dir,
            _banner: banner,
        }
    }

    pub fn address(&self) -> &str {
        self.base.trim_start_matches("http://")
    }

    /// A publisher token minted by `svc registry token mint` on this registry's database.
    pub fn mint(&self, publisher: &str) -> String {
        mint(|args| registry_cli(&self.data_dir, None, args), publisher, false)
    }

    /// Stops the registry and answers the non-empty lines it wrote to stderr
    /// ([`Self::start_logging`]); read after the process ended, so no line is cut.
    pub fn stopped_log(mut self) -> Vec<String> {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let log = std::fs::read_to_string(self.data_dir.join(STDERR_LOG)).unwrap_or_default();
        log.lines()
            .filter(|l| !l.trim().is_empty())
            .map(str::to_owned)
            .collect()
    }
}

/// Where [`RegistryProcess::start_logging`] keeps the registry's stderr, in its data directory.
const STDERR_LOG: &str = "stderr.log";

impl Drop for RegistryProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// `svc registry <args> --data-dir D [--database-url U]`: (exit success, stdout, stderr).
fn registry_cli(data_dir: &std::path::Path, database_url: Option<&str>, args: &[&str]) -> (bool, String, String) {
    let mut command = Command::new(BINARY);
    command.arg("registry").args(args).arg("--data-dir").arg(data_dir);
    if let Some(url) = database_url {
        command.arg("--database-url").arg(url);
    }
    let output = command.output().expect("the svc binary runs");
    (
        output.status.success(),
        String::from_utf8_lossy(&output.stdout).into_owned(),
        String::from_utf8_lossy(&output.stderr).into_owned(),
    )
}

/// The token `svc registry token mint` prints, run through `cli`.
fn mint(cli: impl Fn(&[&str]) -> (bool, String, String), publisher: &str, admin: bool) -> String {
    let mut args = vec!["token", "mint", "--publisher", publisher];
    if admin {
        args.push("--admin");
    }
    let (ok, stdout, stderr) = cli(&args);
    assert!(ok, "token mint failed: {stderr}");
    stdout.lines().last().expect("the token is printed").trim().to_owned()
}
