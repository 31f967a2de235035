//! The render use case over in-memory fakes: every branch of the plan, refusals, failures, and a
//! handshake that two renders race for. No database, no server.

use std::net::{IpAddr, Ipv4Addr};
use std::time::Duration;

use chrono::TimeDelta;
use serde_json::{Value, json};
use svc_domain::handshake::{HandshakeAction, HandshakeLifecycle, Origin};
use svc_domain::session::SessionStatus;

use super::*;
use crate::ports::agent::{CacheMatch, HandshakeRecord, HandshakeRepository, HostSession, SessionRepository};
use crate::ports::generation::GenerationError;
use crate::services::rate_limit::WindowQuota;
use crate::testing::AgentFakes;

pub(super) fn titled() -> Value {
    json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } })
}

fn counted() -> Value {
    json!({ "propsSpec": { "type": "object", "properties": { "count": { "type": "integer" } } } })
}

pub(super) fn draft(intent: &str, contract: Value) -> HandshakeCommand {
    HandshakeCommand {
        intent: intent.into(),
        contract,
        variance: None,
        generator: None,
        force_create: false,
    }
}

pub(super) fn render_of(handshake_id: &str, props: Value) -> RenderCommand {
    RenderCommand {
        handshake_id: handshake_id.into(),
        props,
        theme_id: None,
        model: None,
        override_: None,
        ttl_seconds: None,
        host: HostSession::default(),
        origin: Some(IpAddr::V4(Ipv4Addr::new(192, 0, 2, 7))),
        progress: None,
    }
}

pub(super) async fn agreed(service: &AgentService, caller: &Caller, cmd: HandshakeCommand) -> HandshakeReply {
    match service.handshake(caller, cmd).await.unwrap() {
        HandshakeOutcome::Agreed(reply) => *reply,
        HandshakeOutcome::Declined { findings } => panic!("declined: {findings:?}"),
    }
}

pub(super) fn rendered(result: RenderResult) -> (RenderIdentity, FirstPaint) {
    match result {
        RenderResult::Rendered {
            identity, first_paint, ..
        } => (identity, first_paint),
        other => panic!("not rendered: {other:?}"),
    }
}

/// Handshakes and renders `intent` with `contract`: the blueprint it generated or reused.
pub(super) async fn render_once(
    service: &AgentService,
    caller: &Caller,
    intent: &str,
    contract: Value,
) -> RenderIdentity {
    let reply = agreed(service, caller, draft(intent, contract)).await;
    let result = service
        .render(caller, render_of(&reply.handshake_id, json!({})))
        .await
        .unwrap();
    rendered(result).0
}

#[tokio::test]
async fn a_new_intent_generates_compiles_once_and_stores_blueprint_and_session() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let reply = agreed(&service, &caller, draft("order card", titled())).await;
    assert_eq!((reply.origin, reply.action), (Origin::Agent, HandshakeAction::Create));

    let result = service
        .render(&caller, render_of(&reply.handshake_id, json!({ "title": "Order 7" })))
        .await
        .unwrap();
    let (identity, first_paint) = rendered(result);
    assert_eq!(identity.action, HandshakeAction::Create);
    assert_eq!(
        identity.blueprint_id, reply.blueprint_id,
        "the announced id is the one generated"
    );
    assert!(!identity.cache.hit);
    assert_eq!(fakes.generator.requests().len(), 1);
    assert_eq!(fakes.compiler.compilations(), 1, "one compilation per generation");
    assert!(first_paint.component_code.starts_with("/* compiled */"));
    assert_eq!(first_paint.props, json!({ "title": "Order 7" }));

    let sessions = fakes.store.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].session_id, identity.session_id);
    assert_eq!(sessions[0].contract.as_value(), titled());
    assert_eq!(
        sessions[0].blueprint_id.as_deref(),
        Some(identity.blueprint_id.as_str())
    );
    assert_eq!(fakes.store.blueprints().len(), 1);
    let lifecycle = fakes.store.deliveries(&identity.session_id, "_svc:lifecycle");
    assert_eq!(
        lifecycle.last().map(|d| d.complete),
        Some(true),
        "`done` ends the lifecycle channel"
    );
}

