//! A hosted operator generation uses its payer's provider keys, by the rule a render follows:
//! an org app's generation uses the org's keys, never the caller's own.

use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::json;
use svc_domain::app_settings::AppSettings;
use svc_domain::provider_key::{Keyring, MasterKey};
use svc_domain::wallet::Principal;

use super::*;
use crate::ports::app_settings::AppSettingsRepository;
use crate::services::agent::Caller;
use crate::services::blueprints::CatalogSettings;
use crate::services::hosted::{AppPayers, ProviderKeyService, SetProviderKey};
use crate::testing::{AgentFakes, FlatEmbedder, InMemoryAgentStore, InMemoryProviderKeys};

/// Settings that put every app in `org1`.
struct EveryAppInOrg;

#[async_trait::async_trait]
impl AppSettingsRepository for EveryAppInOrg {
    async fn get(&self, _: &str) -> Result<Option<AppSettings>, RepositoryError> {
        Ok(Some(AppSettings {
            org_id: Some("org1".into()),
            ..AppSettings::default()
        }))
    }
    async fn put(&self, _: &str, _: &AppSettings, _: DateTime<Utc>) -> Result<(), RepositoryError> {
        unreachable!("the payer is only read")
    }
}

fn hosted_service(fakes: &AgentFakes, keys: ProviderKeyService) -> OpsBlueprintService {
    OpsBlueprintService::new(OpsBlueprintPorts {
        catalog: BlueprintCatalog::new(
            fakes.store.clone(),
            Arc::new(FlatEmbedder),
            fakes.clock.clone(),
            CatalogSettings::default(),
        ),
        repository: fakes.store.clone(),
        generator: fakes.generator.clone(),
        queue: GenerationQueue::new(1, 1, Duration::from_secs(1)),
        compiler: fakes.compiler.clone(),
        cpu: CpuGate::unbounded(),
        clock: fakes.clock.clone(),
        ids: fakes.ids.clone(),
    })
    .with_provider_keys(keys)
    .with_app_payers(AppPayers {
        settings: Arc::new(EveryAppInOrg),
        apps: Arc::new(InMemoryAgentStore::default()),
    })
}

#[tokio::test]
async fn an_org_apps_operator_generation_uses_the_orgs_keys_never_the_callers() {
    let fakes = AgentFakes::default();
    let keys = ProviderKeyService::new(
        Arc::new(InMemoryProviderKeys::default()),
        Keyring::new(vec![MasterKey::new("k1", [1; 32])]).unwrap(),
        fakes.clock.clone(),
        fakes.ids.clone(),
    );
    let key = |provider: &str, plaintext_key: &str| SetProviderKey {
        provider: provider.into(),
        plaintext_key: plaintext_key.into(),
        label: None,
    };
    keys.set(&Principal::user("u1"), key("openai", "user-key"))
        .await
        .unwrap();
    keys.set(&Principal::user("u1"), key("mistral", "user-m"))
        .await
        .unwrap();
    keys.set(&Principal::org("org1"), key("openai", "org-key"))
        .await
        .unwrap();
    let caller = Caller {
        principal_id: "u1".into(),
        app_id: "app-1".into(),
        key_id: None,
    };
    let contract = json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } } });
    hosted_service(&fakes, keys)
        .generate(
            "app-1",
            contract,
            BlueprintOptions {
                context: Some("orders".into()),
                for_caller: Some(caller),
                ..BlueprintOptions::default()
            },
        )
        .await
        .unwrap();
    let requests = fakes.generator.requests();
    let sent = requests[0]
        .caller_keys
        .as_ref()
        .expect("a hosted generation carries keys");
    assert_eq!(sent.get("openai"), Some("org-key"));
    assert_eq!(sent.get("mistral"), None, "no fallback to the caller's keys");
}
