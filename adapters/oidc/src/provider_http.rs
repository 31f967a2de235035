//! The HTTP client `openidconnect` reaches the provider through (discovery, key set, code
//! exchange): no redirects followed, a deadline, an answer read up to a size bound, and handed
//! to the crate only once it is JSON without serde_json's raw-value marker
//! ([`crate::provider_answer`]).

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use openidconnect::{AsyncHttpClient, HttpRequest, HttpResponse, http};

use crate::provider_answer::refuse_raw_value_markers;

/// Largest answer read from the provider (a discovery document, a key set, a token response).
pub(crate) const MAX_ANSWER_BYTES: usize = 256 * 1024;

/// Why a request to the provider gave the crate no answer.
#[derive(Debug, thiserror::Error)]
pub(crate) enum ProviderHttpError {
    #[error("request failed")]
    Request(#[source] reqwest::Error),
    #[error("HTTP {0}: the answer is over {MAX_ANSWER_BYTES} bytes")]
    TooLarge(http::StatusCode),
    #[error("HTTP {0}: the answer is refused: {1}")]
    Refused(http::StatusCode, #[source] serde_json::Error),
    #[error("the answer is not HTTP")]
    Http(#[source] http::Error),
}

pub(crate) struct ProviderHttp {
    http: reqwest::Client,
}

impl ProviderHttp {
    pub(crate) fn new(timeout: Duration) -> Result<Self, reqwest::Error> {
        let http = reqwest::Client::builder()
            // Following redirects would let a provider send svc's requests anywhere (SSRF).
            .redirect(reqwest::redirect::Policy::none())
            .timeout(timeout)
            .build()?;
        Ok(Self { http })
    }

    async fn answer(&self, request: HttpRequest) -> Result<HttpResponse, ProviderHttpError> {
        let request = reqwest::Request::try_from(request).map_err(ProviderHttpError::Request)?;
        let mut response = self.http.execute(request).await.map_err(ProviderHttpError::Request)?;
        let status = response.status();
        let mut answer = http::Response::builder().status(status).version(response.version());
        for (name, value) in response.headers() {
            answer = answer.header(name, value);
        }
        if response.content_length().is_some_and(|n| n > MAX_ANSWER_BYTES as u64) {
            return Err(ProviderHttpError::TooLarge(status));
        }
        // Read by chunks: an answer of no declared length stops at the bound, not the deadline.
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(ProviderHttpError::Request)? {
            if body.len() + chunk.len() > MAX_ANSWER_BYTES {
                return Err(ProviderHttpError::TooLarge(status));
            }
            body.extend_from_slice(&chunk);
        }
        refuse_raw_value_markers(&body).map_err(|e| ProviderHttpError::Refused(status, e))?;
        answer.body(body).map_err(ProviderHttpError::Http)
    }
}

impl<'c> AsyncHttpClient<'c> for ProviderHttp {
    type Error = ProviderHttpError;
    type Future = Pin<Box<dyn Future<Output = Result<HttpResponse, ProviderHttpError>> + Send + 'c>>;

    fn call(&'c self, request: HttpRequest) -> Self::Future {
        Box::pin(self.answer(request))
    }
}
