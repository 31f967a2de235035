//! A server with OAuth on, a client that does not follow redirects, and the flow's steps.

use reqwest::header::HeaderMap;
use reqwest::{StatusCode, Url};
use serde_json::{Value, json};
use svc::Settings;
use svc_tests::{Auth, Backend, TestApp};

/// RFC 7636 Appendix B: a verifier and its S256 challenge.
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
/// A loopback redirect URI, as native MCP clients register.
pub const REDIRECT: &str = "http://127.0.0.1:47613/callback";
pub const STATE: &str = "st&te=1 ü";

pub struct OAuthApp {
    pub app: TestApp,
    /// Never follows redirects: the tests read `Location`.
    pub http: reqwest::Client,
}

/// An HTTP answer with its `Location` parsed.
pub struct Answer {
    pub status: StatusCode,
    pub headers: HeaderMap,
    pub location: Option<Url>,
    pub body: String,
}

impl Answer {
    /// A query parameter of `Location`.
    pub fn param(&self, name: &str) -> Option<String> {
        let location = self.location.as_ref()?;
        location
            .query_pairs()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.into_owned())
    }

    /// The `Location` without its query.
    pub fn target(&self) -> String {
        let mut target = self.location.clone().expect("a Location header");
        target.set_query(None);
        target.to_string()
    }

    /// The error page's link back to the client (`id="back-to-client"`), unescaped.
    pub fn back_link(&self) -> Option<Url> {
        const START: &str = "id=\"back-to-client\" href=\"";
        let start = self.body.find(START)? + START.len();
        let end = start + self.body[start..].find('"')?;
        Some(Url::parse(&html_unescaped(&self.body[start..end])).expect("an absolute link"))
    }
}

/// The text of an HTML attribute value as the browser reads it (`&amp;` last, so an escaped
/// entity stays what it was).
fn html_unescaped(text: &str) -> String {
    text.replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&amp;", "&")
}

