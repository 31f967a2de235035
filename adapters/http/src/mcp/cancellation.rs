//! `notifications/cancelled` (MCP): a client cancels one of its requests that is still running,
//! say a `svc_render` waiting on a language model. The request's future is dropped, which frees
//! its generation slot and aborts the upstream provider call; nothing is committed, so its
//! handshake can still be rendered (docs/generation.md). A closed connection is not a cancellation (the MCP transport
//! rules say so): a render whose client went away finishes and fills the blueprint cache.
//!
//! Requests are keyed by who sent them (the route, the principal in its app, the credential and
//! the client's address; see `cancel_scope`) and their JSON-RPC id, so a client can only cancel
//! its own.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use futures_util::future::{AbortHandle, Abortable};
use serde_json::Value;
use svc_protocol::REQUEST_CANCELLED;

use super::jsonrpc::RpcFailure;

/// A cancellation that arrives before its request is running (the SDKs send it on another
/// connection, without waiting) still applies to a request that starts this soon after.
const EARLY_CANCEL_TTL: Duration = Duration::from_secs(10);
/// Early cancellations remembered at most; the oldest go first.
const EARLY_CANCEL_CAP: usize = 1024;
/// Longest string id an early cancellation is remembered for: the ids are the client's, and a
/// thousand ids of a request body's size each would be gigabytes held for ten seconds. A longer
/// id's request can still be cancelled while it runs.
const EARLY_CANCEL_ID_CHARS: usize = 256;

/// A request by its sender and its JSON-RPC id (a string or a number, compared as such: `7` is
/// not `"7"`); cloning one allocates only for a string id.
type Key = (Sender, Value);

/// Who sent a request: a 64-bit keyed hash of the route, the principal in its app, the credential
/// and the client's address (see `cancel_scope`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Sender(pub(crate) u64);

/// The requests running now, by sender and id.
#[derive(Default)]
pub struct InFlightRequests {
    state: Mutex<State>,
    next_ticket: AtomicU64,
}

#[derive(Default)]
struct State {
    /// Every running request of a key (a client reusing an id has all of them cancelled).
    running: HashMap<Key, Vec<(u64, AbortHandle)>>,
    /// Cancellations of requests not running (yet), with when they came.
    early: HashMap<Key, Instant>,
}

/// Who sends the requests of one POST: the cancellations it may make are its own. Owned, so a
/// result answered later (a held long-poll) stays cancellable after its handler returned.
pub struct CancelScope {
    pub requests: Arc<InFlightRequests>,
    pub sender: Sender,
}

fn cancelled() -> RpcFailure {
    RpcFailure::new(
        REQUEST_CANCELLED,
        "the request was cancelled by notifications/cancelled",
    )
}

impl InFlightRequests {
    /// Runs `work` for request `id`, unless `notifications/cancelled` for it arrives first.
    pub async fn run<F, T>(&self, sender: Sender, id: &Value, work: F) -> Result<T, RpcFailure>
    where
        F: Future<Output = Result<T, RpcFailure>>,
    {
        let key = (sender, id.clone());
        let ticket = self.next_ticket.fetch_add(1, Ordering::Relaxed);
        let (handle, registration) = AbortHandle::new_pair();
        {
            let mut state = self.lock();
            if state
                .early
                .remove(&key)
                .is_some_and(|at| at.elapsed() < EARLY_CANCEL_TTL)
            {
                return Err(cancelled());
            }
            state.running.entry(key.clone()).or_default().push((ticket, handle));
        }
        let _deregister = Deregister {
            requests: self,
            key,
            ticket,
        };
        match Abortable::new(work, registration).await {
            Ok(answer) => answer,
            Err(_) => Err(cancelled()),
        }
    }