#[tokio::test]
async fn the_same_reuse_key_is_served_from_the_cache_without_generating() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let first = render_once(&service, &caller, "order card", titled()).await;

    let reply = agreed(&service, &caller, draft("order card", titled())).await;
    assert_eq!((reply.origin, reply.action), (Origin::Cache, HandshakeAction::Reuse));
    let (identity, _) = rendered(
        service
            .render(&caller, render_of(&reply.handshake_id, json!({})))
            .await
            .unwrap(),
    );
    assert_eq!(identity.action, HandshakeAction::Reuse);
    assert_eq!(identity.blueprint_id, first.blueprint_id);
    assert!(identity.cache.hit);
    assert_eq!(identity.cache.kind.as_deref(), Some("exact"));
    assert_eq!(identity.cache.llm_calls_avoided, 1);
    assert_eq!(fakes.generator.requests().len(), 1, "only the first render generated");
    assert_eq!(fakes.store.blueprints().len(), 1);
    assert_eq!(fakes.store.sessions().len(), 2);
}

/// The service behind a CPU gate of one slot, refusing after a 1 ms wait.
fn one_slot_gate(fakes: &AgentFakes) -> (AgentService, crate::services::cpu_gate::CpuGate) {
    let cpu = crate::services::cpu_gate::CpuGate::new(1, Duration::from_millis(1));
    (fakes.service().with_cpu_gate(cpu.clone()), cpu)
}

/// Takes the gate's one slot for half a second; await the handle to let it go.
async fn hold_the_slot(
    cpu: crate::services::cpu_gate::CpuGate,
) -> tokio::task::JoinHandle<Result<(), crate::services::cpu_gate::CpuWorkError>> {
    let holding = tokio::spawn(async move { cpu.run(|| std::thread::sleep(Duration::from_millis(500))).await });
    tokio::time::sleep(Duration::from_millis(50)).await;
    holding
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_draft_sent_again_is_agreed_as_before_without_negotiating_again() {
    let fakes = AgentFakes::default();
    let (service, cpu) = one_slot_gate(&fakes);
    let caller = AgentFakes::caller("app-1");
    // Negotiation amends it (`madeUp` is not a contract key): a `synth` handshake.
    let amended = json!({ "propsSpec": { "type": "object" }, "madeUp": 1 });
    let first = agreed(&service, &caller, draft("order card", amended.clone())).await;
    assert_eq!(first.origin, Origin::Synth);
    // The gate's one slot is taken: a new draft cannot be negotiated now, the same one needs not be.
    let holding = hold_the_slot(cpu).await;
    let again = agreed(&service, &caller, draft("order card", amended)).await;
    assert_eq!(again.origin, first.origin);
    assert_eq!(again.amendments, first.amendments);
    assert_eq!(again.contract_hash, first.contract_hash);
    assert_eq!(again.props_schema_hash, first.props_schema_hash);
    assert_ne!(again.handshake_id, first.handshake_id);
    match service.handshake(&caller, draft("order card", titled())).await {
        Err(AgentError::Busy(_)) => {}
        other => panic!("a new draft waits for the gate and is refused: {other:?}"),
    }
    holding.await.unwrap().unwrap();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn small_props_of_a_known_schema_are_checked_while_the_cpu_gate_is_full_unless_it_has_a_pattern() {
    let fakes = AgentFakes::default();
    let (service, cpu) = one_slot_gate(&fakes);
    let caller = AgentFakes::caller("app-1");
    let patterned = json!({ "propsSpec": { "type": "object",
        "properties": { "title": { "type": "string", "pattern": "^Q[0-9]$" } } } });
    // Each schema is compiled once, through the gate, by a first render.
    render_once(&service, &caller, "order card", titled()).await;
    render_once(&service, &caller, "quarter card", patterned.clone()).await;
    let plain = agreed(&service, &caller, draft("order card", titled())).await;
    let wrong = agreed(&service, &caller, draft("order card", titled())).await;
    let regex = agreed(&service, &caller, draft("quarter card", patterned)).await;

    let holding = hold_the_slot(cpu).await;
    let render =
        |handshake: &HandshakeReply, props: Value| service.render(&caller, render_of(&handshake.handshake_id, props));
    let (identity, first_paint) = rendered(render(&plain, json!({ "title": "Order 7" })).await.unwrap());
    assert_eq!(identity.action, HandshakeAction::Reuse);
    assert_eq!(first_paint.props, json!({ "title": "Order 7" }));
    match render(&wrong, json!({ "title": 7 })).await {
        Err(AgentError::ContractViolation { target, violations }) => {
            assert_eq!(target, "props");
            assert_eq!(violations[0].path, "/title");
        }
        other => panic!("a wrong prop is still found: {other:?}"),
    }
    match render(&regex, json!({ "title": "Q3" })).await {
        Err(AgentError::Busy(_)) => {}
        other => panic!("a pattern is never run on an async worker, so this waits for the gate: {other:?}"),
    }
    holding.await.unwrap().unwrap();
}

#[tokio::test]
async fn a_semantic_match_is_served_with_its_similarity_and_reason() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let cached = render_once(&service, &caller, "order card", titled()).await;
    // A semantic match needs the catalog's embedder: the handshake it would have recorded.
    let handshake = HandshakeRecord {
        handshake_id: "h-semantic".into(),
        app_id: caller.app_id.clone(),
        intent: "purchase order card".into(),
        contract: titled().try_into().unwrap(),
        variance: json!({}),
        generator: None,
        origin: Origin::Cache,
        action: HandshakeAction::Reuse,
        blueprint_id: cached.blueprint_id.clone(),
        cache: Some(CacheMatch {
            blueprint_id: cached.blueprint_id.clone(),
            similarity: 0.91,
            kind: "semantic".into(),
            reason: "intent is 0.91 similar".into(),
        }),
        lifecycle: HandshakeLifecycle::new(fakes.clock.now()),
    };
    HandshakeRepository::insert(fakes.store.as_ref(), &handshake)
        .await
        .unwrap();

    let (identity, _) = rendered(
        service
            .render(&caller, render_of("h-semantic", json!({})))
            .await
            .unwrap(),
    );
    assert_eq!(identity.blueprint_id, cached.blueprint_id);
    assert_eq!(identity.cache.kind.as_deref(), Some("semantic"));
    assert_eq!(identity.cache.similarity, Some(0.91));
    assert_eq!(identity.cache.reason.as_deref(), Some("intent is 0.91 similar"));
    assert_eq!(fakes.generator.requests().len(), 1);
}

#[tokio::test]
async fn a_new_contract_for_a_cached_intent_is_an_update_beside_the_other_blueprint() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let first = render_once(&service, &caller, "order card", titled()).await;
    let reply = agreed(&service, &caller, draft("order card", counted())).await;
    assert_eq!(reply.action, HandshakeAction::Update);
    let (identity, _) = rendered(
        service
            .render(&caller, render_of(&reply.handshake_id, json!({ "count": 3 })))
            .await
            .unwrap(),
    );
    assert_eq!(identity.action, HandshakeAction::Update);
    assert_ne!(identity.blueprint_id, first.blueprint_id);
    assert_ne!(identity.contract_hash, first.contract_hash);
    let stored: Vec<String> = fakes.store.blueprints().into_iter().map(|b| b.blueprint_id).collect();
    assert_eq!(
        stored,
        [first.blueprint_id, identity.blueprint_id],
        "the first blueprint stays"
    );
}

