//! A contract's schemas are compiled once: negotiation compiles each to check it, and the
//! validators it compiled are the ones its renders, emits and actions check values with. Counted
//! through the schema cache: every compile after the negotiation's is one of the cache's.

use serde_json::{Value, json};

use super::render_tests::{agreed, draft, render_of, rendered};
use super::*;
use crate::testing::AgentFakes;

fn order_card() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": {
            "sku": { "type": "string", "pattern": "^[A-Z]{3}-[0-9]{4}$" },
            "qty": { "type": "integer", "minimum": 1 } } },
        "streamSpec": { "status": { "mode": "replace", "schema": { "enum": ["packed", "shipped"] } } },
        "actionSpec": { "approve": { "schema": { "type": "object", "required": ["by"] } } }
    })
}

fn violated_paths(result: Result<impl std::fmt::Debug, AgentError>) -> Vec<String> {
    match result {
        Err(AgentError::ContractViolation { violations, .. }) => violations.iter().map(|v| v.path.clone()).collect(),
        other => panic!("not a contract violation: {other:?}"),
    }
}

#[tokio::test]
async fn a_render_checks_its_props_with_the_validator_the_handshake_compiled() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let reply = agreed(&service, &caller, draft("order card", order_card())).await;
    let refused = service
        .render(
            &caller,
            render_of(&reply.handshake_id, json!({ "sku": "abc", "qty": 0 })),
        )
        .await;
    assert_eq!(violated_paths(refused), ["/sku", "/qty"]);
    let result = service
        .render(
            &caller,
            render_of(&reply.handshake_id, json!({ "sku": "ABC-0001", "qty": 2 })),
        )
        .await
        .unwrap();
    assert_eq!(rendered(result).1.props, json!({ "sku": "ABC-0001", "qty": 2 }));
    assert_eq!(service.schemas.compilations(), 0, "compiled once, by the negotiation");
}

#[tokio::test]
async fn emits_and_actions_check_with_the_validators_the_handshake_compiled() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let reply = agreed(&service, &caller, draft("order card", order_card())).await;
    let props = json!({ "sku": "ABC-0001", "qty": 2 });
    let session_id = rendered(
        service
            .render(&caller, render_of(&reply.handshake_id, props))
            .await
            .unwrap(),
    )
    .0
    .session_id;
    let emitted = service.emit(&caller, &session_id, "status", json!("lost"), false).await;
    assert_eq!(violated_paths(emitted), [""]);
    assert!(
        service
            .emit(&caller, &session_id, "status", json!("packed"), false)
            .await
            .unwrap()
    );
    let approve = |data: Value, seq: i64| IncomingAction {
        intent: "approve".into(),
        data,
        ui_context: None,
        client_seq: Some(seq),
    };
    let acted = service.record_action(&caller, &session_id, approve(json!({}), 1)).await;
    assert_eq!(violated_paths(acted), [""]);
    service
        .record_action(&caller, &session_id, approve(json!({ "by": "ana" }), 2))
        .await
        .unwrap();
    assert_eq!(service.schemas.compilations(), 0, "compiled once, by the negotiation");
}

#[tokio::test]
async fn a_render_checks_its_props_with_the_validator_its_override_negotiation_compiled() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let reply = agreed(&service, &caller, draft("order card", order_card())).await;
    let other = json!({ "propsSpec": { "type": "object", "properties": { "n": { "type": "integer" } } } });
    let mut render = render_of(&reply.handshake_id, json!({ "n": "seven" }));
    render.override_ = Some(RenderOverride {
        contract: Some(other),
        variance: None,
    });
    assert_eq!(violated_paths(service.render(&caller, render).await), ["/n"]);
    assert_eq!(service.schemas.compilations(), 0, "compiled once, by the negotiation");
}
