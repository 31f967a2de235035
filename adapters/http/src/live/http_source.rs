//! `HttpPollableTool`: an operator-declared HTTP data source (`[[live.poll_tools]]`) polled with
//! a GET; its JSON body is the channel payload.

use std::time::Duration;

use async_trait::async_trait;
use serde_json::Value;
use svc_application::ports::pollable::{PollFailure, PollTarget, PollableTool};

/// Headers telling the data source which card it is polled for.
pub const SESSION_HEADER: &str = "x-svc-session-id";
pub const APP_HEADER: &str = "x-svc-app-id";
pub const CHANNEL_HEADER: &str = "x-svc-channel";

pub struct HttpPollableTool {
    url: String,
    interval: Duration,
    timeout: Duration,
    client: reqwest::Client,
}

impl HttpPollableTool {
    pub fn new(url: String, interval: Duration, timeout: Duration) -> Self {
        let client = reqwest::Client::builder()
            // A data source redirecting elsewhere is a misconfiguration, not something to follow.
            .redirect(reqwest::redirect::Policy::none())
            .build()
            .unwrap_or_default();
        Self {
            url,
            interval,
            timeout,
            client,
        }
    }
}

#[async_trait]
impl PollableTool for HttpPollableTool {
    fn interval(&self) -> Duration {
        self.interval
    }

    fn timeout(&self) -> Option<Duration> {
        Some(self.timeout)
    }

    async fn poll(&self, target: &PollTarget) -> Result<Value, PollFailure> {
        let mut response = self
            .client
            .get(&self.url)
            .header("accept", "application/json")
            .header(SESSION_HEADER, &target.session_id)
            .header(APP_HEADER, &target.app_id)
            .header(CHANNEL_HEADER, &target.channel)
            .send()
            .await
            .map_err(|e| {
                tracing::warn!(url = %self.url, error = %e, "tool channel source unreachable");
                PollFailure::Failed("the data source is unreachable".into())
            })?;
        let status = response.status();
        if !status.is_success() {
            return Err(PollFailure::Failed(format!(
                "the data source answered HTTP {}",
                status.as_u16()
            )));
        }
        if response.content_length().is_some_and(|n| n as usize > target.max_bytes) {
            return Err(PollFailure::TooLarge(target.max_bytes));
        }
        let mut body = Vec::new();
        while let Some(chunk) = response
            .chunk()
            .await
            .map_err(|_| PollFailure::Failed("the data source broke off its answer".into()))?
        {
            body.extend_from_slice(&chunk);
            if body.len() > target.max_bytes {
                return Err(PollFailure::TooLarge(target.max_bytes));
            }
        }
        // Another server's answer, parsed into a `Value`: the raw-value marker is refused first.
        svc_domain::json_marker::refuse_raw_value_marker(&body)
            .and_then(|()| serde_json::from_slice(&body))
            .map_err(|_| PollFailure::NotJson("the data source did not answer JSON".into()))
    }
}
