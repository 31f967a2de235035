//! `svc_update` and `svc_amend` over in-memory fakes: a session that no longer takes props
//! (expired, or a failed render) is missing before its props are looked at, as on `svc_emit`.

use chrono::TimeDelta;
use serde_json::{Value, json};

use super::render_tests::{render_once, titled};
use super::*;
use crate::ports::generation::GenerationError;
use crate::testing::AgentFakes;

/// Props that break `titled()`, and props over the props budget.
fn refusable_changes() -> Vec<PropsChange> {
    vec![
        PropsChange::Replace(json!({ "title": 7 })),
        PropsChange::Merge(json!({ "title": "m".repeat(7 << 20) })),
    ]
}

async fn assert_missing_whatever_the_props(service: &AgentService, caller: &Caller, session_id: &str) {
    for change in refusable_changes() {
        for amend in [false, true] {
            let answer = service.change_props(caller, session_id, change.clone(), amend).await;
            assert!(
                matches!(answer, Err(AgentError::SessionNotFound)),
                "amend={amend}: {answer:?}"
            );
        }
    }
}

#[tokio::test]
async fn an_expired_session_is_missing_before_its_props_are_checked() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let session_id = render_once(&service, &caller, "order card", titled()).await.session_id;
    // While it lives, the same props are refused for what they are.
    assert!(matches!(
        service
            .change_props(&caller, &session_id, refusable_changes().remove(0), false)
            .await,
        Err(AgentError::ContractViolation { .. })
    ));
    fakes.clock.advance(TimeDelta::seconds(3600));
    assert_missing_whatever_the_props(&service, &caller, &session_id).await;
}

#[tokio::test]
async fn a_failed_render_is_missing_before_its_props_are_checked() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    fakes
        .generator
        .fail(GenerationError::ProductionFailed("no component".into()));
    let handshake = match service
        .handshake(
            &caller,
            HandshakeCommand {
                intent: "order card".into(),
                contract: titled(),
                variance: None,
                generator: None,
                force_create: false,
            },
        )
        .await
        .unwrap()
    {
        HandshakeOutcome::Agreed(reply) => reply.handshake_id,
        other => panic!("{other:?}"),
    };
    let command = RenderCommand {
        handshake_id: handshake,
        props: json!({}),
        theme_id: None,
        model: None,
        override_: None,
        ttl_seconds: None,
        host: Default::default(),
        origin: None,
        progress: None,
    };
    let session_id = match service.render(&caller, command).await.unwrap() {
        RenderResult::Failed { identity, .. } => identity.session_id,
        other => panic!("{other:?}"),
    };
    assert_missing_whatever_the_props(&service, &caller, &session_id).await;
    let emitted = service.emit(&caller, &session_id, "log", Value::Null, false).await;
    assert!(matches!(emitted, Err(AgentError::SessionNotFound)), "{emitted:?}");
}
