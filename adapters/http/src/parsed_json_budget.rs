//! The memory the JSON-RPC messages of `/mcp`, `/apps/<appId>/mcp` and `/ops` (`/console/ops`
//! too) may take parsed, all at once (`[connections] parsed_json_mib_in_flight`). The body
//! budget of the connection layer bounds a body's bytes only while it arrives; parsed, a 4 MiB
//! body of `[0,0,...]` is about 150 MiB of `Value`s, held until its answer is sent (a tool call
//! may take minutes), and 200 such requests fit on one HTTP/2 connection.
//!
//! So each message is weighed from its text before it is parsed
//! (`svc_protocol::jsonrpc::request_weight`) and [`PARSED_COPIES`] times its weight reserved
//! here, for as long as its answer is being made and sent; the reservation is given back when
//! it is dropped, which a cancelled or panicking request does too. The budget is kept as the
//! body budget is: a message that would go past what is left is refused at once, 503
//! `SERVER_BUSY` with `Retry-After: 1` (nothing waits in line holding its body); one that would
//! go past the whole budget alone can never be served, and is refused 413 `PAYLOAD_TOO_LARGE`
//! as an oversized body is. The live channel's frames (a `/ws` text frame, a polling POST) are
//! held against the same budget (`live::inbound_budget`).

use std::sync::Arc;

use http_body::{Frame, SizeHint};
use poem::http::StatusCode;
use poem::web::Json;
use poem::{IntoResponse, Response};
use serde_json::json;
use svc_application::services::cpu_gate::CpuBusy;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// How many times a message's parsed weight is reserved: the message, and one whole copy of
/// what it carries at a time. A render's props are copied into its generation while it runs
/// and into its first paint beside the stored head, an update's props are copied from the
/// message for each attempt to store them, and a stream payload is copied into the envelope the
/// store answers. The schema check of a tool's input takes no copy: the value is moved to its
/// blocking thread and back (`schema_cache.rs`). (The SQL store copies a stream envelope once
/// more for each attempt to write it, `agent/events.rs`: a third copy for that while, not
/// reserved.)
pub const PARSED_COPIES: usize = 2;

/// The budget is counted in KiB: a semaphore takes at most `u32::MAX` permits at once.
const UNIT: usize = 1024;

/// The memory parsed JSON-RPC messages may hold at once.
#[derive(Debug, Clone)]
pub struct ParsedJsonBudget {
    units: Arc<Semaphore>,
    /// The whole budget, in units.
    total: usize,
}

impl ParsedJsonBudget {
    /// A budget of `mib` MiB (a setting's; its range is checked at load).
    pub fn of_mib(mib: u64) -> Self {
        let total = usize::try_from(mib)
            .unwrap_or(usize::MAX)
            .saturating_mul((1 << 20) / UNIT)
            .min(Semaphore::MAX_PERMITS);
        Self {
            units: Arc::new(Semaphore::new(total)),
            total,
        }
    }

    /// Reserves [`PARSED_COPIES`] times `weight` bytes, until the reservation is dropped.
    pub(crate) fn reserve(&self, weight: usize) -> Result<ParsedJsonReservation, OverBudget> {
        let units = weight.saturating_mul(PARSED_COPIES).div_ceil(UNIT).max(1);
        if units > self.total {
            return Err(OverBudget::Never);
        }
        let count = u32::try_from(units).map_err(|_| OverBudget::Never)?;
        match Arc::clone(&self.units).try_acquire_many_owned(count) {
            Ok(permit) => Ok(ParsedJsonReservation(permit)),
            Err(_) => Err(OverBudget::Busy),
        }
    }

    /// The whole budget in MiB, as the setting gave it.
    pub(crate) fn mib(&self) -> usize {
        self.total / ((1 << 20) / UNIT)
    }

    /// The answer to a message refused for `over`.
    pub(crate) fn refusal(&self, over: OverBudget) -> Response {
        match over {
            OverBudget::Busy => crate::busy::busy_json(
                CpuBusy { retry_after_seconds: 1 },
                "the server is holding as many parsed requests as it has memory for; retry shortly",
            ),
            OverBudget::Never => {
                let message = format!(
                    "the request body would take more than the server's {} MiB for parsed requests once parsed",
                    self.mib()
                );
                (
                    StatusCode::PAYLOAD_TOO_LARGE,
                    Json(json!({ "error": { "code": "PAYLOAD_TOO_LARGE", "message": message } })),
                )
                    .into_response()
            }
        }
    }
}

