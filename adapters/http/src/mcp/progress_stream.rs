//! `svc_render` carrying `_meta.progressToken`, from a client that accepts `text/event-stream`:
//! answered as a Streamable HTTP SSE stream with a `notifications/progress` for each generation
//! stage (queued, prompting, streaming, compiling, repairing, done), then the JSON-RPC response.
//! Every other request, and a render whose client accepts only JSON, is answered as plain JSON.
//! A cache hit generates nothing, so its stream holds the response alone. A render refused before
//! any progress with an HTTP status of its own (a full generation queue: 503 and `Retry-After`) is
//! answered as plain JSON with that status, as without a progress token.
//!
//! The render runs in its own task, so the stream can be returned while it works; a client
//! that hangs up does not cancel it (as with plain JSON), `notifications/cancelled` does, and so
//! does the end of the shutdown's grace period (`StreamedRenders`).

use std::net::IpAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};

use futures_util::StreamExt;
use poem::web::sse::{Event, SSE};
use poem::{IntoResponse, Request, Response};
use serde_json::{Value, json};
use svc_application::ports::generation::{GenerationProgress, GenerationStage};
use svc_application::services::agent::{Caller, ProgressObserver};

use super::agent_tools::Render;
use super::jsonrpc::{Incoming, RpcFailure};
use crate::route_states::AgentRoutes;
use crate::tools::ToolDefinition;

tokio::task_local! {
    /// The observer of the render this task answers, for the `svc_render` handler to hand to the service.
    static OBSERVER: ProgressObserver;
}

/// The progress observer of the current request, when it is answered as a stream.
pub(crate) fn current_observer() -> Option<ProgressObserver> {
    OBSERVER.try_with(Clone::clone).ok()
}

/// A render the client wants progress of: its id, params and progress token.
pub(crate) struct ProgressRequest {
    id: Value,
    params: Value,
    token: Value,
}

/// How a POST is answered: its progress streamed, or as JSON.
pub(crate) enum Answered {
    Streamed(ProgressRequest),
    Plain(Incoming),
}

/// [`Answered::Streamed`] when `incoming` is a `svc_render` with a progress token and the client
/// accepts an event stream; otherwise `incoming` back, untouched.
pub(crate) fn wanted(req: &Request, incoming: Incoming) -> Answered {
    let Incoming::Request { id, method, params } = incoming else {
        return Answered::Plain(incoming);
    };
    let token = &params["_meta"]["progressToken"];
    let is_render = method == "tools/call" && params["name"] == Render::NAME;
    // Looked at last: every other request is told apart without reading a header.
    let accepts_stream = || {
        req.header(poem::http::header::ACCEPT)
            .is_some_and(|accept| accept.to_ascii_lowercase().contains("text/event-stream"))
    };
    if !(is_render && usable_token(token) && accepts_stream()) {
        return Answered::Plain(Incoming::Request { id, method, params });
    }
    let token = token.clone();
    Answered::Streamed(ProgressRequest { id, params, token })
}

/// Longest progress token (a string's characters) a render streams for. Every notification
/// repeats the token and a client that does not read keeps them queued: a token the size of the
/// body, once per stage, was megabytes a render. A longer one gets the plain answer.
pub(crate) const MAX_PROGRESS_TOKEN_CHARS: usize = 256;

/// A progress token MCP allows (a string or a number) of a reasonable length.
fn usable_token(token: &Value) -> bool {
    match token {
        Value::String(text) => text.chars().count() <= MAX_PROGRESS_TOKEN_CHARS,
        other => other.is_number(),
    }
}

/// What the render's task hands the answer: a message for the stream, or the render's refusal
/// (kept whole, so a refusal before any progress can still be answered with its HTTP status).
enum Streamed {
    Message(String),
    Refused(RpcFailure),
}

/// Runs the render in its own task and answers with the stream of its progress and result. The
/// answer waits for the render's first word: a refusal before any progress (the generation queue
/// is full: HTTP 503 with `Retry-After`, Document 1) is answered as plain JSON with its status and
/// headers, as the same render without a progress token would be; anything else opens the stream.
pub(crate) async fn answer(
    state: Arc<AgentRoutes>,
    caller: Caller,
    origin: IpAddr,
    sender: super::cancellation::Sender,
    request: ProgressRequest,
    reserved: crate::parsed_json_budget::ParsedJsonReservation,
) -> Response {
    let ProgressRequest { id, params, token } = request;
    let (messages, mut received) = tokio::sync::mpsc::unbounded_channel::<Streamed>();
    let notifications = messages.clone();
    let count = AtomicU64::new(0);
    let observer = ProgressObserver::new(move |progress| {
        let progress_number = count.fetch_add(1, Ordering::Relaxed) + 1;
        let _ = notifications.send(Streamed::Message(
            json!({
                "jsonrpc": "2.0",
                "method": "notifications/progress",
                "params": { "progressToken": token, "progress": progress_number, "message": describe(progress) },
            })
            .to_string(),
        ));
    });
    let renders = state.streamed_renders.clone();
    let render_id = id.clone();
    renders.spawn(async move {
        // The message's parsed weight, given back when the render ends (`parsed_json_budget.rs`).
        let _reserved = reserved;
        let id = render_id;
        let work = super::dispatch(&state, &caller, origin, "tools/call", params);
        let outcome = OBSERVER
            .scope(observer, state.gate.in_flight.run(sender, &id, work))
            .await;
        let message = match outcome {
            // A render never answers later, so nothing here waits outside the cancellable run.
            Ok(result) => Streamed::Message(super::jsonrpc::success_text(id, result).await),
            Err(failure) => Streamed::Refused(failure),
        };
        let _ = messages.send(message);
    });
    let first = match received.recv().await {
        Some(Streamed::Refused(failure)) if failure.status != poem::http::StatusCode::OK => {
            let mut response = failure.into_response(id);
            response.extensions_mut().insert(crate::observe::RpcLabel(Render::NAME));
            return response;
        }
        first => first,
    };
    let text = move |streamed: Streamed| match streamed {
        Streamed::Message(text) => text,
        Streamed::Refused(failure) => failure.message_for(id.clone()).to_string(),
    };
    let rest = futures_util::stream::poll_fn(move |cx| received.poll_recv(cx));
    let stream = futures_util::stream::iter(first)
        .chain(rest)
        .map(move |streamed| Event::message(text(streamed)).event_type("message"));
    let mut response = SSE::new(stream).into_response();
    response.extensions_mut().insert(crate::observe::RpcLabel(Render::NAME));
    response.extensions_mut().insert(crate::observe::AnswerInBody);
    response
}

/// The stage in words, with what the card's lifecycle channel also says of it.
fn describe(progress: &GenerationProgress) -> String {
    let stage = progress.stage.as_str();
    match progress.stage {
        GenerationStage::Streaming => match progress.received_chars {
            Some(chars) => format!("{stage}: {chars} characters received"),
            None => stage.to_owned(),
        },
        GenerationStage::Repairing => format!("{stage}: attempt {}", progress.attempt),
        _ => stage.to_owned(),
    }
}
