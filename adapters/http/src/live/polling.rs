//! The `pollingUrl` fallback for cards whose WebSocket is blocked: the same frames over HTTP.
//!
//! `GET /_svc/poll/<sessionId>?token=T[&fromSeq=N][&sinceSequence=M][&revision=R][&wait=S]`
//! answers `{ frames: [...], cursors: { revision, lastStreamSeq, lastSequence }, more }`, waiting up to
//! `wait` seconds (0 to 25, default 20) for something new, or until the server's drain begins.
//! `token` is a `wsToken` or a session token. Frames: `props_update` when the session's revision
//! differs from `revision`, `data` after `fromSeq`, `render_event` after `sinceSequence` (with a
//! leading `system replay_gap` when a cursor is older than the replay buffer). Pass the returned cursors to the next poll.
//! One answer carries at most 1 MiB of replayed frames (`poll_answer`); `more: true` says frames
//! were left out, and its cursors point past the last frame it carries.
//! A session has at most 4 GETs in flight (until the connection took the whole answer, not just
//! was handed it: `poll_body`) and 200 a second (`polling_gates`); past either the GET is
//! answered 429 with `Retry-After: 1`.
//!
//! `POST /_svc/poll/<sessionId>?token=T` with one client frame (`action` or
//! `host_context_observed`) answers `{ frames: [...] }` with what the socket would have answered.
//! Its body is one frame (at most 256 KiB, 413 past it), under the socket's flood rule per session:
//! past 100 frames a second the answer is a `RATE_LIMITED` error frame, past 200 a 429. It is
//! weighed before it is parsed and held under the budget of parsed JSON while it is answered
//! (`inbound_budget`): 503 `SERVER_BUSY` with `Retry-After: 1` while others hold it, 413 when the
//! frame alone would take more than all of it.

use std::sync::Arc;
use std::time::Duration;

use poem::http::StatusCode;
use poem::web::{Data, Json, Path, Query};
use poem::{IntoResponse, Response, handler};
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Value, json};
use svc_application::ports::agent::key_topic;
use svc_application::services::agent::{AgentError, Caller, PollHolder};

use super::actions::action;
use super::flood_gate::Verdict;
use super::frames::{self, ReplayGaps};
use super::inbound_budget::admit_posted;
use super::poll_answer::{ANSWER_BUDGET_BYTES, Answer, Asked, Pending};
use super::poll_body::PollBody;
use super::polling_gates::{POLLS_IN_FLIGHT_PER_SESSION, POLLS_PER_SECOND, PollInFlight, PollRefused};
use super::subscribe::ack_payload;
use crate::TokenKind;
use crate::route_states::LiveRoutes;

/// Cards call the fallback from the host's sandbox (origin `null` or the host's own): any origin
/// may, since the token in the query is the credential and no cookie is involved.
pub fn cors() -> poem::middleware::Cors {
    poem::middleware::Cors::new()
        .allow_methods([poem::http::Method::GET, poem::http::Method::POST])
        .allow_header("content-type")
        // The card's origin is `null` (a sandboxed frame): without this its script cannot read
        // how long a 429 or 503 asks it to wait.
        .expose_header("retry-after")
        .allow_credentials(false)
        .max_age(600)
}

/// Longest long-poll, like `svc_consume`.
const MAX_WAIT_SECONDS: u64 = 25;
const DEFAULT_WAIT_SECONDS: u64 = 20;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PollQuery {
    token: String,
    from_seq: Option<i64>,
    since_sequence: Option<i64>,
    revision: Option<i64>,
    wait: Option<u64>,
}

#[derive(Debug, Deserialize)]
pub struct TokenQuery {
    token: String,
}

/// The caller a live token grants for `session_id`, either kind, and whether it was a wsToken.
pub(crate) async fn authenticated(state: &LiveRoutes, session_id: &str, token: &str) -> Option<(Caller, bool)> {
    let now = state.agent.now();
    let (claims, ws_token) = match state.tokens.verify_kind(TokenKind::WsToken, token, now) {
        Ok(claims) => (claims, true),
        Err(_) => (
            state.tokens.verify_kind(TokenKind::SessionToken, token, now).ok()?,
            false,
        ),
    };
    if claims.session_id != session_id || !super::key_still_live(state, claims.key_id.as_deref()).await {
        return None;
    }
    Some((
        Caller {
            principal_id: format!("live:{}", claims.session_id),
            app_id: claims.app_id,
            key_id: claims.key_id,
        },
        ws_token,
    ))
}

async fn caller_for(state: &LiveRoutes, session_id: &str, token: &str) -> Option<Caller> {
    authenticated(state, session_id, token).await.map(|(caller, _)| caller)
}

fn refused() -> Response {
    let body = json!({ "error": { "code": "AUTH_FAILED", "message": "the credentials do not grant this session" } });
    (StatusCode::UNAUTHORIZED, Json(body)).into_response()
}

