//! The HTTP client of the artifact registry: one method per route, every shape in [`wire`].
//! Route paths and bodies follow docs/registry.md; this is the one module to change if they move.

mod progress;
pub mod wire;

use std::time::Duration;

use futures_util::StreamExt as _;
use reqwest::{Method, StatusCode, Url};
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::Value;

pub(crate) use crate::telemetry::escaped_text;
use wire::{
    AuthorKey, ConformanceReport, ErrorBody, PackageVersion, PublishRequest, Published, SearchQuery, SearchResults,
    VersionListing, WhoAmI,
};

/// The piece of a publish body sent between two progress updates.
const UPLOAD_CHUNK: usize = 64 * 1024;
/// A registry (or a bundle's host) that accepts no connection within this is unreachable.
const CONNECT_TIMEOUT: Duration = Duration::from_secs(10);
/// A registry that sends nothing for this long, mid-answer, has stopped answering.
const READ_TIMEOUT: Duration = Duration::from_secs(30);
/// Most time one call (a JSON answer: search, listing, version, publish's answer excluded) takes
/// in all, however it trickles: a server sending a byte every few seconds never trips
/// `READ_TIMEOUT` (docs/registry-cli.md, "Time limits").
const REQUEST_DEADLINE: Duration = Duration::from_secs(120);
/// Most time a publish (its upload of up to 8 MiB included) or a bundle download takes in all.
const TRANSFER_DEADLINE: Duration = Duration::from_secs(600);
/// The largest JSON answer read: a search of 100 hits or a version's detail is far smaller.
const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// The largest bundle fetched: the registry accepts bundles of at most 6 MiB.
const MAX_BUNDLE_BYTES: usize = 8 * 1024 * 1024;

/// Why a registry call failed.
#[derive(Debug, thiserror::Error)]
pub enum RegistryError {
    #[error("`{0}` is not a registry URL (expected http:// or https://)")]
    BadUrl(String),
    #[error("cannot reach the registry at {url}: {reason}")]
    Transport { url: String, reason: String },
    /// The registry's own words are shown escaped (`escaped_text`): a terminal shows them, and
    /// a registry must not drive it.
    #[error("the registry answered {status}: {} ({})", escaped_text(&.body.message), escaped_text(&.body.error))]
    Api { status: u16, body: Box<ErrorBody> },
    #[error("the registry answered {status} with an unexpected body: {}", escaped_text(.snippet))]
    Unexpected { status: u16, snippet: String },
    #[error("{url} sent more than {limit} bytes; refusing the rest")]
    TooLarge { url: String, limit: usize },
    #[error("{url} did not finish answering within {} s; giving up", .after.as_secs())]
    TimedOut { url: String, after: Duration },
}

impl RegistryError {
    /// The registry's error code (`version_yanked`, `unauthorized`, ...), when it sent one.
    pub fn code(&self) -> Option<&str> {
        match self {
            Self::Api { body, .. } => Some(&body.error),
            _ => None,
        }
    }
}

/// A registry at `base`, with the bearer token when the command has one.
#[derive(Debug, Clone)]
pub struct RegistryClient {
    base: Url,
    token: Option<String>,
    http: reqwest::Client,
    deadlines: Deadlines,
}

/// How long one call may take in all: a JSON call, and a publish or bundle download.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Deadlines {
    pub request: Duration,
    pub transfer: Duration,
}

impl RegistryClient {
    pub fn new(base: &str, token: Option<String>) -> Result<Self, RegistryError> {
        Self::with_deadlines(
            base,
            token,
            Deadlines {
                request: REQUEST_DEADLINE,
                transfer: TRANSFER_DEADLINE,
            },
        )
    }

    /// [`Self::new`] with other deadlines (tests scale them down).
    pub(crate) fn with_deadlines(
        base: &str,
        token: Option<String>,
        deadlines: Deadlines,
    ) -> Result<Self, RegistryError> {
        let mut base = Url::parse(base).map_err(|_| RegistryError::BadUrl(base.to_owned()))?;
        if !matches!(base.scheme(), "http" | "https") || base.cannot_be_a_base() {
            return Err(RegistryError::BadUrl(base.to_string()));
        }
        // `https://host/prefix` and `https://host/prefix/` name the same registry.
        if !base.path().ends_with('/') {
            let path = format!("{}/", base.path());
            base.set_path(&path);
        }
        let http = reqwest::Client::builder()
            .user_agent(concat!("svc/", env!("CARGO_PKG_VERSION")))
            .connect_timeout(CONNECT_TIMEOUT)
            .read_timeout(READ_TIMEOUT)
            .build()
            .map_err(|e| RegistryError::Transport {
                url: base.to_string(),
                reason: e.to_string(),
            })?;
        Ok(Self {
            base,
            token,
            http,
            deadlines,
        })
    }

