//! A render the app's rate admitted but the wallet then refused does not count against the rate
//! (docs/hosted-apps.md: refused renders do not count).

use std::collections::BTreeMap;
use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde_json::json;
use svc_domain::app_settings::AppSettings;
use svc_domain::provider_key::{Keyring, MasterKey};
use svc_domain::render_price::RenderPrice;

use crate::ports::RepositoryError;
use crate::ports::agent::HostSession;
use crate::ports::app_settings::AppSettingsRepository;
use crate::services::agent::{
    AgentService, AppRenderLimit, Caller, HandshakeCommand, HandshakeOutcome, RenderCommand, RenderResult,
};
use crate::services::hosted::{GenerationAccount, GenerationPricing, ProviderKeyService, payer_of};
use crate::services::operator::{GrantCredit, GrantKind};
use crate::testing::{AgentFakes, InMemoryProviderKeys, InMemorySharedWindows, OperatorFakes};

const APP: &str = "app-1";
const RATE: u32 = 3;

/// Every app allows `RATE` renders a minute.
struct EveryAppLimited;

#[async_trait::async_trait]
impl AppSettingsRepository for EveryAppLimited {
    async fn get(&self, _: &str) -> Result<Option<AppSettings>, RepositoryError> {
        Ok(Some(AppSettings {
            rate_limit_per_minute: Some(RATE),
            ..AppSettings::default()
        }))
    }
    async fn put(&self, _: &str, _: &AppSettings, _: DateTime<Utc>) -> Result<(), RepositoryError> {
        unreachable!("the limit never writes settings")
    }
}

/// Wallets start empty; a cold generation costs 5 cents.
fn unfunded_account(operator: &OperatorFakes) -> GenerationAccount {
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
        Arc::new(operator.credit_service().with_free_credit(0)),
        operator.credit_reservations(std::time::Duration::from_secs(60)),
        keys,
        pricing,
    )
}

/// Handshakes a new intent (so a cold generation) and renders it.
async fn render_new(service: &AgentService, caller: &Caller, intent: &str) -> RenderResult {
    let draft = HandshakeCommand {
        intent: intent.into(),
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

fn outcome(result: &RenderResult) -> &'static str {
    match result {
        RenderResult::Rendered { .. } => "rendered",
        RenderResult::Failed { code, .. } => code,
        RenderResult::Refused(refusal) => refusal.entry.code,
    }
}

#[tokio::test]
async fn a_render_refused_for_credit_does_not_count_against_the_apps_rate() {
    let agent = AgentFakes::default();
    let operator = OperatorFakes::new();
    let windows = Arc::new(InMemorySharedWindows::default());
    let service = agent
        .service()
        .with_generation_account(unfunded_account(&operator))
        .with_app_render_limit(AppRenderLimit::new(Arc::new(EveryAppLimited), windows.clone()));
    let caller = AgentFakes::caller(APP);

    // More refusals than the rate allows renders: each is told about the wallet, none counts.
    for n in 0..=RATE {
        let refused = render_new(&service, &caller, &format!("card {n}")).await;
        assert_eq!(outcome(&refused), "insufficient_credit", "render {n}: {refused:?}");
    }
    assert_eq!(windows.admitted("app-renders", APP), 0, "refused renders do not count");

    // Paid for, the app gets its whole minute: RATE renders, then the rate's refusal.
    operator
        .credit_service()
        .grant(GrantCredit {
            principal: payer_of(&caller),
            kind: GrantKind::Topup,
            amount_cents: 100,
            reason: "top-up".into(),
        })
        .await
        .unwrap();
    for n in 0..RATE {
        let paid = render_new(&service, &caller, &format!("paid card {n}")).await;
        assert_eq!(outcome(&paid), "rendered", "paid render {n}: {paid:?}");
    }
    let over = render_new(&service, &caller, "one too many").await;
    assert_eq!(outcome(&over), "app_rate_limited", "{over:?}");
}