fn internal(e: AgentError) -> Response {
    tracing::error!(error = ?e, "polling failed");
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        Json(json!({ "error": { "code": "INTERNAL", "message": "internal error" } })),
    )
        .into_response()
}

/// Frames a poller has not seen yet, at most [`ANSWER_BUDGET_BYTES`] of them, and its next
/// cursors. Each replay is read only as far as the budget (its head): what an answer cannot
/// carry is never fetched. The first poll (no `revision`) starts with the `ack` the socket would send, carrying
/// a session token when `ws_token` was used.
async fn pending(
    state: &LiveRoutes,
    caller: &Caller,
    session_id: &str,
    q: &PollQuery,
    ws_token: bool,
) -> Result<Answer, AgentError> {
    let snapshot = state.agent.live_snapshot(caller, session_id).await?;
    let session = &snapshot.session;
    let actions = match q.since_sequence {
        Some(after) => Some(Asked {
            after,
            replay: state
                .agent
                .replay_actions_head(session_id, after, ANSWER_BUDGET_BYTES)
                .await?,
        }),
        None => None,
    };
    let streams = match q.from_seq {
        Some(after) => Some(Asked {
            after,
            replay: state
                .agent
                .replay_streams_head(session_id, after, ANSWER_BUDGET_BYTES)
                .await?,
        }),
        None => None,
    };
    let gaps = ReplayGaps {
        actions: actions.as_ref().is_some_and(|a| a.replay.gap),
        streams: streams.as_ref().is_some_and(|s| s.replay.gap),
    };
    let mut leading = vec![];
    match q.revision {
        None => {
            let key_id = caller.key_id.as_deref();
            let ack = ack_payload(state, &snapshot, q.from_seq, q.since_sequence, gaps, ws_token, key_id).await;
            leading.push(frames::frame("ack", ack));
        }
        Some(revision) if revision != session.revision => {
            leading.push(frames::frame(
                "props_update",
                json!({ "sessionId": session_id, "props": session.head.props, "epoch": session.head.epoch }),
            ));
        }
        Some(_) => {}
    }
    if gaps.any() {
        leading.push(frames::frame("system", frames::replay_gap(gaps)));
    }
    let pending = Pending {
        revision: session.revision,
        leading,
        actions,
        streams,
        event_sequence: session.event_sequence,
        last_stream_seq: snapshot.last_stream_seq,
    };
    Ok(pending.answer(ANSWER_BUDGET_BYTES))
}

/// The answer as a body that keeps the GET's place in flight until the connection has taken all
/// of it (`poll_body`): a client that reads nothing, or trickles its window a byte at a time,
/// keeps its place instead of leaving the answer in memory and asking for another.
fn answered(answer: &Answer, in_flight: PollInFlight) -> Response {
    let json = match serde_json::to_vec(answer) {
        Ok(json) => json,
        Err(e) => return internal(AgentError::Internal(e.into())),
    };
    Response::builder()
        .content_type("application/json; charset=utf-8")
        .body(PollBody::new(json, in_flight).into_poem())
}

/// A GET refused before it was read: too many of the session's in flight, or too many a second.
fn poll_refused(refused: PollRefused) -> Response {
    let message = match refused {
        PollRefused::TooMany => {
            format!("this session has {POLLS_IN_FLIGHT_PER_SESSION} polls in flight; poll again when one has ended")
        }
        PollRefused::TooFast => {
            format!("more than {POLLS_PER_SECOND} polls of this session in a second; wait a second")
        }
    };
    too_many_requests(&message)
}

fn too_many_requests(message: &str) -> Response {
    let body = json!({ "error": { "code": "RATE_LIMITED", "message": message } });
    let mut response = (StatusCode::TOO_MANY_REQUESTS, Json(body)).into_response();
    response.headers_mut().insert("retry-after", 1.into());
    response
}