    pub fn base_url(&self) -> &Url {
        &self.base
    }

    /// `GET /whoami`: who the token belongs to.
    pub async fn whoami(&self) -> Result<WhoAmI, RegistryError> {
        self.call(Method::GET, &["whoami"], None::<&()>, &[]).await
    }

    /// `POST /author-keys` with the base64 raw public key.
    pub async fn register_author_key(&self, public_key: &str) -> Result<AuthorKey, RegistryError> {
        let body = serde_json::json!({ "publicKey": public_key });
        self.call(Method::POST, &["author-keys"], Some(&body), &[]).await
    }

    /// `POST /publish`: the body (up to 8 MiB with the bundle) is sent with a progress bar on a
    /// terminal.
    pub async fn publish(&self, request: &PublishRequest) -> Result<Published, RegistryError> {
        let bytes = serde_json::to_vec(request).expect("a publish request serialises");
        let url = self.url(&["publish"], &[]);
        let bar = progress::upload(bytes.len() as u64, &url);
        let chunks: Vec<Vec<u8>> = bytes.chunks(UPLOAD_CHUNK).map(<[u8]>::to_vec).collect();
        let sent = bar.clone();
        let body = futures_util::stream::iter(chunks).map(move |chunk| {
            sent.inc(chunk.len() as u64);
            Ok::<_, std::io::Error>(chunk)
        });
        let request = self
            .authorised(self.http.post(url.clone()))
            .header(reqwest::header::CONTENT_TYPE, "application/json")
            .header(reqwest::header::CONTENT_LENGTH, bytes.len())
            .body(reqwest::Body::wrap_stream(body));
        let answer = within(self.deadlines.transfer, &url, answer(request, &url)).await;
        bar.finish_and_clear();
        answer
    }

    /// `GET /search` with the filters that are set.
    pub async fn search(&self, query: &SearchQuery) -> Result<SearchResults, RegistryError> {
        let pairs: Vec<(&str, &str)> = [
            ("q", &query.q),
            ("kind", &query.kind),
            ("hook", &query.hook),
            ("tag", &query.tag),
            ("author", &query.author),
        ]
        .into_iter()
        .filter_map(|(k, v)| v.as_deref().map(|v| (k, v)))
        .collect();
        self.call(Method::GET, &["search"], None::<&()>, &pairs).await
    }

    /// `GET /pkg/{scope}/{name}`.
    pub async fn versions(&self, scope: &str, name: &str) -> Result<VersionListing, RegistryError> {
        self.call(Method::GET, &["pkg", scope, name], None::<&()>, &[]).await
    }

    /// `GET /pkg/{scope}/{name}/{version}`.
    pub async fn package_version(
        &self,
        scope: &str,
        name: &str,
        version: &str,
    ) -> Result<PackageVersion, RegistryError> {
        self.call(Method::GET, &["pkg", scope, name, version], None::<&()>, &[])
            .await
    }

    /// `POST /conformance/check`.
    pub async fn conformance_check(
        &self,
        manifest: &Value,
        bundle: Option<&str>,
    ) -> Result<ConformanceReport, RegistryError> {
        let mut body = serde_json::json!({ "manifest": manifest });
        if let Some(bundle) = bundle {
            body["bundle"] = Value::String(bundle.to_owned());
        }
        self.call(Method::POST, &["conformance", "check"], Some(&body), &[])
            .await
    }

