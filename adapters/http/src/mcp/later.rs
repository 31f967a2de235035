//! A JSON-RPC result that is not ready when its request is answered: a `svc_consume` long-poll
//! waiting for a gesture. The response's head goes out at once and its body, the whole JSON-RPC
//! message, when the result is ready. A held request then keeps this future alone, not the
//! handler chain that began it (poem's middleware, the route, authentication, the tool's
//! dispatch: about half of what a held long-poll cost, issue 18).
//!
//! Everything that can refuse the request (authentication, arguments, the session's owner) has
//! answered before a result is made `Later`, so the 200 sent ahead is the status the request would
//! have had: a failure while waiting (the store failing) is a JSON-RPC error in that 200, as every
//! tool failure is. It stays cancellable by `notifications/cancelled` until it is ready.

use std::future::Future;

use bytes::Bytes;
use futures_util::future::BoxFuture;
use poem::{Body, Response};
use serde_json::Value;
use tracing::Instrument;

use super::cancellation::CancelScope;
use super::jsonrpc::{Reply, RpcFailure};

pub struct Later(BoxFuture<'static, Result<Reply, RpcFailure>>);

impl Later {
    pub fn new(result: impl Future<Output = Result<Reply, RpcFailure>> + Send + 'static) -> Self {
        Self(Box::pin(result))
    }

    /// The result, once ready (a later result that is itself later is waited for too).
    pub async fn ready(self) -> Result<Reply, RpcFailure> {
        let mut waiting = self;
        loop {
            match waiting.0.await? {
                Reply::Later(next) => waiting = next,
                ready => return Ok(ready),
            }
        }
    }

    /// The same result, cancelled when `scope`'s sender cancels request `id` before it is ready.
    pub fn cancellable(self, scope: CancelScope, id: Value) -> Self {
        Self::new(async move { scope.requests.run(scope.sender, &id, self.ready()).await })
    }

    /// The response answering request `id` with this result: a 200 with the JSON-RPC message as
    /// its body once ready.
    pub fn respond(self, id: Value) -> Response {
        // What it logs while it waits carries the request's id, as the handler's lines do.
        let request = tracing::Span::current();
        let message = futures_util::stream::once(
            async move {
                let text = super::jsonrpc::success_text(id, Reply::Later(self)).await;
                Ok::<_, std::io::Error>(Bytes::from(text))
            }
            .instrument(request),
        );
        let mut response = Response::builder()
            .header(poem::http::header::CONTENT_TYPE, super::jsonrpc::json_utf8())
            .body(Body::from_bytes_stream(message));
        response.extensions_mut().insert(crate::observe::AnswerInBody);
        response
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mcp::cancellation::{InFlightRequests, Sender};
    use serde_json::json;
    use std::sync::Arc;

    async fn body_of(response: Response) -> Value {
        serde_json::from_slice(&response.into_body().into_bytes().await.unwrap()).unwrap()
    }

    #[tokio::test]
    async fn a_later_result_is_the_message_an_immediate_one_would_be() {
        let later = Later::new(async { Ok(Reply::Later(Later::new(async { Ok(Reply::Built(json!({ "n": 1 }))) }))) });
        let response = later.respond(json!(3));
        assert_eq!(response.status(), poem::http::StatusCode::OK);
        assert_eq!(
            body_of(response).await,
            json!({ "jsonrpc": "2.0", "id": 3, "result": { "n": 1 } })
        );
    }

    #[tokio::test]
    async fn a_later_failure_is_a_json_rpc_error_in_the_same_answer() {
        let later = Later::new(async { Err(RpcFailure::new(-32603, "Internal error")) });
        let body = body_of(later.respond(json!("a"))).await;
        assert_eq!(body["id"], "a");
        assert_eq!(body["error"]["code"], -32603);
    }

    #[tokio::test]
    async fn a_later_result_is_cancelled_by_its_sender_until_it_is_ready() {
        let requests = Arc::new(InFlightRequests::default());
        let scope = CancelScope {
            requests: requests.clone(),
            sender: Sender(1),
        };
        let (_keep, never) = tokio::sync::oneshot::channel::<()>();
        let later = Later::new(async move {
            let _ = never.await;
            Ok(Reply::Built(json!({})))
        })
        .cancellable(scope, json!(9));
        let answered = tokio::spawn(body_of(later.respond(json!(9))));
        // The request is registered once its body is first polled.
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
        requests.cancel(Sender(1), &json!({ "requestId": 9 }));
        let body = tokio::time::timeout(std::time::Duration::from_secs(5), answered)
            .await
            .expect("answered at once")
            .unwrap();
        assert_eq!(body["error"]["code"], svc_protocol::REQUEST_CANCELLED);
    }
}
