//! Provider failures, classified once at the seam so the retry policy and the render outcome
//! never look at status codes or bodies.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::HeaderMap;
use serde_json::Value;
use svc_application::ports::generation::GenerationError;

/// What went wrong talking to a provider.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProviderErrorKind {
    /// 401 or 403: the key is missing, wrong or revoked.
    Unauthorized,
    /// 429: rate limited or out of quota.
    RateLimited,
    /// 529, or an `overloaded` error inside the stream.
    Overloaded,
    /// 500, 502, 503, 504 and other 5xx.
    Unavailable,
    /// Any other 4xx: the request itself is wrong (unknown model, too long, ...).
    Rejected,
    /// No connection could be made.
    Connect,
    /// No byte within the idle timeout, or the attempt's deadline passed.
    Timeout,
    /// The body is not the provider's wire format, or it ended before its end marker.
    Malformed,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{provider}: {message}")]
pub struct ProviderError {
    pub kind: ProviderErrorKind,
    pub provider: String,
    pub message: String,
    /// How long the provider asked us to wait (`retry-after`, `retry-after-ms`, Gemini's `retryDelay`).
    pub retry_after: Option<Duration>,
    /// The provider's HTTP status, when it answered with one.
    pub status: Option<u16>,
}

impl ProviderError {
    pub fn new(kind: ProviderErrorKind, provider: &str, message: impl Into<String>) -> Self {
        Self {
            kind,
            provider: provider.to_owned(),
            message: message.into(),
            retry_after: None,
            status: None,
        }
    }

    /// A non-success HTTP answer, with the provider's own message when its body carries one.
    pub fn from_status(provider: &str, status: StatusCode, headers: &HeaderMap, body: &str) -> Self {
        let kind = match status.as_u16() {
            401 | 403 => ProviderErrorKind::Unauthorized,
            429 => ProviderErrorKind::RateLimited,
            529 => ProviderErrorKind::Overloaded,
            408 => ProviderErrorKind::Timeout,
            500..=599 => ProviderErrorKind::Unavailable,
            _ => ProviderErrorKind::Rejected,
        };
        let detail = body_message(body).unwrap_or_else(|| status.canonical_reason().unwrap_or("").to_owned());
        Self {
            kind,
            provider: provider.to_owned(),
            message: format!("HTTP {}: {}", status.as_u16(), truncate(&detail, 300)),
            retry_after: retry_after(headers).or_else(|| body_retry_delay(body)),
            status: Some(status.as_u16()),
        }
    }

    /// Whether another attempt can help: the provider did no work we would lose, and the cause
    /// is passing (rate limits, overload, outages, timeouts, refused connections).
    pub fn is_transient(&self) -> bool {
        matches!(
            self.kind,
            ProviderErrorKind::RateLimited
                | ProviderErrorKind::Overloaded
                | ProviderErrorKind::Unavailable
                | ProviderErrorKind::Connect
                | ProviderErrorKind::Timeout
        )
    }

    /// The documented render outcome of this failure (`docs/generation.md`).
    pub fn into_generation_error(self) -> GenerationError {
        let text = self.to_string();
        match self.kind {
            ProviderErrorKind::Unauthorized => GenerationError::NoCredentials(format!(
                "{} (the provider rejected the key: {})",
                self.provider, self.message
            )),
            ProviderErrorKind::RateLimited | ProviderErrorKind::Overloaded => GenerationError::Overloaded {
                message: text,
                retry_after_seconds: self.retry_after.map(|d| d.as_secs().max(1)),
            },
            ProviderErrorKind::Unavailable
            | ProviderErrorKind::Rejected
            | ProviderErrorKind::Connect
            | ProviderErrorKind::Timeout
            | ProviderErrorKind::Malformed => GenerationError::ProductionFailed(text),
        }
    }

    /// A transport error from reqwest while sending or reading.
    pub fn from_transport(provider: &str, error: &reqwest::Error) -> Self {
        let kind = if error.is_connect() {
            ProviderErrorKind::Connect
        } else if error.is_timeout() {
            ProviderErrorKind::Timeout
        } else if error.is_body() || error.is_decode() {
            ProviderErrorKind::Malformed
        } else {
            ProviderErrorKind::Unavailable
        };
        Self::new(kind, provider, format!("{error}"))
    }
}

/// The error message in a provider's error body: OpenAI, Anthropic and Gemini use
/// `{"error": {"message": ...}}`, Ollama `{"error": "..."}`.
pub fn body_message(body: &str) -> Option<String> {
    let value: Value = super::untrusted_json::parse(body).ok()?;
    let error = value.get("error")?;
    error
        .get("message")
        .and_then(Value::as_str)
        .or_else(|| error.as_str())
        .map(str::to_owned)
}

