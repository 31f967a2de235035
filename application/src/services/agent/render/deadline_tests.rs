//! A paid (hosted) render ends by its render deadline: one whose generation runs past it fails
//! with `PRODUCTION_FAILED` and is refunded, so the sweep of abandoned reservations never takes
//! the charge of a render still running.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use svc_domain::provider_key::{Keyring, MasterKey};
use svc_domain::render_price::RenderPrice;
use svc_domain::wallet::TransactionKind;

use crate::ports::agent::HostSession;
use crate::services::agent::{Caller, HandshakeCommand, HandshakeOutcome, RenderCommand, RenderResult};
use crate::services::hosted::{GenerationAccount, GenerationPricing, ProviderKeyService, payer_of};
use crate::testing::{AgentFakes, InMemoryProviderKeys, OperatorFakes};

/// Every render costs 5 cents of a wallet that starts with 10; renders get `deadline`.
fn account(operator: &OperatorFakes, deadline: Duration) -> GenerationAccount {
    let keys = ProviderKeyService::new(
        Arc::new(InMemoryProviderKeys::default()),
        Keyring::new(vec![MasterKey::new("k1", [1; 32])]).unwrap(),
        operator.clock.clone(),
        operator.ids.clone(),
    );
    let pricing = GenerationPricing {
        price: RenderPrice::new(5, BTreeMap::new()).unwrap(),
        default_generator: "builtin".into(),
    };
    GenerationAccount::new(
        Arc::new(operator.credit_service().with_free_credit(10)),
        operator.credit_reservations(deadline),
        keys,
        pricing,
    )
}

async fn render_new(agent: &AgentFakes, account: GenerationAccount, caller: &Caller) -> RenderResult {
    let service = agent.service().with_generation_account(account);
    let draft = HandshakeCommand {
        intent: "slow card".into(),
        contract: json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } }),
        variance: None,
        generator: None,
        force_create: false,
    };
    let HandshakeOutcome::Agreed(reply) = service.handshake(caller, draft).await.unwrap() else {
        panic!("the draft is agreed");
    };
    let render = RenderCommand {
        handshake_id: reply.handshake_id.clone(),
        props: json!({}),
        theme_id: None,
        model: None,
        override_: None,
        ttl_seconds: None,
        host: HostSession::default(),
        origin: None,
        progress: None,
    };
    service.render(caller, render).await.unwrap()
}

#[tokio::test]
async fn a_paid_generation_past_the_render_deadline_fails_and_is_refunded() {
    let (agent, operator) = (AgentFakes::default(), OperatorFakes::new());
    let caller = AgentFakes::caller("app-1");
    agent.generator.delay(Duration::from_secs(30));
    let started = std::time::Instant::now();
    let result = render_new(&agent, account(&operator, Duration::from_secs(1)), &caller).await;
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "ended at the deadline, not by the generator"
    );
    let RenderResult::Failed { code, message, .. } = &result else {
        panic!("{result:?}");
    };
    assert_eq!(*code, "PRODUCTION_FAILED");
    assert!(message.contains("render deadline (1 s)"), "{message}");
    let ledger = operator.store.ledger_of(&payer_of(&caller));
    let last = ledger.last().unwrap();
    assert_eq!(
        (last.kind, last.delta_cents, last.reason.as_str()),
        (TransactionKind::Refund, 5, "refund: the render overran its deadline")
    );
    assert!(operator.store.open_reservations().is_empty());
}

#[tokio::test]
async fn a_paid_generation_within_the_deadline_settles_its_reservation() {
    let (agent, operator) = (AgentFakes::default(), OperatorFakes::new());
    let caller = AgentFakes::caller("app-1");
    let result = render_new(&agent, account(&operator, Duration::from_secs(60)), &caller).await;
    assert!(matches!(result, RenderResult::Rendered { .. }), "{result:?}");
    let kinds: Vec<_> = operator
        .store
        .ledger_of(&payer_of(&caller))
        .iter()
        .map(|e| (e.kind, e.delta_cents))
        .collect();
    assert_eq!(
        kinds,
        [(TransactionKind::FreeCredit, 10), (TransactionKind::RenderCharge, -5)]
    );
    assert!(operator.store.open_reservations().is_empty(), "settled");
}
