//! Clients that name themselves by a URL (Client ID Metadata Documents): the document is fetched
//! through the [`ClientDocumentFetcher`] port, validated by the domain's rules and cached, so a
//! flow's authorize, consent and token requests read it once.

use std::sync::Arc;
use std::time::Duration;

use tokio::sync::Semaphore;

use svc_domain::oauth::{ClientDocumentError, ClientIdUrl, ClientIdUrlError, OAuthClient, client_from_document};

use crate::ports::Clock;
use crate::ports::oauth::{ClientDocumentFetchError, ClientDocumentFetcher};

/// How long a validated document is trusted before it is fetched again.
pub const CLIENT_DOCUMENT_CACHE_SECONDS: u64 = 300;
/// Documents kept at once; the oldest go first.
const CLIENT_DOCUMENT_CACHE_ENTRIES: u64 = 1024;
/// Documents fetched at once. Anyone may name a URL `client_id`, and a fetch may wait its whole
/// timeout on a host that never answers (its name lookup holding a blocking thread meanwhile):
/// past this, a request is refused at once rather than queued behind strangers' URLs.
pub const CLIENT_DOCUMENT_FETCHES_AT_ONCE: usize = 16;

/// Why a URL `client_id` was not accepted. Shown to the person (authorize) or the client (token).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientDocumentRefused {
    #[error("{0}")]
    Url(#[from] ClientIdUrlError),
    #[error("the client's metadata document could not be fetched: {0}")]
    Fetch(#[from] ClientDocumentFetchError),
    #[error("{0}")]
    Document(#[from] ClientDocumentError),
    #[error("this server is fetching as many client metadata documents as it does at once; try again shortly")]
    Busy,
}

#[derive(Clone)]
pub struct ClientDocuments {
    fetcher: Arc<dyn ClientDocumentFetcher>,
    /// Dev mode: `http://127.0.0.1/...` client ids are accepted (the fetcher allows loopback too).
    loopback_http: bool,
    validated: moka::sync::Cache<String, OAuthClient>,
    fetching: Arc<Semaphore>,
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
            fetching: Arc::new(Semaphore::new(CLIENT_DOCUMENT_FETCHES_AT_ONCE)),
        }
    }

    /// The client the document at `client_id` describes. A refused document is not cached: the
    /// client's author may fix it and try again at once.
    pub async fn client(&self, client_id: &str, clock: &dyn Clock) -> Result<OAuthClient, ClientDocumentRefused> {
        let url = ClientIdUrl::parse(client_id, self.loopback_http)?;
        if let Some(client) = self.validated.get(url.as_str()) {
            return Ok(client);
        }
        let Ok(_fetching) = self.fetching.clone().try_acquire_owned() else {
            tracing::warn!(
                client_id = url.as_str(),
                "client metadata document not fetched: fetches at their limit"
            );
            return Err(ClientDocumentRefused::Busy);
        };
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

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};
    use svc_domain::oauth::ClientIdUrl;

    use super::*;

    struct Now;

    impl Clock for Now {
        fn now(&self) -> DateTime<Utc> {
            Utc::now()
        }
    }

    /// A host that answers only when the test lets one fetch through, and then fails.
    struct HeldHost(Arc<Semaphore>);

    #[async_trait::async_trait]
    impl ClientDocumentFetcher for HeldHost {
        async fn fetch(&self, _url: &ClientIdUrl) -> Result<Vec<u8>, ClientDocumentFetchError> {
            self.0.acquire().await.expect("open").forget();
            Err(ClientDocumentFetchError::Unreachable)
        }
    }

    #[tokio::test]
    async fn fetches_past_the_limit_are_refused_at_once_and_admitted_again_once_fetches_end() {
        let host = Arc::new(Semaphore::new(0));
        let documents = ClientDocuments::new(Arc::new(HeldHost(host.clone())), false);
        let url = |i: usize| format!("https://client{i}.example/metadata.json");
        let held: Vec<_> = (0..CLIENT_DOCUMENT_FETCHES_AT_ONCE)
            .map(|i| {
                let documents = documents.clone();
                tokio::spawn(async move { documents.client(&url(i), &Now).await })
            })
            .collect();
        while documents.fetching.available_permits() > 0 {
            tokio::task::yield_now().await;
        }
        let refused = documents.client(&url(99), &Now).await;
        assert_eq!(refused, Err(ClientDocumentRefused::Busy));
        host.add_permits(CLIENT_DOCUMENT_FETCHES_AT_ONCE);
        for fetch in held {
            assert_eq!(
                fetch.await.unwrap(),
                Err(ClientDocumentRefused::Fetch(ClientDocumentFetchError::Unreachable))
            );
        }
        host.add_permits(1);
        assert_eq!(
            documents.client(&url(100), &Now).await,
            Err(ClientDocumentRefused::Fetch(ClientDocumentFetchError::Unreachable)),
            "the slots of ended fetches are taken again"
        );
    }
}
