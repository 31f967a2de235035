//! The issuers' key sets, fetched over HTTP and cached per JWKS URL.

use std::sync::Arc;
use std::time::{Duration, Instant};

use jsonwebtoken::jwk::JwkSet;
use moka::sync::Cache;
use serde::Deserialize;

/// How keys are fetched and kept.
#[derive(Debug, Clone)]
pub struct KeyFetchSettings {
    /// How long a fetched key set is used before it is fetched again.
    pub ttl: Duration,
    /// Shortest time between two fetches of one key set (an unknown `kid` asks for a refresh; a
    /// stream of made-up kids must not turn into a stream of fetches).
    pub refresh_floor: Duration,
    /// Deadline of one fetch.
    pub timeout: Duration,
}

impl Default for KeyFetchSettings {
    fn default() -> Self {
        Self {
            ttl: Duration::from_secs(3600),
            refresh_floor: Duration::from_secs(30),
            timeout: Duration::from_secs(5),
        }
    }
}

/// Largest key set or discovery document read.
const MAX_DOCUMENT_BYTES: usize = 256 * 1024;

#[derive(Clone)]
struct Fetched {
    keys: Arc<JwkSet>,
    at: Instant,
}

pub struct JwksCache {
    http: reqwest::Client,
    settings: KeyFetchSettings,
    /// JWKS URL -> key set.
    sets: Cache<String, Fetched>,
    /// Issuer -> its `jwks_uri` from discovery.
    discovered: Cache<String, String>,
    /// Document URL -> the turn to fetch it: one fetch of a document at a time, and those who
    /// waited read what it fetched (a burst of first tokens, or of made-up kids, is one fetch).
    turns: Cache<String, Arc<tokio::sync::Mutex<()>>>,
    /// Document URL -> when its last fetch failed, and why: those who waited for that fetch's
    /// turn get its failure instead of each waiting out the timeout again, one after another.
    failed: Cache<String, (Instant, String)>,
}

#[derive(Deserialize)]
struct Discovery {
    issuer: String,
    jwks_uri: String,
}

impl JwksCache {
    pub fn new(settings: KeyFetchSettings) -> Self {
        let http = reqwest::Client::builder()
            .timeout(settings.timeout)
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .expect("HTTP client");
        Self {
            http,
            sets: Cache::builder().max_capacity(10_000).time_to_live(settings.ttl).build(),
            discovered: Cache::builder().max_capacity(10_000).time_to_live(settings.ttl).build(),
            turns: Cache::builder()
                .max_capacity(10_000)
                .time_to_idle(Duration::from_secs(60))
                .build(),
            failed: Cache::builder()
                .max_capacity(10_000)
                .time_to_live(Duration::from_secs(60))
                .build(),
            settings,
        }
    }

    /// Where the issuer's keys are: the explicit URL, or its discovery document's `jwks_uri`.
    pub async fn jwks_url(&self, issuer: &str, explicit: Option<&str>) -> Result<String, String> {
        if let Some(url) = explicit {
            return Ok(url.to_owned());
        }
        if let Some(url) = self.discovered.get(issuer) {
            return Ok(url);
        }
        let asked = Instant::now();
        let location = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
        let turn = self.turn(&location);
        let _turn = turn.lock().await;
        if let Some(url) = self.discovered.get(issuer) {
            return Ok(url);
        }
        let discovery: Discovery = self.fetch_in_turn(&location, asked).await?;
        // OpenID Connect Discovery 1.0, section 4.3: the document must name the same issuer.
        if discovery.issuer != issuer {
            let failure = format!("discovery names issuer `{}`", discovery.issuer);
            self.failed.insert(location, (Instant::now(), failure.clone()));
            return Err(failure);
        }
        self.discovered.insert(issuer.to_owned(), discovery.jwks_uri.clone());
        Ok(discovery.jwks_uri)
    }

    /// The key set at `url`; with `kid` unknown to the cached set, fetched again unless the last
    /// fetch is more recent than the refresh floor.
    pub async fn keys(&self, url: &str, kid: Option<&str>) -> Result<Arc<JwkSet>, String> {
        let asked = Instant::now();
        if let Some(keys) = self.usable(url, kid, asked) {
            return Ok(keys);
        }
        let turn = self.turn(url);
        let _turn = turn.lock().await;
        // A fetch that ended while this one waited for its turn answers it too.
        if let Some(keys) = self.usable(url, kid, asked) {
            return Ok(keys);
        }
        if self.sets.contains_key(url) {
            tracing::info!(jwks_url = url, "unknown kid: fetching the issuer's keys again");
        }
        let keys: JwkSet = self.fetch_in_turn(url, asked).await?;
        let fetched = Fetched {
            keys: Arc::new(keys),
            at: Instant::now(),
        };
        self.sets.insert(url.to_owned(), fetched.clone());
        Ok(fetched.keys)
    }

    /// The cached set at `url` when it answers `kid`, or when it was fetched within the refresh
    /// floor or after `asked` (so it is as fresh as a fetch now would be).
    fn usable(&self, url: &str, kid: Option<&str>, asked: Instant) -> Option<Arc<JwkSet>> {
        let cached = self.sets.get(url)?;
        let knows_kid = kid.is_none_or(|kid| cached.keys.find(kid).is_some());
        let fresh = cached.at.elapsed() < self.settings.refresh_floor || cached.at >= asked;
        (knows_kid || fresh).then_some(cached.keys)
    }

    fn turn(&self, url: &str) -> Arc<tokio::sync::Mutex<()>> {
        self.turns.get_with_by_ref(url, Default::default)
    }

    /// Fetches `url`, holding its turn, unless a fetch that ended after `asked` (one this caller
    /// waited for) failed: that failure is the answer.
    async fn fetch_in_turn<T: serde::de::DeserializeOwned>(&self, url: &str, asked: Instant) -> Result<T, String> {
        if let Some((at, failure)) = self.failed.get(url)
            && at >= asked
        {
            return Err(failure);
        }
        let fetched = self.get_json(url).await;
        if let Err(failure) = &fetched {
            self.failed.insert(url.to_owned(), (Instant::now(), failure.clone()));
        }
        fetched
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, String> {
        let mut response = self
            .http
            .get(url)
            .header("accept", "application/json")
            .send()
            .await
            .map_err(|e| format!("GET {url}: {e}"))?;
        if !response.status().is_success() {
            return Err(format!("GET {url}: HTTP {}", response.status()));
        }
        if response.content_length().is_some_and(|n| n > MAX_DOCUMENT_BYTES as u64) {
            return Err(format!("GET {url}: document too large"));
        }
        // Read by chunks: a body of no declared length stops at the bound, not at the deadline.
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(|e| format!("GET {url}: {e}"))? {
            if body.len() + chunk.len() > MAX_DOCUMENT_BYTES {
                return Err(format!("GET {url}: document too large"));
            }
            body.extend_from_slice(&chunk);
        }
        // A key of unknown kind keeps its members as `Value`s: the raw-value marker is refused
        // first (`svc_domain::json_marker`).
        svc_domain::json_marker::refuse_raw_value_marker(&body)
            .and_then(|()| serde_json::from_slice(&body))
            .map_err(|e| format!("GET {url}: not the expected JSON: {e}"))
    }
}