    /// Handles `notifications/cancelled { requestId, reason? }`. A request not running is not an
    /// error (MCP asks receivers to ignore those); it is remembered briefly in case the request
    /// is on its way. Returns whether a running request was cancelled.
    pub fn cancel(&self, sender: Sender, params: &Value) -> bool {
        let Some(id) = params.get("requestId").filter(|id| id.is_string() || id.is_number()) else {
            return false;
        };
        let key = (sender, id.clone());
        let mut state = self.lock();
        match state.running.remove(&key) {
            Some(requests) => {
                let reason = params.get("reason").and_then(Value::as_str).unwrap_or_default();
                tracing::info!(request_id = %id, reason, "request cancelled by the client");
                for (_, handle) in requests {
                    handle.abort();
                }
                true
            }
            None => {
                if key
                    .1
                    .as_str()
                    .is_none_or(|id| id.chars().count() <= EARLY_CANCEL_ID_CHARS)
                {
                    state.remember_early(key);
                }
                false
            }
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

impl State {
    fn remember_early(&mut self, key: Key) {
        self.early.retain(|_, at| at.elapsed() < EARLY_CANCEL_TTL);
        if self.early.len() >= EARLY_CANCEL_CAP
            && let Some(oldest) = self.early.iter().min_by_key(|(_, at)| **at).map(|(k, _)| k.clone())
        {
            self.early.remove(&oldest);
        }
        self.early.insert(key, Instant::now());
    }
}

/// Forgets a finished (or dropped) request.
struct Deregister<'a> {
    requests: &'a InFlightRequests,
    key: Key,
    ticket: u64,
}

impl Drop for Deregister<'_> {
    fn drop(&mut self) {
        let mut state = self.requests.lock();
        if let Some(requests) = state.running.get_mut(&self.key) {
            requests.retain(|(ticket, _)| *ticket != self.ticket);
            if requests.is_empty() {
                state.running.remove(&self.key);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const ME: Sender = Sender(1);
    const SOMEONE_ELSE: Sender = Sender(2);

    #[tokio::test]
    async fn a_running_request_is_cancelled_by_its_sender_only() {
        let requests = InFlightRequests::default();
        let slow = async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(json!("done"))
        };
        let cancel_later = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(!requests.cancel(SOMEONE_ELSE, &json!({ "requestId": 7 })));
            assert!(
                !requests.cancel(ME, &json!({ "requestId": "7" })),
                "ids keep their type"
            );
            assert!(requests.cancel(ME, &json!({ "requestId": 7, "reason": "user" })));
        };
        let id = json!(7);
        let (answer, ()) = tokio::join!(requests.run(ME, &id, slow), cancel_later);
        assert_eq!(answer.unwrap_err().code, REQUEST_CANCELLED);
        assert!(requests.lock().running.is_empty());
    }

    #[tokio::test]
    async fn a_cancellation_that_overtakes_its_request_still_applies() {
        let requests = InFlightRequests::default();
        assert!(!requests.cancel(ME, &json!({ "requestId": 9 })));
        let answer = requests.run(ME, &json!(9), async { Ok(json!("ran")) }).await;
        assert_eq!(answer.unwrap_err().code, REQUEST_CANCELLED);
        // Only once: the next request with that id runs.
        let again = requests.run(ME, &json!(9), async { Ok(json!("ran")) }).await;
        assert_eq!(again.unwrap(), json!("ran"));
        // Another sender's early cancellation does not touch this one's requests.
        assert!(!requests.cancel(SOMEONE_ELSE, &json!({ "requestId": 10 })));
        let mine = requests.run(ME, &json!(10), async { Ok(json!("ran")) }).await;
        assert_eq!(mine.unwrap(), json!("ran"));
    }

    #[tokio::test]
    async fn an_early_cancellation_of_an_overlong_id_is_not_kept() {
        let requests = InFlightRequests::default();
        let long = "i".repeat(EARLY_CANCEL_ID_CHARS + 1);
        assert!(!requests.cancel(ME, &json!({ "requestId": long })));
        assert!(requests.lock().early.is_empty(), "nothing held for it");
        let answer = requests.run(ME, &json!(long), async { Ok(json!("ran")) }).await;
        assert_eq!(answer.unwrap(), json!("ran"));

        let longest = "i".repeat(EARLY_CANCEL_ID_CHARS);
        assert!(!requests.cancel(ME, &json!({ "requestId": longest })));
        let answer = requests.run(ME, &json!(longest), async { Ok(json!("ran")) }).await;
        assert_eq!(answer.unwrap_err().code, REQUEST_CANCELLED, "kept at the limit");
    }

    #[tokio::test]
    async fn every_running_request_of_a_reused_id_is_cancelled() {
        let requests = InFlightRequests::default();
        let slow = || async {
            tokio::time::sleep(Duration::from_secs(30)).await;
            Ok(json!("done"))
        };
        let id = json!(3);
        let cancel_later = async {
            tokio::time::sleep(Duration::from_millis(50)).await;
            assert!(requests.cancel(ME, &json!({ "requestId": 3 })));
        };
        let (first, second, ()) = tokio::join!(
            requests.run(ME, &id, slow()),
            requests.run(ME, &id, slow()),
            cancel_later
        );
        assert_eq!(first.unwrap_err().code, REQUEST_CANCELLED);
        assert_eq!(second.unwrap_err().code, REQUEST_CANCELLED);
        assert!(requests.lock().running.is_empty());
    }

    #[tokio::test]
    async fn finished_requests_are_forgotten() {
        let requests = InFlightRequests::default();
        let answer = requests.run(ME, &json!(1), async { Ok(json!(1)) }).await;
        assert_eq!(answer.unwrap(), json!(1));
        assert!(requests.lock().running.is_empty());
        assert!(!requests.cancel(ME, &json!({ "requestId": 1 })));
        assert!(!requests.cancel(ME, &json!({})));
    }
}