#[tokio::test]
async fn force_create_generates_even_when_the_reuse_key_is_cached() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let first = render_once(&service, &caller, "order card", titled()).await;
    let reply = agreed(
        &service,
        &caller,
        HandshakeCommand {
            force_create: true,
            ..draft("order card", titled())
        },
    )
    .await;
    assert_eq!((reply.origin, reply.action), (Origin::Agent, HandshakeAction::Replace));
    let (identity, _) = rendered(
        service
            .render(&caller, render_of(&reply.handshake_id, json!({})))
            .await
            .unwrap(),
    );
    assert_eq!(identity.action, HandshakeAction::Replace);
    assert_ne!(identity.blueprint_id, first.blueprint_id);
    assert!(!identity.cache.hit);
    assert_eq!(fakes.generator.requests().len(), 2);
}

#[tokio::test]
async fn a_variance_override_re_aims_a_cached_handshake_at_a_new_component() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let first = render_once(&service, &caller, "order card", titled()).await;
    let reply = agreed(&service, &caller, draft("order card", titled())).await;
    assert_eq!(reply.origin, Origin::Cache);
    let command = RenderCommand {
        override_: Some(RenderOverride {
            contract: None,
            variance: Some(json!({ "density": "compact" })),
        }),
        ..render_of(&reply.handshake_id, json!({}))
    };
    let (identity, _) = rendered(service.render(&caller, command).await.unwrap());
    assert_ne!(
        identity.blueprint_id, first.blueprint_id,
        "a re-aimed render is a new component"
    );
    assert_ne!(identity.blueprint_id, reply.blueprint_id);
    assert_ne!(identity.variant_key, first.variant_key);
    assert!(!identity.cache.hit);
    assert_eq!(fakes.generator.requests().len(), 2);
    assert_eq!(fakes.generator.requests()[1].variance, json!({ "density": "compact" }));
}

