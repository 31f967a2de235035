//! The `svc` binary run as a user runs it, and a loopback fake of the registry's routes serving
//! signed artifacts.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::Data;
use poem::{Body, EndpointExt, Request, Route, Server, handler};
use serde_json::{Value, json};
use svc_attest::ed25519;
use svc_attest::payload;
use svc_tests::temp_dir;

pub const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

/// Runs the binary with a private config dir and no registry variables from the caller's shell.
pub async fn svc(args: &[&str], config: &Path, cwd: &Path) -> Output {
    tokio::process::Command::new(BINARY)
        .args(args)
        .current_dir(cwd)
        .env("XDG_CONFIG_HOME", config)
        .env_remove("SVC_REGISTRY_URL")
        .env_remove("SVC_REGISTRY_TOKEN")
        .output()
        .await
        .unwrap()
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// Canned answers by "METHOD /path" and every request seen ("METHOD /path?query", authorization, body).
#[derive(Default)]
pub struct Fake {
    answers: Mutex<HashMap<String, (u16, Vec<u8>)>>,
    pub seen: Mutex<Vec<(String, Option<String>, Value)>>,
}

impl Fake {
    pub fn answer(&self, route: &str, status: u16, body: impl Into<Vec<u8>>) {
        self.answers
            .lock()
            .unwrap()
            .insert(route.to_owned(), (status, body.into()));
    }
}

#[handler]
async fn any_route(req: &Request, body: Body, Data(fake): Data<&Arc<Fake>>) -> poem::Response {
    let route = format!("{} {}", req.method(), req.uri().path());
    let auth = req.header("authorization").map(str::to_owned);
    let body: Value = serde_json::from_slice(&body.into_vec().await.unwrap()).unwrap_or(Value::Null);
    let seen = match req.uri().query() {
        Some(q) => format!("{route}?{q}"),
        None => route.clone(),
    };
    fake.seen.lock().unwrap().push((seen, auth, body));
    let answer = fake.answers.lock().unwrap().get(&route).cloned();
    let (status, bytes) = answer.unwrap_or((404, br#"{"error":"not_found","message":"no such route"}"#.to_vec()));
    poem::Response::builder()
        .status(poem::http::StatusCode::from_u16(status).unwrap())
        .content_type("application/json")
        .body(bytes)
}

pub async fn fake_registry() -> (String, Arc<Fake>) {
    let fake = Arc::new(Fake::default());
    let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
    let port = acceptor.local_addr()[0].as_socket_addr().unwrap().port();
    let app = Route::new().at("/*path", any_route).data(fake.clone());
    tokio::spawn(Server::new_with_acceptor(acceptor).run(app));
    (format!("http://127.0.0.1:{port}"), fake)
}

pub const GADGET_JS: &str = "export function useChart() { return 1; }";

pub const CARD_TSX: &str = "export default function Card() { return <div>card</div>; }";

/// Serves `@acme/<name>@1.0.0` signed by `key`, as GET /pkg and GET /bundles answer it; returns
/// the version body served.
pub fn publish_in_fake(
    fake: &Fake,
    base: &str,
    key: &ed25519::AuthorSigningKey,
    kind: &str,
    name: &str,
    bytes: &[u8],
) -> Value {
    publish_in_fake_as(fake, base, key, "private", kind, name, bytes)
}

/// [`publish_in_fake`] with the manifest's `visibility`, still signed with Ed25519 by `key`.
pub fn publish_in_fake_as(
    fake: &Fake,
    base: &str,
    key: &ed25519::AuthorSigningKey,
    visibility: &str,
    kind: &str,
    name: &str,
    bytes: &[u8],
) -> Value {
    let public = key.verifying_key();
    let mut manifest = json!({
        "kind": kind, "scope": "@acme", "name": name, "version": "1.0.0", "visibility": visibility,
        "description": "d", "tags": [],
        "signature": { "algorithm": "ed25519", "publicKeyId": ed25519::public_key_id(&public),
                       "bundleSha384": payload::bundle_sha384(bytes) },
        "authorPublicKey": ed25519::encode_public_key(&public),
    });
    if kind == "gadget" {
        manifest["gadget"] = json!({ "exports": [{ "hook": "useChart", "description": "a chart", "usage": "useChart()", "example": "useChart()" }] });
    } else {
        manifest["blueprint"] = json!({ "contract": {}, "entryPoint": "index.tsx", "fixtureProps": {} });
    }
    let signed = payload::signed_payload(kind, &manifest, bytes).unwrap();
    let bundle_path = format!("/bundles/sha384/{name}");
    let version = json!({
        "manifest": manifest, "bundleUrl": format!("{base}{bundle_path}"), "bundleSri": payload::bundle_sha384(bytes),
        "signature": { "algorithm": "ed25519", "publicKeyId": ed25519::public_key_id(&public), "value": ed25519::sign(key, &signed) },
        "authorPublicKey": ed25519::encode_public_key(&public), "publishedAt": "2026-11-26T00:00:00Z"
    });
    fake.answer(&format!("GET /pkg/@acme/{name}/1.0.0"), 200, version.to_string());
    fake.answer(&format!("GET {bundle_path}"), 200, bytes.to_vec());
    version
}

/// A fresh project directory whose svc.json names the registry at `base`.
pub fn project_using(base: &str, name: &str) -> PathBuf {
    let project = temp_dir(name);
    std::fs::write(
        project.join("svc.json"),
        "{ \"registry\": \"".to_owned() + base + "\" }\n",
    )
    .unwrap();
    project
}

pub fn snapshot(dir: &Path) -> Vec<(PathBuf, Vec<u8>)> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_owned()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let p = e.unwrap().path();
            if p.is_dir() {
                stack.push(p.clone());
                out.push((p, Vec::new()));
            } else {
                out.push((p.clone(), std::fs::read(&p).unwrap()));
            }
        }
    }
    out.sort();
    out
}