/// `retry-after-ms` (OpenAI) or `retry-after` in seconds. An HTTP-date is not honoured: the
/// policy's own backoff applies then.
fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let header = |name: &str| headers.get(name).and_then(|v| v.to_str().ok()).map(str::trim);
    if let Some(ms) = header("retry-after-ms").and_then(|v| v.parse::<f64>().ok()) {
        return Some(Duration::from_secs_f64(ms.max(0.0) / 1000.0));
    }
    header("retry-after")
        .and_then(|v| v.parse::<f64>().ok())
        .map(|s| Duration::from_secs_f64(s.max(0.0)))
}

/// Gemini's `RetryInfo` detail: `{"error": {"details": [{"retryDelay": "17s"}]}}`.
fn body_retry_delay(body: &str) -> Option<Duration> {
    let value: Value = super::untrusted_json::parse(body).ok()?;
    value
        .pointer("/error/details")?
        .as_array()?
        .iter()
        .find_map(|detail| detail.get("retryDelay").and_then(Value::as_str))
        .and_then(|delay| delay.strip_suffix('s'))
        .and_then(|seconds| seconds.parse::<f64>().ok())
        .map(|s| Duration::from_secs_f64(s.max(0.0)))
}

pub(crate) fn truncate(text: &str, max_chars: usize) -> String {
    match text.char_indices().nth(max_chars) {
        Some((cut, _)) => format!("{}…", &text[..cut]),
        None => text.to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for (name, value) in pairs {
            map.insert(*name, HeaderValue::from_str(value).unwrap());
        }
        map
    }

    #[test]
    fn statuses_map_to_kinds_and_outcomes() {
        let cases = [
            (401, ProviderErrorKind::Unauthorized, "NO_CREDENTIALS", false),
            (403, ProviderErrorKind::Unauthorized, "NO_CREDENTIALS", false),
            (429, ProviderErrorKind::RateLimited, "GENERATION_QUEUE_OVERLOADED", true),
            (529, ProviderErrorKind::Overloaded, "GENERATION_QUEUE_OVERLOADED", true),
            (500, ProviderErrorKind::Unavailable, "PRODUCTION_FAILED", true),
            (503, ProviderErrorKind::Unavailable, "PRODUCTION_FAILED", true),
            (400, ProviderErrorKind::Rejected, "PRODUCTION_FAILED", false),
            (404, ProviderErrorKind::Rejected, "PRODUCTION_FAILED", false),
        ];
        for (status, kind, code, transient) in cases {
            let e = ProviderError::from_status("openai", StatusCode::from_u16(status).unwrap(), &HeaderMap::new(), "");
            assert_eq!(e.kind, kind, "{status}");
            assert_eq!(e.is_transient(), transient, "{status}");
            assert_eq!(e.into_generation_error().render_code(), code, "{status}");
        }
    }

    #[test]
    fn retry_hints_are_read_from_headers_and_gemini_bodies() {
        let s = StatusCode::TOO_MANY_REQUESTS;
        let e = ProviderError::from_status("x", s, &headers(&[("retry-after", "7")]), "");
        assert_eq!(e.retry_after, Some(Duration::from_secs(7)));
        let e = ProviderError::from_status(
            "x",
            s,
            &headers(&[("retry-after-ms", "1500"), ("retry-after", "9")]),
            "",
        );
        assert_eq!(e.retry_after, Some(Duration::from_millis(1500)));
        let gemini = r#"{"error":{"code":429,"message":"Resource exhausted","status":"RESOURCE_EXHAUSTED",
            "details":[{"@type":"type.googleapis.com/google.rpc.RetryInfo","retryDelay":"17s"}]}}"#;
        let e = ProviderError::from_status("google", s, &HeaderMap::new(), gemini);
        assert_eq!(e.retry_after, Some(Duration::from_secs(17)));
        assert!(e.message.contains("Resource exhausted"), "{}", e.message);
    }

    #[test]
    fn provider_messages_are_quoted() {
        assert_eq!(
            body_message(r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#),
            Some("invalid x-api-key".into())
        );
        assert_eq!(
            body_message(r#"{"error":"model \"llama9\" not found, try pulling it first"}"#),
            Some("model \"llama9\" not found, try pulling it first".into())
        );
        assert_eq!(body_message("<html>bad gateway</html>"), None);
    }
}