/// A render reports what it did: an `override.variance` that lands on a cached variant serves
/// that component, so the action is `reuse`, whatever the handshake planned.
#[tokio::test]
async fn a_variance_override_landing_on_a_cached_variant_is_a_reuse() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let compact = json!({ "density": "compact" });
    render_once(&service, &caller, "order card", titled()).await;
    let with_variance = |variance: Value| HandshakeCommand {
        variance: Some(variance),
        ..draft("order card", titled())
    };
    let cached = agreed(&service, &caller, with_variance(compact.clone())).await;
    let (compact_variant, _) = rendered(
        service
            .render(&caller, render_of(&cached.handshake_id, json!({})))
            .await
            .unwrap(),
    );
    // Planned as another variant beside the cached ones, re-aimed at the compact one.
    let reply = agreed(&service, &caller, with_variance(json!({ "density": "wide" }))).await;
    assert_eq!(reply.action, HandshakeAction::Update);
    let command = RenderCommand {
        override_: Some(RenderOverride {
            contract: None,
            variance: Some(compact),
        }),
        ..render_of(&reply.handshake_id, json!({}))
    };
    let (identity, _) = rendered(service.render(&caller, command).await.unwrap());
    assert_eq!(identity.blueprint_id, compact_variant.blueprint_id);
    assert!(identity.cache.hit);
    assert_eq!(identity.action, HandshakeAction::Reuse);
    assert_eq!(identity.cache.kind.as_deref(), Some("exact"));
    assert_eq!(
        fakes.generator.requests().len(),
        2,
        "the compact variant was not generated again"
    );
}

#[tokio::test]
async fn an_override_contract_that_needs_amending_or_a_bad_variance_is_refused_and_keeps_the_handshake() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let reply = agreed(&service, &caller, draft("order card", titled())).await;
    let with = |over: RenderOverride| RenderCommand {
        override_: Some(over),
        ..render_of(&reply.handshake_id, json!({}))
    };
    let amended = RenderOverride {
        contract: Some(json!({ "propsSpec": { "type": "object" }, "madeUp": 1 })),
        variance: None,
    };
    match service.render(&caller, with(amended)).await {
        Err(AgentError::InvalidParams { field, rule }) => {
            assert_eq!(field, "override.contract");
            assert!(rule.starts_with("must already conform"), "{rule}");
        }
        other => panic!("{other:?}"),
    }
    let bad_variance = RenderOverride {
        contract: None,
        variance: Some(json!([1])),
    };
    match service.render(&caller, with(bad_variance)).await {
        Err(AgentError::InvalidParams { field, rule }) => {
            assert_eq!(
                (field.as_str(), rule.as_str()),
                ("override.variance", "must be an object")
            );
        }
        other => panic!("{other:?}"),
    }
    assert!(fakes.store.sessions().is_empty());
    // Still usable.
    rendered(
        service
            .render(&caller, render_of(&reply.handshake_id, json!({})))
            .await
            .unwrap(),
    );
}

#[tokio::test]
async fn a_cold_generation_over_the_demo_limit_is_refused_before_any_work() {
    let fakes = AgentFakes::default();
    let service = fakes
        .service()
        .with_generation_limit(GenerationLimit::per_address(WindowQuota {
            limit: 1,
            window: TimeDelta::minutes(10),
        }));
    let caller = AgentFakes::caller("app-1");
    render_once(&service, &caller, "order card", titled()).await;
    let reply = agreed(&service, &caller, draft("stock card", counted())).await;
    match service
        .render(&caller, render_of(&reply.handshake_id, json!({})))
        .await
        .unwrap()
    {
        RenderResult::Refused(refusal) => assert_eq!(refusal.entry.code, "issuer_rate_limited"),
        other => panic!("{other:?}"),
    }
    assert_eq!(fakes.generator.requests().len(), 1);
    assert_eq!(fakes.store.sessions().len(), 1);
    // A cached render runs no generation and is not limited.
    let cached = agreed(&service, &caller, draft("order card", titled())).await;
    rendered(
        service
            .render(&caller, render_of(&cached.handshake_id, json!({})))
            .await
            .unwrap(),
    );
    // The refused handshake stays usable once the window ends.
    fakes.clock.advance(TimeDelta::minutes(10));
    let handshake = HandshakeRepository::get(fakes.store.as_ref(), &reply.handshake_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(handshake.lifecycle.consumed_at, None);
}

#[tokio::test]
async fn a_failed_generation_commits_an_error_session_and_uses_the_handshake() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    fakes.generator.fail(GenerationError::ProductionFailed(
        "the model returned no component".into(),
    ));
    let reply = agreed(&service, &caller, draft("order card", titled())).await;
    let (identity, code, message) = match service
        .render(&caller, render_of(&reply.handshake_id, json!({})))
        .await
        .unwrap()
    {
        RenderResult::Failed {
            identity,
            code,
            message,
        } => (identity, code, message),
        other => panic!("{other:?}"),
    };
    assert_eq!(code, "PRODUCTION_FAILED");
    assert!(message.contains("the model returned no component"), "{message}");
    let sessions = fakes.store.sessions();
    assert_eq!(sessions.len(), 1);
    assert_eq!(sessions[0].session_id, identity.session_id);
    assert_eq!(sessions[0].head.status_at(fakes.clock.now()), SessionStatus::Failed);
    assert_eq!(
        sessions[0].failure.as_ref().map(|f| f.code.as_str()),
        Some("PRODUCTION_FAILED")
    );
    assert!(fakes.store.blueprints().is_empty());
    match service.render(&caller, render_of(&reply.handshake_id, json!({}))).await {
        Err(AgentError::InvalidParams { field, .. }) => assert_eq!(field, "handshakeId"),
        other => panic!("the handshake is used: {other:?}"),
    }
}