#[handler]
pub async fn poll(
    Path(session_id): Path<String>,
    Query(q): Query<PollQuery>,
    Data(state): Data<&Arc<LiveRoutes>>,
) -> Response {
    let Some((caller, ws_token)) = authenticated(state, &session_id, &q.token).await else {
        return refused();
    };
    let in_flight = match state.polling_flood_gates.admit_poll(&session_id) {
        Ok(in_flight) => in_flight,
        Err(refused) => return poll_refused(refused),
    };
    let _counted = crate::observe::held(&crate::observe::METRICS.long_polls);
    // Listen before reading, so an event between the read and the wait still wakes us.
    let mut events = state.agent.live_events(&session_id);
    // A poll held open ends with 401 when its key is revoked meanwhile.
    let mut revocation = caller
        .key_id
        .as_deref()
        .map(|key_id| state.agent.live_events(&key_topic(key_id)));
    // A poll that may wait holds a place among the polls of the key that minted its token (of
    // its session, for a token with no key); past the bound it is answered at once, as `wait=0`.
    let wait = q.wait.unwrap_or(DEFAULT_WAIT_SECONDS).min(MAX_WAIT_SECONDS);
    let holder = PollHolder::LiveToken {
        key_id: caller.key_id.as_deref(),
        session_id: &session_id,
    };
    let held = (wait > 0).then(|| state.agent.hold_long_poll(holder)).flatten();
    let wait = if held.is_some() { wait } else { 0 };
    let deadline = tokio::time::Instant::now() + Duration::from_secs(wait);
    let drained = state.held.released();
    tokio::pin!(drained);
    loop {
        let answer = match pending(state, &caller, &session_id, &q, ws_token).await {
            Ok(answer) => answer,
            Err(AgentError::SessionNotFound) => return refused(),
            Err(e) => return internal(e),
        };
        if !answer.frames.is_empty() || tokio::time::Instant::now() >= deadline {
            return answered(&answer, in_flight);
        }
        tokio::select! {
            woke = tokio::time::timeout_at(deadline, events.recv()) => {
                if woke.is_err() {
                    return answered(&answer, in_flight);
                }
            }
            () = super::revoked(revocation.as_mut()) => return refused(),
            // The server is shutting down: nothing new, poll again (elsewhere).
            () = &mut drained => return answered(&answer, in_flight),
        }
    }
}

#[handler]
pub async fn send(
    Path(session_id): Path<String>,
    Query(q): Query<TokenQuery>,
    Json(frame): Json<Box<RawValue>>,
    Data(state): Data<&Arc<LiveRoutes>>,
) -> Response {
    let Some(caller) = caller_for(state, &session_id, &q.token).await else {
        return refused();
    };
    match state.polling_flood_gates.admit_frame(&session_id) {
        Verdict::Pass => {}
        Verdict::Warn => return frames_answer(&[frames::error("RATE_LIMITED", "too many frames; slow down")]),
        Verdict::Close => return too_many_requests("too many frames; wait a second"),
    }
    // Checked as JSON but not built: weighed first, and parsed only under its reservation, held
    // until the answer is made (`inbound_budget`).
    let _reserved = match admit_posted(&state.parsed_json, &frame) {
        Ok(reserved) => reserved,
        Err(refusal) => return refusal.into_response(),
    };
    let mut frame: Value = match serde_json::from_str(frame.get()) {
        Ok(frame) => frame,
        // Weighed, so within the parser's depth: not reached.
        Err(e) => return internal(AgentError::Internal(e.into())),
    };
    let payload = frame.get_mut("payload").map(Value::take).unwrap_or(Value::Null);
    let answered = match frame["type"].as_str().unwrap_or_default() {
        "action" => action(state, &caller, &session_id, &payload).await,
        "host_context_observed" => state
            .agent
            .observe_host_context(&caller, &session_id, payload)
            .await
            .map(|()| vec![]),
        other => Ok(vec![frames::error(
            "BAD_FRAME",
            &format!("`{}` cannot be sent by polling", svc_domain::text::excerpt(other)),
        )]),
    };
    match answered {
        Ok(out) => frames_answer(&out),
        Err(AgentError::SessionNotFound) => refused(),
        Err(e) => internal(e),
    }
}

/// The POST's answer `{ "frames": [...] }`, each frame's JSON text as it was rendered.
fn frames_answer(frames: &[String]) -> Response {
    let mut body = String::with_capacity(frames.iter().map(|f| f.len() + 1).sum::<usize>() + 16);
    body.push_str(r#"{"frames":["#);
    for (i, frame) in frames.iter().enumerate() {
        if i > 0 {
            body.push(',');
        }
        body.push_str(frame);
    }
    body.push_str("]}");
    Response::builder()
        .content_type("application/json; charset=utf-8")
        .body(body)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn the_posts_answer_carries_each_frame_as_it_was_rendered() {
        let out = vec![
            frames::error("BAD_FRAME", "not \"JSON\""),
            frames::frame(
                "system",
                json!({ "event": "action_stored", "clientSeq": 1, "duplicate": false }),
            ),
        ];
        let response = frames_answer(&out);
        assert_eq!(
            response.headers()[poem::http::header::CONTENT_TYPE],
            "application/json; charset=utf-8"
        );
        let body = response.into_body().into_string().await.unwrap();
        assert_eq!(body, format!(r#"{{"frames":[{},{}]}}"#, out[0], out[1]));
        // The same bytes as the frames parsed back into values and serialised again.
        let reparsed: Vec<Value> = out.iter().map(|f| serde_json::from_str(f).unwrap()).collect();
        assert_eq!(body, json!({ "frames": reparsed }).to_string());
        let none = frames_answer(&[]).into_body().into_string().await.unwrap();
        assert_eq!(none, r#"{"frames":[]}"#);
    }
}