    /// The bytes at `url` (a version's `bundleUrl`), with a progress bar on a terminal. The token
    /// goes only to the registry's own origin.
    pub async fn fetch_bundle(&self, url: &str) -> Result<Vec<u8>, RegistryError> {
        let parsed = Url::parse(url).map_err(|_| RegistryError::BadUrl(url.to_owned()))?;
        let mut request = self.http.get(parsed.clone());
        if parsed.origin() == self.base.origin()
            && let Some(token) = &self.token
        {
            request = request.bearer_auth(token);
        }
        let fetch = async {
            let transport = |e: reqwest::Error| RegistryError::Transport {
                url: url.to_owned(),
                reason: e.to_string(),
            };
            let response = request.send().await.map_err(transport)?;
            let status = response.status();
            if !status.is_success() {
                let bytes = read_capped(response, MAX_ANSWER_BYTES, parsed.as_str(), |_| {}).await?;
                return Err(error_from(status, &bytes));
            }
            let bar = progress::download(response.content_length(), &parsed);
            let bytes = read_capped(response, MAX_BUNDLE_BYTES, parsed.as_str(), |read| bar.inc(read as u64)).await;
            bar.finish_and_clear();
            bytes
        };
        within(self.deadlines.transfer, &parsed, fetch).await
    }

    fn url(&self, segments: &[&str], query: &[(&str, &str)]) -> Url {
        let mut url = self.base.clone();
        {
            let mut path = url
                .path_segments_mut()
                .expect("checked in new: the base URL has a path");
            path.pop_if_empty();
            path.extend(segments);
        }
        if !query.is_empty() {
            url.query_pairs_mut().extend_pairs(query);
        }
        url
    }

    async fn call<B: Serialize + ?Sized, T: DeserializeOwned>(
        &self,
        method: Method,
        segments: &[&str],
        body: Option<&B>,
        query: &[(&str, &str)],
    ) -> Result<T, RegistryError> {
        let url = self.url(segments, query);
        let mut request = self.authorised(self.http.request(method, url.clone()));
        if let Some(body) = body {
            request = request.json(body);
        }
        within(self.deadlines.request, &url, answer(request, &url)).await
    }

    fn authorised(&self, request: reqwest::RequestBuilder) -> reqwest::RequestBuilder {
        match &self.token {
            Some(token) => request.bearer_auth(token),
            None => request,
        }
    }
}

/// `call`'s outcome, or `TimedOut` once `deadline` has passed since it began (its connection is
/// dropped with it).
async fn within<T>(
    deadline: Duration,
    url: &Url,
    call: impl Future<Output = Result<T, RegistryError>>,
) -> Result<T, RegistryError> {
    tokio::time::timeout(deadline, call).await.unwrap_or_else(|_| {
        Err(RegistryError::TimedOut {
            url: url.to_string(),
            after: deadline,
        })
    })
}

/// `response`'s body, refused past `limit` bytes (a declared length over it is refused before
/// reading); `progress` hears each piece's length.
async fn read_capped(
    mut response: reqwest::Response,
    limit: usize,
    url: &str,
    progress: impl Fn(usize),
) -> Result<Vec<u8>, RegistryError> {
    let too_large = || RegistryError::TooLarge {
        url: url.to_owned(),
        limit,
    };
    if response.content_length().is_some_and(|length| length > limit as u64) {
        return Err(too_large());
    }
    let mut bytes = Vec::new();
    while let Some(chunk) = response.chunk().await.map_err(|e| RegistryError::Transport {
        url: url.to_owned(),
        reason: e.to_string(),
    })? {
        if bytes.len() + chunk.len() > limit {
            return Err(too_large());
        }
        bytes.extend_from_slice(&chunk);
        progress(chunk.len());
    }
    Ok(bytes)
}

/// Sends `request` and reads its JSON answer, or the registry's error.
async fn answer<T: DeserializeOwned>(request: reqwest::RequestBuilder, url: &Url) -> Result<T, RegistryError> {
    let transport = |e: reqwest::Error| RegistryError::Transport {
        url: url.to_string(),
        reason: e.to_string(),
    };
    let response = request.send().await.map_err(transport)?;
    let status = response.status();
    let bytes = read_capped(response, MAX_ANSWER_BYTES, url.as_str(), |_| {}).await?;
    if !status.is_success() {
        return Err(error_from(status, &bytes));
    }
    // A manifest is read into a `Value`: serde_json's raw-value marker from a registry we do not
    // control is refused first (`svc_domain::json_marker`).
    svc_domain::json_marker::refuse_raw_value_marker(&bytes)
        .and_then(|()| serde_json::from_slice(&bytes))
        .map_err(|_| RegistryError::Unexpected {
            status: status.as_u16(),
            snippet: snippet(&bytes),
        })
}

fn error_from(status: StatusCode, bytes: &[u8]) -> RegistryError {
    match serde_json::from_slice::<ErrorBody>(bytes) {
        Ok(body) => RegistryError::Api {
            status: status.as_u16(),
            body: Box::new(body),
        },
        Err(_) => RegistryError::Unexpected {
            status: status.as_u16(),
            snippet: snippet(bytes),
        },
    }
}

