//! A federation issuer on loopback for the federated-identity tests: an OpenID Connect discovery
//! document and a JWKS this test controls (rotation, fetch counting), keys made here with
//! `openssl genpkey`, tokens signed here.

#![allow(dead_code)]

use std::io::Write;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use poem::listener::{Acceptor, Listener, TcpListener};
use poem::web::{Data, Json};
use poem::{EndpointExt, Route, get, handler};
use serde_json::{Value, json};

/// A key pair of one algorithm: the private key signs, the JWK is published.
#[derive(Clone)]
pub struct SigningKey {
    pub alg: Algorithm,
    pub kid: String,
    pub private_pem: Vec<u8>,
    pub public_pem: Vec<u8>,
    encoding: EncodingKey,
    pub jwk: Jwk,
}

fn openssl(args: &[&str], input: Option<&[u8]>) -> Vec<u8> {
    let mut child = Command::new("openssl")
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("openssl runs");
    if let Some(bytes) = input {
        child.stdin.take().unwrap().write_all(bytes).unwrap();
    }
    drop(child.stdin.take());
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "openssl {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

impl SigningKey {
    /// A fresh key pair for RS256, ES256 or EdDSA.
    pub fn generate(alg: Algorithm, kid: &str) -> Self {
        let private_pem = match alg {
            Algorithm::RS256 => openssl(
                &["genpkey", "-algorithm", "RSA", "-pkeyopt", "rsa_keygen_bits:2048"],
                None,
            ),
            Algorithm::ES256 => openssl(
                &["genpkey", "-algorithm", "EC", "-pkeyopt", "ec_paramgen_curve:P-256"],
                None,
            ),
            Algorithm::EdDSA => openssl(&["genpkey", "-algorithm", "ed25519"], None),
            other => panic!("no test keys for {other:?}"),
        };
        let public_pem = openssl(&["pkey", "-pubout"], Some(&private_pem));
        let encoding = match alg {
            Algorithm::RS256 => EncodingKey::from_rsa_pem(&private_pem),
            Algorithm::ES256 => EncodingKey::from_ec_pem(&private_pem),
            _ => EncodingKey::from_ed_pem(&private_pem),
        }
        .expect("generated key loads");
        let mut jwk = Jwk::from_encoding_key(&encoding, alg).expect("JWK of the key");
        jwk.common.key_id = Some(kid.to_owned());
        Self {
            alg,
            kid: kid.to_owned(),
            private_pem,
            public_pem,
            encoding,
            jwk,
        }
    }

    /// A token with these claims, signed by this key with its kid.
    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.encoding).expect("token signs")
    }

    /// Another key's signature under this key's kid (a forgery).
    pub fn sign_as(&self, other: &SigningKey, claims: &Value) -> String {
        let mut header = Header::new(other.alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &other.encoding).expect("token signs")
    }
}

/// A token with `alg: none` and no signature.
pub fn unsigned_token(claims: &Value) -> String {
    let header = URL_SAFE_NO_PAD.encode(json!({ "alg": "none", "typ": "JWT" }).to_string());
    let payload = URL_SAFE_NO_PAD.encode(claims.to_string());
    format!("{header}.{payload}.")
}

/// An HS256 token whose HMAC secret is `secret` (the key-confusion attack uses a public key).
pub fn hs256_token(secret: &[u8], kid: &str, claims: &Value) -> String {
    let mut header = Header::new(Algorithm::HS256);
    header.kid = Some(kid.to_owned());
    jsonwebtoken::encode(&header, claims, &EncodingKey::from_secret(secret)).expect("token signs")
}

pub fn now_seconds() -> i64 {
    chrono::Utc::now().timestamp()
}

/// Claims for `app_id` from `issuer` about `subject`, valid for ten minutes.
pub fn claims(issuer: &str, app_id: &str, subject: &str) -> Value {
    let now = now_seconds();
    json!({ "iss": issuer, "aud": app_id, "sub": subject, "iat": now, "nbf": now - 5, "exp": now + 600 })
}

struct IssuerState {
    issuer: String,
    keys: Mutex<Vec<Jwk>>,
    jwks_fetches: AtomicUsize,
}

/// The loopback issuer; stops when dropped.
pub struct Issuer {
    pub url: String,
    state: Arc<IssuerState>,
    server: tokio::task::JoinHandle<()>,
}

#[handler]
fn discovery(Data(state): Data<&Arc<IssuerState>>) -> Json<Value> {
    Json(json!({
        "issuer": state.issuer,
        "jwks_uri": format!("{}/jwks", state.issuer),
        "id_token_signing_alg_values_supported": ["RS256", "ES256", "EdDSA"],
    }))
}

#[handler]
fn jwks(Data(state): Data<&Arc<IssuerState>>) -> Json<Value> {
    state.jwks_fetches.fetch_add(1, Ordering::SeqCst);
    let keys = state.keys.lock().unwrap().clone();
    Json(serde_json::to_value(JwkSet { keys }).unwrap())
}

impl Issuer {
    /// Serves `keys` until dropped.
    pub async fn start(keys: &[&SigningKey]) -> Self {
        let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
        let port = acceptor.local_addr()[0].as_socket_addr().unwrap().port();
        let url = format!("http://127.0.0.1:{port}");
        let state = Arc::new(IssuerState {
            issuer: url.clone(),
            keys: Mutex::new(keys.iter().map(|k| k.jwk.clone()).collect()),
            jwks_fetches: AtomicUsize::new(0),
        });
        let routes = Route::new()
            .at("/.well-known/openid-configuration", get(discovery))
            .at("/jwks", get(jwks))
            .data(state.clone());
        let server = tokio::spawn(async move {
            let _ = poem::Server::new_with_acceptor(acceptor).run(routes).await;
        });
        Self { url, state, server }
    }

    pub fn jwks_url(&self) -> String {
        format!("{}/jwks", self.url)
    }

    /// Publishes `keys` instead of the current set (a key rotation).
    pub fn publish(&self, keys: &[&SigningKey]) {
        *self.state.keys.lock().unwrap() = keys.iter().map(|k| k.jwk.clone()).collect();
    }

    /// How many times the key set was fetched.
    pub fn jwks_fetches(&self) -> usize {
        self.state.jwks_fetches.load(Ordering::SeqCst)
    }
}

impl Drop for Issuer {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// `svc apps configure --database-url URL --app-id ID <args>` through the binary; its stdout.
pub fn configure_app(binary: &str, database_url: &str, app_id: &str, args: &[&str]) -> String {
    let out = Command::new(binary)
        .args(["apps", "configure", "--database-url", database_url, "--app-id", app_id])
        .args(args)
        .output()
        .expect("svc runs");
    assert!(
        out.status.success(),
        "svc apps configure {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}