/// Why a message's weight was not reserved.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum OverBudget {
    /// Not now: other messages hold what it needs.
    Busy,
    /// Never: it needs more than the whole budget.
    Never,
}

/// A message's share of the budget, given back when dropped.
#[derive(Debug)]
#[must_use = "the reservation is given back when it is dropped"]
pub(crate) struct ParsedJsonReservation(#[allow(dead_code)] OwnedSemaphorePermit);

impl ParsedJsonReservation {
    /// `response`, holding this reservation until its body is sent whole or dropped when the
    /// answer is made in the body (a long-poll, a streamed render: `AnswerInBody`); any other
    /// answer is made already, its message and the values parsed from it dropped, and the
    /// reservation is given back now.
    pub(crate) fn held_by(self, mut response: Response) -> Response {
        if response.extensions().get::<crate::observe::AnswerInBody>().is_none() {
            return response;
        }
        let body = Holding {
            inner: response.take_body().into(),
            _reservation: self,
        };
        response.set_body(poem::Body::from(http_body_util::combinators::BoxBody::new(body)));
        response
    }
}

type BoxedBody = http_body_util::combinators::BoxBody<bytes::Bytes, std::io::Error>;

/// A response body that holds a reservation until it is dropped.
struct Holding {
    inner: BoxedBody,
    _reservation: ParsedJsonReservation,
}

impl http_body::Body for Holding {
    type Data = bytes::Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Option<Result<Frame<bytes::Bytes>, std::io::Error>>> {
        std::pin::Pin::new(&mut self.inner).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MIB: usize = 1 << 20;

    #[test]
    fn a_reservation_over_what_is_left_is_refused_until_one_is_given_back() {
        let budget = ParsedJsonBudget::of_mib(4);
        // 1.5 MiB parsed reserves 3 MiB of the 4.
        let held = budget.reserve(3 * MIB / 2).expect("within the budget");
        assert_eq!(budget.reserve(MIB).unwrap_err(), OverBudget::Busy);
        let small = budget.reserve(MIB / 2 - 1).expect("what is left");
        assert_eq!(budget.reserve(1).unwrap_err(), OverBudget::Busy);
        drop(held);
        let again = budget.reserve(3 * MIB / 2).expect("given back when dropped");
        drop((small, again));
        assert_eq!(budget.units.available_permits(), budget.total);
    }

    #[test]
    fn a_message_heavier_than_the_whole_budget_is_never_reserved() {
        let budget = ParsedJsonBudget::of_mib(4);
        assert_eq!(budget.reserve(2 * MIB + 1).unwrap_err(), OverBudget::Never);
        assert_eq!(budget.reserve(usize::MAX).unwrap_err(), OverBudget::Never);
        assert!(budget.reserve(2 * MIB).is_ok(), "exactly the whole budget");
    }

    #[tokio::test]
    async fn the_refusals_are_the_busy_answer_and_the_oversized_body_answer() {
        let budget = ParsedJsonBudget::of_mib(4);
        let busy = budget.refusal(OverBudget::Busy);
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(busy.headers()[poem::http::header::RETRY_AFTER], "1");
        let never = budget.refusal(OverBudget::Never);
        assert_eq!(never.status(), StatusCode::PAYLOAD_TOO_LARGE);
        let body: serde_json::Value = serde_json::from_slice(&never.into_body().into_vec().await.unwrap()).unwrap();
        assert_eq!(
            body,
            json!({ "error": { "code": "PAYLOAD_TOO_LARGE", "message":
                "the request body would take more than the server's 4 MiB for parsed requests once parsed" } })
        );
    }

    #[tokio::test]
    async fn an_answer_made_in_its_body_holds_the_reservation_until_the_body_is_dropped() {
        let budget = ParsedJsonBudget::of_mib(1);
        let made = poem::Response::builder().body("done");
        drop(budget.reserve(MIB / 2).unwrap().held_by(made));
        // Dropped with the answer made: nothing holds the budget.
        assert_eq!(budget.units.available_permits(), budget.total);

        let mut later = poem::Response::builder().body("later");
        later.extensions_mut().insert(crate::observe::AnswerInBody);
        let later = budget.reserve(MIB / 2).unwrap().held_by(later);
        assert_eq!(budget.reserve(1).unwrap_err(), OverBudget::Busy, "held by the body");
        assert_eq!(later.into_body().into_string().await.unwrap(), "later");
        assert!(budget.reserve(MIB / 2).is_ok(), "given back with the body");
    }
}
