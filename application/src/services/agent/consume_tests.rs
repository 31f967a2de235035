//! `svc_consume` over the in-memory store: one consumer per gesture, answers bounded by bytes,
//! and its refusals.

use serde_json::json;
use std::time::Duration;
use svc_domain::session::SessionStatus;

use super::render_tests::{render_once, titled};
use super::*;
use crate::ports::agent::SessionRepository;
use crate::testing::AgentFakes;

#[tokio::test]
async fn a_gesture_is_drained_by_exactly_one_of_two_concurrent_consumers() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let contract = json!({ "actionSpec": { "approve": { "schema": { "type": "object" } } } });
    let session_id = render_once(&service, &caller, "approval", contract).await.session_id;

    let waiting = {
        let (service, caller, id) = (service.clone(), caller.clone(), session_id.clone());
        tokio::spawn(async move { service.consume(&caller, &id, 5).await })
    };
    let other = {
        let (service, caller, id) = (service.clone(), caller.clone(), session_id.clone());
        tokio::spawn(async move { service.consume(&caller, &id, 1).await })
    };
    tokio::time::sleep(Duration::from_millis(20)).await;
    let action = IncomingAction {
        intent: "approve".into(),
        data: json!({}),
        ui_context: None,
        client_seq: Some(1),
    };
    let (_, fresh) = service
        .record_action(&caller, &session_id, action.clone())
        .await
        .unwrap();
    assert!(fresh);
    let (_, again) = service.record_action(&caller, &session_id, action).await.unwrap();
    assert!(!again, "a repeated clientSeq is the stored gesture");

    let drained: usize = [waiting.await.unwrap().unwrap(), other.await.unwrap().unwrap()]
        .iter()
        .map(|reply| reply.events.len())
        .sum();
    assert_eq!(drained, 1);
    assert_eq!(fakes.store.undrained(&session_id), 0);
    let later = service.consume(&caller, &session_id, 0).await.unwrap();
    assert!(later.events.is_empty(), "a drained gesture is never delivered twice");
    assert_eq!(later.status, SessionStatus::Active);
}

#[tokio::test]
async fn a_consume_answers_the_oldest_gestures_that_fit_and_the_next_one_the_rest() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let contract = json!({ "actionSpec": { "approve": { "schema": { "type": "string" } } } });
    let session_id = render_once(&service, &caller, "approval", contract).await.session_id;
    // Three gestures, two of which pass the bound of one answer together.
    let big = "b".repeat(crate::services::agent::live::REPLAY_MAX_PAYLOAD_BYTES / 2 + 1);
    for (n, data) in [json!(big), json!(big), json!("small")].into_iter().enumerate() {
        let action = IncomingAction {
            intent: "approve".into(),
            data,
            ui_context: None,
            client_seq: Some(n as i64 + 1),
        };
        service.record_action(&caller, &session_id, action).await.unwrap();
    }
    let sizes = |reply: &ConsumeReply| {
        reply
            .events
            .iter()
            .map(|e| e.action_data.to_string().len())
            .collect::<Vec<_>>()
    };
    let first = service.consume(&caller, &session_id, 0).await.unwrap();
    assert_eq!(sizes(&first), [big.len() + 2]);
    let second = service.consume(&caller, &session_id, 0).await.unwrap();
    assert_eq!(sizes(&second), [big.len() + 2, "\"small\"".len()]);
    assert!(
        service
            .consume(&caller, &session_id, 0)
            .await
            .unwrap()
            .events
            .is_empty()
    );
}