#[tokio::test]
async fn generated_code_that_does_not_compile_is_a_validation_error_session() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    fakes.generator.produce("export const NotDefault = 1;");
    let reply = agreed(&service, &caller, draft("order card", titled())).await;
    match service
        .render(&caller, render_of(&reply.handshake_id, json!({})))
        .await
        .unwrap()
    {
        RenderResult::Failed { code, .. } => assert_eq!(code, "VALIDATION_ERROR"),
        other => panic!("{other:?}"),
    }
    assert_eq!(
        fakes.store.sessions()[0].failure.as_ref().unwrap().code,
        "VALIDATION_ERROR"
    );
}

#[tokio::test]
async fn props_that_break_the_contract_are_refused_and_keep_the_handshake() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let reply = agreed(&service, &caller, draft("order card", titled())).await;
    match service
        .render(&caller, render_of(&reply.handshake_id, json!({ "title": 7 })))
        .await
    {
        Err(AgentError::ContractViolation { target, .. }) => assert_eq!(target, "props"),
        other => panic!("{other:?}"),
    }
    assert!(fakes.generator.requests().is_empty());
    rendered(
        service
            .render(&caller, render_of(&reply.handshake_id, json!({ "title": "ok" })))
            .await
            .unwrap(),
    );
}

#[tokio::test]
async fn another_apps_handshake_is_unknown() {
    let fakes = AgentFakes::default();
    let service = fakes.service();
    let reply = agreed(&service, &AgentFakes::caller("app-1"), draft("order card", titled())).await;
    match service
        .render(&AgentFakes::caller("app-2"), render_of(&reply.handshake_id, json!({})))
        .await
    {
        Err(AgentError::InvalidParams { field, rule }) => {
            assert_eq!(field, "handshakeId");
            assert_eq!(rule, "unknown handshake; call svc_handshake first");
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn two_renders_racing_for_one_handshake_generate_once() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    fakes.generator.delay(Duration::from_millis(50));
    let reply = agreed(&service, &caller, draft("order card", titled())).await;
    let (a, b) = tokio::join!(
        service.render(&caller, render_of(&reply.handshake_id, json!({}))),
        service.render(&caller, render_of(&reply.handshake_id, json!({}))),
    );
    let outcomes = [a, b];
    let won = outcomes
        .iter()
        .filter(|r| matches!(r, Ok(RenderResult::Rendered { .. })))
        .count();
    let lost: Vec<&AgentError> = outcomes.iter().filter_map(|r| r.as_ref().err()).collect();
    assert_eq!(won, 1, "{outcomes:?}");
    assert_eq!(lost.len(), 1, "{outcomes:?}");
    assert!(
        matches!(lost[0], AgentError::InvalidParams { field, .. } if field == "handshakeId"),
        "{lost:?}"
    );
    assert_eq!(fakes.generator.requests().len(), 1);
    assert_eq!(fakes.store.sessions().len(), 1);
}

/// A cache hit that finds its handshake usable and then loses it to another render while it
/// waits for the CPU gate (its props schema has a pattern) stores nothing and answers that the
/// handshake was used. (That the consume and the insert are one write, both or neither, is the
/// repository tests' `render_commit::*`.)
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_cache_hit_whose_handshake_was_used_meanwhile_stores_no_session() {
    let fakes = AgentFakes::default();
    let cpu = crate::services::cpu_gate::CpuGate::new(1, Duration::from_secs(5));
    let service = fakes.service().with_cpu_gate(cpu.clone());
    let caller = AgentFakes::caller("app-1");
    let patterned = json!({ "propsSpec": { "type": "object",
        "properties": { "title": { "type": "string", "pattern": "^Q[0-9]$" } } } });
    render_once(&service, &caller, "quarter card", patterned.clone()).await;
    let reply = agreed(&service, &caller, draft("quarter card", patterned)).await;
    assert_eq!(reply.action, HandshakeAction::Reuse);

    let holding = hold_the_slot(cpu).await;
    let waiting = tokio::spawn({
        let (service, caller, id) = (service.clone(), caller.clone(), reply.handshake_id.clone());
        async move { service.render(&caller, render_of(&id, json!({ "title": "Q3" }))).await }
    });
    tokio::time::sleep(Duration::from_millis(50)).await;
    let used = HandshakeRepository::consume(fakes.store.as_ref(), &reply.handshake_id, chrono::Utc::now()).await;
    assert!(used.unwrap(), "the handshake was still unused while the render waited");
    holding.await.unwrap().unwrap();
    match waiting.await.unwrap() {
        Err(AgentError::InvalidParams { field, .. }) if field == "handshakeId" => {}
        other => panic!("the render lost its handshake: {other:?}"),
    }
    assert_eq!(fakes.store.sessions().len(), 1, "only the first render's session");
}

#[tokio::test]
async fn merges_cannot_grow_props_past_the_props_budget() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let session_id = render_once(&service, &caller, "order card", titled()).await.session_id;
    let three_mib = "m".repeat(3 << 20);
    let grown = service
        .change_props(
            &caller,
            &session_id,
            PropsChange::Merge(json!({ "a": three_mib })),
            true,
        )
        .await
        .unwrap();
    assert!(grown.updated, "3 MiB of props are within the budget");
    match service
        .change_props(
            &caller,
            &session_id,
            PropsChange::Merge(json!({ "b": three_mib })),
            false,
        )
        .await
    {
        Err(AgentError::OverBudget { field, over }) => {
            assert_eq!(field, "props");
            assert_eq!(over.budget, svc_domain::budget::Budget::PropsBytes);
        }
        other => panic!("a merge to 6 MiB of props was not refused: {other:?}"),
    }
    let stored = SessionRepository::get(fakes.store.as_ref(), &session_id)
        .await
        .unwrap()
        .unwrap();
    assert!(
        stored.head.props.get("b").is_none(),
        "nothing of the refused merge is stored"
    );
}

/// `override.variance` merges into the handshake's variance; the merge holds at most 32 fields
/// (`svc_domain::contract::draft_limits`), and a field removed with null makes room.
#[tokio::test]
async fn a_variance_override_may_not_grow_the_variance_past_32_fields() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let fields: serde_json::Map<String, Value> = (0..32).map(|i| (format!("axis{i}"), json!("x"))).collect();
    let cmd = HandshakeCommand {
        variance: Some(Value::Object(fields)),
        ..draft("order card", titled())
    };
    let reply = agreed(&service, &caller, cmd).await;
    let with = |patch: Value| RenderCommand {
        override_: Some(RenderOverride {
            contract: None,
            variance: Some(patch),
        }),
        ..render_of(&reply.handshake_id, json!({}))
    };
    match service
        .render(&caller, with(json!({ "axis0": "y", "one more": 1 })))
        .await
    {
        Err(AgentError::InvalidParams { field, rule }) => assert_eq!(
            (field.as_str(), rule.as_str()),
            (
                "override.variance",
                "the merged variance would hold 33 fields, the most it may hold is 32: remove some with null"
            )
        ),
        other => panic!("{other:?}"),
    }
    assert!(fakes.store.sessions().is_empty(), "nothing ran");
    let (identity, _) = rendered(
        service
            .render(&caller, with(json!({ "axis0": null, "one more": 1 })))
            .await
            .unwrap(),
    );
    assert_ne!(identity.variant_key, reply.variant_key);
    let generated = &fakes.generator.requests()[0].variance;
    assert_eq!(generated.as_object().unwrap().len(), 32);
    assert_eq!(generated["one more"], 1);
}
