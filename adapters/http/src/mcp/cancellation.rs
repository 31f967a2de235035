//! `notifications/cancelled` (MCP): a client cancels one of its requests that is still running,
//! say a `svc_render` waiting on a language model. The request's future is dropped, which frees
//! its generation slot and aborts the upstream provider call; nothing is committed, so its
//! handshake can still be rendered. A closed connection is not a cancellation (the MCP transport
//! rules say so): a render whose client went away finishes and fills the blueprint cache.
//!
//! Requests are keyed by who sent them and their JSON-RPC id, so a caller can only cancel its own.

use std::collections::HashMap;
use std::future::Future;
use std::sync::Mutex;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::future::{AbortHandle, Abortable};
use serde_json::Value;
use svc_protocol::REQUEST_CANCELLED;

use super::jsonrpc::RpcFailure;

/// The requests running now, by sender and id.
#[derive(Default)]
pub struct InFlightRequests {
    running: Mutex<HashMap<(String, String), (u64, AbortHandle)>>,
    next_ticket: AtomicU64,
}

/// Who sends the requests of one POST: the cancellations it may make are its own.
pub struct CancelScope<'a> {
    pub requests: &'a InFlightRequests,
    pub sender: String,
}

impl InFlightRequests {
    /// Runs `work` for request `id`, unless `notifications/cancelled` for it arrives first.
    pub async fn run<F>(&self, sender: &str, id: &Value, work: F) -> Result<Value, RpcFailure>
    where
        F: Future<Output = Result<Value, RpcFailure>>,
    {
        let key = (sender.to_owned(), id.to_string());
        let ticket = self.next_ticket.fetch_add(1, Ordering::Relaxed);
        let (handle, registration) = AbortHandle::new_pair();
        self.lock().insert(key.clone(), (ticket, handle));
        let _deregister = Deregister {
            requests: self,
            key,
            ticket,
        };
        match Abortable::new(work, registration).await {
            Ok(answer) => answer,
            Err(_) => Err(RpcFailure::new(
                REQUEST_CANCELLED,
                "the request was cancelled by notifications/cancelled",
            )),
        }
    }

    /// Handles `notifications/cancelled { requestId, reason? }`; an unknown or finished request
    /// is ignored, as the MCP rules ask. Returns whether a running request was cancelled.
    pub fn cancel(&self, sender: &str, params: &Value) -> bool {
        let Some(id) = params.get("requestId").filter(|id| id.is_string() || id.is_number()) else {
            return false;
        };
        match self.lock().remove(&(sender.to_owned(), id.to_string())) {
            Some((_, handle)) => {
                let reason = params.get("reason").and_then(Value::as_str).unwrap_or_default();
                tracing::info!(request_id = %id, reason, "request cancelled by the client");
                handle.abort();
                true
            }
            None => false,
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<(String, String), (u64, AbortHandle)>> {
        self.running.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// Forgets a finished (or dropped) request, unless a newer request reused its id.
struct Deregister<'a> {
    requests: &'a InFlightRequests,
    key: (String, String),
    ticket: u64,
}

impl Drop for Deregister<'_> {
    fn drop(&mut self) {
        let mut running = self.requests.lock();
        if running.get(&self.key).is_some_and(|(ticket, _)| *ticket == self.ticket) {
            running.remove(&self.key);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::time::Duration;

    #[tokio::test]
    async fn a_running_request_is_cancelled_by_its_sender_only() {
        let requests = InFlightRequests::default();
        let slow = async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(json!("done"))
        };
        let cancel_later = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(!requests.cancel("someone else", &json!({ "requestId": 7 })));
            assert!(
                !requests.cancel("me", &json!({ "requestId": "7" })),
                "ids keep their type"
            );
            assert!(requests.cancel("me", &json!({ "requestId": 7, "reason": "user" })));
        };
        let id = json!(7);
        let (answer, ()) = tokio::join!(requests.run("me", &id, slow), cancel_later);
        assert_eq!(answer.unwrap_err().code, REQUEST_CANCELLED);
        assert!(requests.lock().is_empty());
    }

    #[tokio::test]
    async fn finished_requests_are_forgotten() {
        let requests = InFlightRequests::default();
        let answer = requests.run("me", &json!(1), async { Ok(json!(1)) }).await;
        assert_eq!(answer.unwrap(), json!(1));
        assert!(!requests.cancel("me", &json!({ "requestId": 1 })));
        assert!(!requests.cancel("me", &json!({})));
    }
}
