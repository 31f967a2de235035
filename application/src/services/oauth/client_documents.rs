//! Clients that name themselves by a URL (Client ID Metadata Documents): the document is fetched
//! through the [`ClientDocumentFetcher`] port, validated by the domain's rules and cached, so a
//! flow's authorize, consent and token requests read it once.

use std::sync::Arc;
use std::time::Duration;

use svc_domain::oauth::{ClientDocumentError, ClientIdUrl, ClientIdUrlError, OAuthClient, client_from_document};

use crate::ports::Clock;
use crate::ports::oauth::{ClientDocumentFetchError, ClientDocumentFetcher};

use super::document_fetch_slots::DocumentFetchSlots;

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
    #[error("this server is fetching as many client metadata documents as it does at once; try again shortly")]
    Busy,
    #[error(
        "this server is fetching as many client metadata documents from the domain of this client_id as it does from one domain at once; try again shortly"
    )]
    HostBusy,
}

impl ClientDocumentRefused {
    /// Refused for the fetches already in flight, not for the client: the same request may pass
    /// shortly (answered 503, not 400 or 401).
    pub fn is_busy(&self) -> bool {
        matches!(self, Self::Busy | Self::HostBusy)
    }
}

#[derive(Clone)]
pub struct ClientDocuments {
    fetcher: Arc<dyn ClientDocumentFetcher>,
    /// Dev mode: `http://127.0.0.1/...` client ids are accepted (the fetcher allows loopback too).
    loopback_http: bool,
    validated: moka::sync::Cache<String, OAuthClient>,
    fetching: DocumentFetchSlots,
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
            fetching: DocumentFetchSlots::new(),
        }
    }

    /// The client the document at `client_id` describes. A refused document is not cached: the
    /// client's author may fix it and try again at once.
    pub async fn client(&self, client_id: &str, clock: &dyn Clock) -> Result<OAuthClient, ClientDocumentRefused> {
        let url = ClientIdUrl::parse(client_id, self.loopback_http)?;
        if let Some(client) = self.validated.get(url.as_str()) {
            return Ok(client);
        }
        let _fetching = self.fetching.try_take(&url.host()).inspect_err(|refused| {
            tracing::warn!(
                client_id = url.as_str(),
                %refused,
                "client metadata document not fetched: fetches at their limit"
            );
        })?;
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
    use tokio::sync::Semaphore;

    use super::super::document_fetch_slots::CLIENT_DOCUMENT_FETCHES_AT_ONCE;
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
        while documents.fetching.free() > 0 {
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