#[tokio::test]
async fn consume_refuses_a_long_timeout_and_a_foreign_session() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let session_id = render_once(&service, &caller, "order card", titled()).await.session_id;
    match service
        .consume(&caller, &session_id, MAX_CONSUME_TIMEOUT_SECONDS + 1)
        .await
    {
        Err(AgentError::InvalidParams { field, rule }) => {
            assert_eq!(
                (field.as_str(), rule.as_str()),
                ("timeout", "must be an integer from 0 to 25")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(matches!(
        service.consume(&AgentFakes::caller("app-2"), &session_id, 0).await,
        Err(AgentError::SessionNotFound)
    ));
    let stored = SessionRepository::get(fakes.store.as_ref(), &session_id).await.unwrap();
    assert!(stored.is_some());
}

/// An id no session could have is answered as missing before the poll subscribes: its topic
/// would be kept by the bus (until a sweep) at whatever length the request gave it.
#[tokio::test]
async fn a_session_id_no_session_could_have_is_missing_and_never_a_topic() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let session_id = render_once(&service, &caller, "order card", titled()).await.session_id;
    let huge = format!("{session_id}{}", "x".repeat(1 << 20));
    for id in [huge.as_str(), ""] {
        assert!(matches!(
            service.consume(&caller, id, 1).await,
            Err(AgentError::SessionNotFound)
        ));
    }
    assert!(
        fakes
            .bus
            .topics()
            .iter()
            .all(|topic| topic.len() <= session_id.len() + 16),
        "{:?}",
        fakes.bus.topics().iter().map(String::len).collect::<Vec<_>>()
    );
    // An id of the right shape still waits on its topic (and times out, answering nothing).
    let reply = service.consume(&caller, &session_id, 1).await.unwrap();
    assert!(reply.events.is_empty());
    assert!(fakes.bus.topics().contains(&session_id));
}

/// A poll of `timeout_seconds`, already waiting, on a session with one second of its hour left.
struct PollBeforeExpiry {
    fakes: AgentFakes,
    service: AgentService,
    caller: Caller,
    session_id: String,
    started: std::time::Instant,
    poll: tokio::task::JoinHandle<Result<ConsumeReply, AgentError>>,
}

/// Renders a session, moves the clock to one second before its hour ends, and begins a poll of
/// `timeout_seconds` on it; returns once the poll is waiting.
async fn a_poll_a_second_before_expiry(timeout_seconds: u64) -> PollBeforeExpiry {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let contract = json!({ "actionSpec": { "approve": { "schema": { "type": "object" } } } });
    let session_id = render_once(&service, &caller, "approval", contract).await.session_id;
    fakes.clock.advance(chrono::TimeDelta::seconds(3599));
    let started = std::time::Instant::now();
    let poll = {
        let (service, caller, id) = (service.clone(), caller.clone(), session_id.clone());
        tokio::spawn(async move { service.consume(&caller, &id, timeout_seconds).await })
    };
    tokio::time::sleep(Duration::from_millis(200)).await;
    PollBeforeExpiry {
        fakes,
        service,
        caller,
        session_id,
        started,
        poll,
    }
}

/// Document 1: when the TTL elapses, `svc_consume` answers `expired` and the agent's loop ends;
/// a long-poll does not outlive its session.
#[tokio::test]
async fn a_long_poll_ends_expired_when_the_session_expires_during_it() {
    let PollBeforeExpiry {
        fakes, started, poll, ..
    } = a_poll_a_second_before_expiry(5).await;
    fakes.clock.advance(chrono::TimeDelta::seconds(1));
    let reply = poll.await.unwrap().unwrap();
    assert_eq!(reply.status, SessionStatus::Expired);
    assert!(reply.events.is_empty());
    let waited = started.elapsed();
    assert!(
        waited >= Duration::from_millis(900) && waited < Duration::from_secs(4),
        "the poll ends at the session's expiry, not its timeout: {waited:?}"
    );
}

/// Activity during the poll slides the session's expiry on: the poll then waits its timeout.
#[tokio::test]
async fn a_long_poll_whose_session_was_kept_alive_meanwhile_waits_its_timeout() {
    let PollBeforeExpiry {
        service,
        caller,
        session_id,
        started,
        poll,
        ..
    } = a_poll_a_second_before_expiry(2).await;
    service.get_session(&caller, &session_id).await.unwrap();
    let reply = poll.await.unwrap().unwrap();
    assert_eq!(reply.status, SessionStatus::Active);
    assert!(started.elapsed() >= Duration::from_millis(1900));
}
