//! A registry server on a free port (`svc::registry_server::RegistryApplication`), on SQLite or
//! PostgreSQL, with tokens minted and versions yanked through the real `svc registry` CLI, and
//! helpers that sign and publish the way a publisher's client does (docs/registry.md).

use std::path::PathBuf;
use std::process::Command;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use ed25519_dalek::{Signer, SigningKey};
use reqwest::StatusCode;
use serde_json::{Value, json};
use sha2::{Digest, Sha256, Sha384};
use svc::registry_server::RegistryApplication;
use svc::settings::RegistrySettings;
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
    /// `None` (the test is skipped) for PostgreSQL without `SVC_TEST_DATABASE_URL`.
    pub async fn spawn(test: &str, backend: Backend) -> Option<Self> {
        // No fixture can sign our payloads with a real Fulcio certificate, so the scenarios that
        // need public artifacts run the development mode; `spawn_verifying` runs the default.
        Self::spawn_with(test, backend, true).await
    }

    /// A registry that verifies Sigstore bundles (the default settings).
    pub async fn spawn_verifying(test: &str, backend: Backend) -> Option<Self> {
        Self::spawn_with(test, backend, false).await
    }

    async fn spawn_with(test: &str, backend: Backend, accept_unverified_sigstore: bool) -> Option<Self> {
        let data_dir = std::env::temp_dir().join(format!("svc-registry-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&data_dir).unwrap();
        let database = ScratchDatabase::create(test, backend, &data_dir).await?;
        let settings = RegistrySettings {
            host: "127.0.0.1".into(),
            port: 0,
            data_dir: data_dir.clone(),
            database_url: database.url.clone(),
            public_base_url: String::new(),
            accept_unverified_sigstore,
            ..RegistrySettings::default()
        };
        let app = RegistryApplication::build(&settings)
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
        let output = Command::new(BINARY)
            .arg("registry")
            .args(args)
            .arg("--data-dir")
            .arg(&self.data_dir)
            .arg("--database-url")
            .arg(&self.database_url)
            .output()
            .expect("the svc binary runs");
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stdout).into_owned(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    }

    /// A token minted by `svc registry token mint` (the last line of its stdout).
    pub fn mint(&self, publisher: &str, admin: bool) -> String {
        let mut args = vec!["token", "mint", "--publisher", publisher];
        if admin {
            args.push("--admin");
        }
        let (ok, stdout, stderr) = self.cli(&args);
        assert!(ok, "token mint failed: {stderr}");
        stdout.lines().last().expect("the token is printed").trim().to_owned()
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

/// A publisher's Ed25519 signing key.
pub struct Author(SigningKey);

impl Author {
    pub fn new(seed: u8) -> Self {
        Self(SigningKey::from_bytes(&[seed; 32]))
    }

    pub fn public_key(&self) -> String {
        STANDARD.encode(self.0.verifying_key().to_bytes())
    }

    /// First 16 characters of base64(sha256(public key)).
    pub fn key_id(&self) -> String {
        STANDARD.encode(Sha256::digest(self.0.verifying_key().to_bytes()))[..16].to_owned()
    }

    pub fn sign(&self, payload: &[u8]) -> String {
        STANDARD.encode(self.0.sign(payload).to_bytes())
    }
}

pub fn sri(bytes: &[u8]) -> String {
    format!("sha384-{}", STANDARD.encode(Sha384::digest(bytes)))
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
/// canonical manifest for a blueprint.
pub fn signed_publish(manifest: &Value, bundle: &str, author: &Author) -> Value {
    let payload = if manifest["kind"] == "gadget" {
        Sha384::digest(bundle.as_bytes()).to_vec()
    } else {
        serde_json_canonicalizer::to_vec(manifest).unwrap()
    };
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

/// Runs a scenario on SQLite and on PostgreSQL.
#[macro_export]
macro_rules! on_both_backends {
    ($($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    if let Some(registry) = super::registry_support::Registry::spawn(stringify!($scenario), svc_tests::Backend::Sqlite).await {
                        super::$scenario(registry).await;
                    }
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(registry) = super::registry_support::Registry::spawn(stringify!($scenario), svc_tests::Backend::Postgres).await {
                        super::$scenario(registry).await;
                    }
                }
            }
        )+
    };
}
