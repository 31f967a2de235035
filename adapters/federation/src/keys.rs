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
        let location = format!("{}/.well-known/openid-configuration", issuer.trim_end_matches('/'));
        let discovery: Discovery = self.get_json(&location).await?;
        // OpenID Connect Discovery 1.0, section 4.3: the document must name the same issuer.
        if discovery.issuer != issuer {
            return Err(format!("discovery names issuer `{}`", discovery.issuer));
        }
        self.discovered.insert(issuer.to_owned(), discovery.jwks_uri.clone());
        Ok(discovery.jwks_uri)
    }

    /// The key set at `url`; with `kid` unknown to the cached set, fetched again unless the last
    /// fetch is more recent than the refresh floor.
    pub async fn keys(&self, url: &str, kid: Option<&str>) -> Result<Arc<JwkSet>, String> {
        if let Some(cached) = self.sets.get(url) {
            let knows_kid = kid.is_none_or(|kid| cached.keys.find(kid).is_some());
            if knows_kid || cached.at.elapsed() < self.settings.refresh_floor {
                return Ok(cached.keys);
            }
            tracing::info!(jwks_url = url, "unknown kid: fetching the issuer's keys again");
        }
        let keys: JwkSet = self.get_json(url).await?;
        let fetched = Fetched {
            keys: Arc::new(keys),
            at: Instant::now(),
        };
        self.sets.insert(url.to_owned(), fetched.clone());
        Ok(fetched.keys)
    }

    async fn get_json<T: serde::de::DeserializeOwned>(&self, url: &str) -> Result<T, String> {
        let response = self
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
        let body = response.bytes().await.map_err(|e| format!("GET {url}: {e}"))?;
        if body.len() > MAX_DOCUMENT_BYTES {
            return Err(format!("GET {url}: document too large"));
        }
        serde_json::from_slice(&body).map_err(|e| format!("GET {url}: not the expected JSON: {e}"))
    }
}