impl OAuthApp {
    /// A server with `[oauth] enabled`, changed further by `configure`.
    pub async fn spawn(
        test: &str,
        backend: Backend,
        auth: Auth,
        configure: impl FnOnce(&mut Settings),
    ) -> Option<Self> {
        let app = TestApp::spawn_configured(test, backend, auth, |settings| {
            settings.oauth.enabled = true;
            configure(settings);
        })
        .await?;
        let http = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("client");
        Some(Self { app, http })
    }

    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.app.base)
    }

    /// The issuer: the public base URL, without a trailing slash.
    pub fn issuer(&self) -> &str {
        &self.app.base
    }

    pub async fn get_json(&self, path: &str) -> (StatusCode, HeaderMap, Value) {
        let resp = self.http.get(self.url(path)).send().await.expect("request");
        let (status, headers) = (resp.status(), resp.headers().clone());
        (status, headers, resp.json().await.unwrap_or(Value::Null))
    }

    pub async fn register(&self, body: Value) -> (StatusCode, HeaderMap, Value) {
        self.register_from(body, None).await
    }

    pub async fn register_from(&self, body: Value, forwarded_for: Option<&str>) -> (StatusCode, HeaderMap, Value) {
        let mut req = self.http.post(self.url("/oauth/register")).json(&body);
        if let Some(address) = forwarded_for {
            req = req.header("x-forwarded-for", address);
        }
        let resp = req.send().await.expect("request");
        let (status, headers) = (resp.status(), resp.headers().clone());
        (status, headers, resp.json().await.unwrap_or(Value::Null))
    }

    /// Registers a client for [`REDIRECT`]; returns its `client_id`.
    pub async fn client(&self, name: &str) -> String {
        let (status, _, body) = self
            .register(json!({ "redirect_uris": [REDIRECT], "client_name": name }))
            .await;
        assert_eq!(status, StatusCode::CREATED, "{body}");
        body["client_id"].as_str().expect("client_id").to_owned()
    }

    /// A complete, valid authorization request.
    pub fn request(&self, client_id: &str) -> Vec<(String, String)> {
        [
            ("response_type", "code"),
            ("client_id", client_id),
            ("redirect_uri", REDIRECT),
            ("code_challenge", CHALLENGE),
            ("code_challenge_method", "S256"),
            ("state", STATE),
            ("scope", "mcp"),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    async fn answer(resp: reqwest::Response) -> Answer {
        let status = resp.status();
        let headers = resp.headers().clone();
        let location = headers
            .get("location")
            .map(|l| Url::parse(l.to_str().expect("ascii Location")).expect("absolute Location"));
        Answer {
            status,
            headers,
            location,
            body: resp.text().await.unwrap_or_default(),
        }
    }

    pub async fn authorize(&self, params: &[(String, String)]) -> Answer {
        let resp = self
            .http
            .get(self.url("/oauth/authorize"))
            .query(params)
            .send()
            .await
            .expect("request");
        Self::answer(resp).await
    }

    /// Posts the consent form: the request's parameters plus `fields`, from no page (no
    /// `Origin`, no `Referer`), as a script or SDK driving the flow does.
    pub async fn consent(&self, params: &[(String, String)], fields: &[(&str, &str)]) -> Answer {
        self.consent_with_headers(params, fields, &[]).await
    }

    /// Posts the consent form with `headers` (a browser's `Origin` or `Referer`).
    pub async fn consent_with_headers(
        &self,
        params: &[(String, String)],
        fields: &[(&str, &str)],
        headers: &[(&str, &str)],
    ) -> Answer {
        let mut form: Vec<(String, String)> = params.to_vec();
        form.extend(fields.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())));
        let mut request = self.http.post(self.url("/oauth/authorize")).form(&form);
        for (name, value) in headers {
            request = request.header(*name, *value);
        }
        Self::answer(request.send().await.expect("request")).await
    }

    /// Consents to `params` with the test's key; returns the code.
    pub async fn code_for(&self, params: &[(String, String)]) -> String {
        let answer = self.consent(params, &[("api_key", &self.app.bearer)]).await;
        assert_eq!(answer.status, StatusCode::FOUND, "{}", answer.body);
        answer.param("code").expect("a code")
    }

    pub fn token_form(&self, client_id: &str, code: &str) -> Vec<(String, String)> {
        [
            ("grant_type", "authorization_code"),
            ("code", code),
            ("redirect_uri", REDIRECT),
            ("client_id", client_id),
            ("code_verifier", VERIFIER),
        ]
        .into_iter()
        .map(|(k, v)| (k.to_owned(), v.to_owned()))
        .collect()
    }

    pub async fn token(&self, form: &[(String, String)]) -> (StatusCode, HeaderMap, Value) {
        let resp = self
            .http
            .post(self.url("/oauth/token"))
            .form(form)
            .send()
            .await
            .expect("request");
        let (status, headers) = (resp.status(), resp.headers().clone());
        (status, headers, resp.json().await.unwrap_or(Value::Null))
    }

    /// `tools/list` on `/mcp` with `bearer`; the status.
    pub async fn mcp_status(&self, bearer: &str) -> StatusCode {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/list" }).to_string();
        self.app.post_raw(Some(bearer), body).await.0
    }

    /// A tool of the operator route `/ops`, as the test's own key; its `structuredContent`.
    pub async fn ops(&self, tool: &str, arguments: Value) -> Value {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": { "name": tool, "arguments": arguments } });
        let resp = self
            .http
            .post(self.url("/ops"))
            .bearer_auth(&self.app.bearer)
            .header("accept", "application/json, text/event-stream")
            .json(&body)
            .send()
            .await
            .expect("request");
        let reply: Value = resp.json().await.expect("JSON-RPC reply");
        assert!(reply["result"]["isError"].is_null(), "{tool}: {reply}");
        reply["result"]["structuredContent"].clone()
    }

    /// The test caller's default app id.
    pub async fn default_app_id(&self) -> String {
        let apps = self.ops("svc_ops_list_apps", json!({})).await;
        apps["apps"][0]["appId"].as_str().expect("an app").to_owned()
    }
}

/// `params` with `name` replaced (or added), or removed when `value` is `None`.
pub fn with(params: &[(String, String)], name: &str, value: Option<&str>) -> Vec<(String, String)> {
    let mut changed: Vec<(String, String)> = params.iter().filter(|(n, _)| n != name).cloned().collect();
    if let Some(value) = value {
        changed.push((name.to_owned(), value.to_owned()));
    }
    changed
}