/// At most 200 characters of a body, for an error message.
fn snippet(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).chars().take(200).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn routes_are_built_under_the_base_path_with_the_scope_and_its_at_sign() {
        let client = RegistryClient::new("https://reg.example/api", None).unwrap();
        assert_eq!(
            client.url(&["pkg", "@acme", "chart", "1.2.3"], &[]).as_str(),
            "https://reg.example/api/pkg/@acme/chart/1.2.3"
        );
        let client = RegistryClient::new("http://127.0.0.1:7000/", None).unwrap();
        assert_eq!(
            client.url(&["search"], &[("q", "a b"), ("tag", "x&y")]).as_str(),
            "http://127.0.0.1:7000/search?q=a+b&tag=x%26y"
        );
    }

    #[test]
    fn a_base_that_is_not_http_is_refused() {
        for bad in ["ftp://reg.example", "not a url", "mailto:a@b"] {
            assert!(
                matches!(RegistryClient::new(bad, None), Err(RegistryError::BadUrl(_))),
                "{bad}"
            );
        }
    }

    #[test]
    fn an_error_body_keeps_its_code_and_a_non_json_body_its_text() {
        let err = error_from(
            StatusCode::GONE,
            br#"{"error":"version_yanked","message":"yanked","reason":"broken","manifest":{"kind":"gadget"}}"#,
        );
        assert_eq!(err.code(), Some("version_yanked"));
        assert_eq!(err.to_string(), "the registry answered 410: yanked (version_yanked)");
        let err = error_from(StatusCode::BAD_GATEWAY, b"<html>bad gateway</html>");
        assert_eq!(err.code(), None);
        assert!(err.to_string().contains("<html>bad gateway"), "{err}");
    }

    /// A registry that answers its headers, then one byte of body at a time, slower than any
    /// reader gives up on a silence but never finishing: the call ends at its deadline.
    #[tokio::test]
    async fn a_trickling_answer_ends_at_the_calls_deadline() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};

        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
        let address = listener.local_addr().unwrap();
        tokio::spawn(async move {
            while let Ok((mut socket, _)) = listener.accept().await {
                tokio::spawn(async move {
                    let mut request = [0u8; 4096];
                    let _ = socket.read(&mut request).await;
                    let head = "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 1000000\r\n\r\n";
                    if socket.write_all(head.as_bytes()).await.is_err() {
                        return;
                    }
                    loop {
                        if socket.write_all(b" ").await.is_err() {
                            return;
                        }
                        tokio::time::sleep(Duration::from_millis(200)).await;
                    }
                });
            }
        });
        let deadline = Duration::from_millis(800);
        let client = RegistryClient::with_deadlines(
            &format!("http://{address}"),
            None,
            Deadlines {
                request: deadline,
                transfer: deadline,
            },
        )
        .unwrap();
        // The guard only keeps a failing test from hanging; the deadline is what ends the call.
        let guard = Duration::from_secs(20);
        let searched = tokio::time::timeout(guard, client.search(&SearchQuery::default()))
            .await
            .expect("the search ended");
        match searched {
            Err(RegistryError::TimedOut { url, after }) => {
                assert_eq!((url, after), (format!("http://{address}/search"), deadline));
            }
            other => panic!("expected TimedOut, got {other:?}"),
        }
        let bundle = format!("http://{address}/bundles/sha384/00");
        let fetched = tokio::time::timeout(guard, client.fetch_bundle(&bundle))
            .await
            .expect("the download ended");
        assert!(matches!(fetched, Err(RegistryError::TimedOut { .. })), "{fetched:?}");
    }

    #[test]
    fn a_registrys_error_text_is_shown_escaped() {
        let error = error_from(
            StatusCode::BAD_REQUEST,
            br#"{"error":"bad\u001b[2J","message":"no\u009b31m\nway"}"#,
        );
        let shown = error.to_string();
        assert_eq!(shown, "the registry answered 400: no\\u{9b}31m\\nway (bad\\x1b[2J)");
        let raw = error_from(StatusCode::BAD_GATEWAY, b"<html>\x1b[31m</html>");
        assert_eq!(
            raw.to_string(),
            "the registry answered 502 with an unexpected body: <html>\\x1b[31m</html>"
        );
    }
}
