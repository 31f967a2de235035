//! The peers of `hosted_oidc_sign_in.rs`: a real OpenID provider on loopback
//! (`tests/peers/oidc-sign-in-issuer.mjs`, npm `oidc-provider`) with svc registered as its client,
//! and a browser that keeps cookies per host and follows redirects by hand.

use std::collections::HashMap;
use std::process::Stdio;
use std::time::Duration;

use reqwest::{StatusCode, Url};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::hosted_deployment_support::{node22, peers_dir};

/// The provider; killed on drop.
pub struct Provider {
    _process: tokio::process::Child,
    pub issuer: String,
    pub client_id: String,
    pub client_secret: String,
}

impl Provider {
    /// Starts the provider with svc's callback as the client's one redirect URI.
    pub async fn start(callback: &str) -> Self {
        let mut process = tokio::process::Command::new(node22())
            .arg(peers_dir().join("oidc-sign-in-issuer.mjs"))
            .arg(callback)
            .current_dir(peers_dir())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("node runs");
        let mut lines = BufReader::new(process.stdout.take().unwrap()).lines();
        let line = tokio::time::timeout(Duration::from_secs(30), async {
            loop {
                let line = lines
                    .next_line()
                    .await
                    .unwrap()
                    .expect("the provider prints where it listens");
                if let Some(rest) = line.strip_prefix("oidc-sign-in-issuer: listening ") {
                    return rest.to_owned();
                }
            }
        })
        .await
        .expect("the provider starts within 30 s");
        // oidc-provider writes notices to stdout later; a closed pipe would kill it (EPIPE).
        tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
        let parts: Vec<&str> = line.split_whitespace().collect();
        Self {
            _process: process,
            issuer: parts[0].into(),
            client_id: parts[1].into(),
            client_secret: parts[2].into(),
        }
    }

    /// The person the provider's next interaction signs in.
    pub async fn next_login(&self, sub: &str, email: &str, email_verified: bool) {
        self.queue(json!({ "sub": sub, "email": email, "email_verified": email_verified }))
            .await;
    }

    /// The person declines at the provider.
    pub async fn next_declines(&self) {
        self.queue(json!({ "deny": true })).await;
    }

    async fn queue(&self, body: serde_json::Value) {
        let status = reqwest::Client::new()
            .post(format!("{}/_test/next-login", self.issuer))
            .json(&body)
            .send()
            .await
            .unwrap()
            .status();
        assert_eq!(status, StatusCode::NO_CONTENT);
    }
}

/// `[hosted.oidc]` for `provider`.
pub fn configure(s: &mut svc::Settings, provider: &Provider) {
    s.hosted.oidc.issuer = provider.issuer.clone();
    s.hosted.oidc.client_id = provider.client_id.clone();
    s.hosted.oidc.client_secret = provider.client_secret.clone();
    s.hosted.oidc.display_name = "Loopback ID".into();
}

/// A port nothing listens on now (svc's callback must be registered before svc starts).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// One browser: cookies kept per host and port (sent to every path), redirects followed by hand.
pub struct Browser {
    http: reqwest::Client,
    cookies: HashMap<String, Vec<(String, String)>>,
}

/// An answer: status, absolute `Location` if any, body.
pub struct Page {
    pub status: StatusCode,
    pub location: Option<Url>,
    pub set_cookies: Vec<String>,
    pub body: String,
}

impl Page {
    pub fn param(&self, name: &str) -> Option<String> {
        self.location
            .as_ref()?
            .query_pairs()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
    }
}

fn origin(url: &Url) -> String {
    format!(
        "{}:{}",
        url.host_str().unwrap_or_default(),
        url.port_or_known_default().unwrap_or(0)
    )
}

impl Browser {
    pub fn new() -> Self {
        Self {
            http: reqwest::Client::builder()
                .redirect(reqwest::redirect::Policy::none())
                .build()
                .unwrap(),
            cookies: HashMap::new(),
        }
    }

    async fn send(&mut self, request: reqwest::RequestBuilder, url: &Url) -> Page {
        let jar = self.cookies.entry(origin(url)).or_default();
        let header: Vec<String> = jar.iter().map(|(n, v)| format!("{n}={v}")).collect();
        let request = if header.is_empty() {
            request
        } else {
            request.header("cookie", header.join("; "))
        };
        let response = request.send().await.expect("request");
        let status = response.status();
        let set_cookies: Vec<String> = response
            .headers()
            .get_all("set-cookie")
            .iter()
            .map(|v| v.to_str().unwrap().to_owned())
            .collect();
        for cookie in &set_cookies {
            let pair = cookie.split(';').next().unwrap();
            let (name, value) = pair.split_once('=').unwrap();
            jar.retain(|(n, _)| n != name);
            if !value.is_empty() {
                jar.push((name.to_owned(), value.to_owned()));
            }
        }
        let location = response
            .headers()
            .get("location")
            .map(|l| url.join(l.to_str().unwrap()).expect("a Location"));
        Page {
            status,
            location,
            set_cookies,
            body: response.text().await.unwrap_or_default(),
        }
    }

    pub async fn get(&mut self, url: &str) -> Page {
        let url = Url::parse(url).unwrap();
        let request = self.http.get(url.clone());
        self.send(request, &url).await
    }

    /// A form on a page of `url`'s own origin posted: browsers send that `Origin` with it.
    pub async fn post_form(&mut self, url: &str, form: &[(String, String)]) -> Page {
        let origin = Url::parse(url).unwrap().origin().ascii_serialization();
        self.post_form_from(Some(&origin), url, form).await
    }

    /// A form posted from a page of `origin` (`None`: a client that sends no `Origin`).
    pub async fn post_form_from(&mut self, origin: Option<&str>, url: &str, form: &[(String, String)]) -> Page {
        let headers: Vec<(&str, &str)> = origin.map(|origin| ("origin", origin)).into_iter().collect();
        self.post_form_with(&headers, url, form).await
    }

    /// A form posted with these request headers (a browser's `Origin`, `Referer`, ...).
    pub async fn post_form_with(&mut self, headers: &[(&str, &str)], url: &str, form: &[(String, String)]) -> Page {
        let url = Url::parse(url).unwrap();
        let request = headers
            .iter()
            .fold(self.http.post(url.clone()).form(form), |request, (name, value)| {
                request.header(*name, *value)
            });
        self.send(request, &url).await
    }

    /// Follows redirects from `page` until one points at `stop` (a URL prefix), which is answered
    /// unfollowed.
    pub async fn follow_until(&mut self, mut page: Page, stop: &str) -> Url {
        for _ in 0..10 {
            assert!(
                page.status.is_redirection(),
                "a redirect on the way to {stop}: {} {}",
                page.status,
                page.body
            );
            let next = page.location.clone().expect("a Location");
            if next.as_str().starts_with(stop) {
                return next;
            }
            page = self.get(next.as_str()).await;
        }
        panic!("no redirect to {stop} within 10 steps");
    }
}
