//! Clients that name themselves by a URL (Client ID Metadata Documents): the document is fetched
//! through the [`ClientDocumentFetcher`] port, validated by the domain's rules and cached, so a
//! flow's authorize, consent and token requests read it once.

use std::sync::Arc;
use std::time::Duration;

use svc_domain::oauth::{ClientDocumentError, ClientIdUrl, ClientIdUrlError, OAuthClient, client_from_document};

use crate::ports::Clock;
use crate::ports::oauth::{ClientDocumentFetchError, ClientDocumentFetcher};

/// How long a validated document is trusted before it is fetched again.
pub const CLIENT_DOCUMENT_CACHE_SECONDS: u64 = 300;
/// Documents kept at once; the oldest go first.
const CLIENT_DOCUMENT_CACHE_ENTRIES: u64 = 1024;

/// Why a URL `client_id` was not accepted. Shown to the person (authorize) or the client (token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientDocumentRefused {
    #[error("{0}")]
    Url(#[from] ClientIdUrlError),
    #[error("the client's metadata document could not be fetched: {0}")]
    Fetch(#[from] ClientDocumentFetchError),
    #[error("{0}")]
    Document(#[from] ClientDocumentError),
}

#[derive(Clone)]
pub struct ClientDocuments {
    fetcher: Arc<dyn ClientDocumentFetcher>,
    /// Dev mode: `http://127.0.0.1/...` client ids are accepted (the fetcher allows loopback too).
    loopback_http: bool,
    validated: moka::sync::Cache<String, OAuthClient>,
}

impl ClientDocuments {
    pub fn new(fetcher: Arc<dyn ClientDocumentFetcher>, loopback_http: bool) -> Self {
        Self {
            fetcher,
            loopback_http,
            validated: moka::sync::Cache::builder()
                .max_capacity(CLIENT_DOCUMENT_CACHE_ENTRIES)
                .time_to_live(Duration::from_secs(CLIENT_DOCUMENT_CACHE_SECONDS))
                .build(),
        }
    }

    /// The client the document at `client_id` describes. A refused document is not cached: the
    /// client's author may fix it and try again at once.
    pub async fn client(&self, client_id: &str, clock: &dyn Clock) -> Result<OAuthClient, ClientDocumentRefused> {
        let url = ClientIdUrl::parse(client_id, self.loopback_http)?;
        if let Some(client) = self.validated.get(url.as_str()) {
            return Ok(client);
        }
        let document = self.fetcher.fetch(&url).await.inspect_err(|error| {
            tracing::info!(client_id = url.as_str(), %error, "client metadata document not fetched");
        })?;
        let client = client_from_document(&url, &document, clock.now()).inspect_err(|error| {
            tracing::info!(client_id = url.as_str(), %error, "client metadata document refused");
        })?;
        self.validated.insert(url.as_str().to_owned(), client.clone());
        Ok(client)
    }
}
