//! Who pays for a cold generation and with which provider keys (hosted mode).
//!
//! The charge is a reservation: a `render_charge` ledger row written atomically (the wallet row
//! locked) before the generation runs, so two concurrent renders with balance for one get one
//! generation and one `insufficient_credit` refusal, and the balance never goes negative. A
//! generation that fails, or a render that ends before it produced anything, gets a `refund` of
//! the reservation; a generation that succeeds settles it as charged. A cache hit never comes
//! here: it is free.

use std::sync::Arc;

use svc_domain::refusal::RefusalCode;
use svc_domain::render_price::RenderPrice;
use svc_domain::wallet::{Principal, WalletError};
use tokio_util::task::TaskTracker;

use super::provider_keys::ProviderKeyService;
use crate::ports::RepositoryError;
use crate::ports::agent::AppRepository;
use crate::ports::app_settings::AppSettingsRepository;
use crate::ports::generation::CallerKeys;
use crate::services::agent::{Caller, Refusal};
use crate::services::federated_caller::is_federated_principal;
use crate::services::generation::{STANDARD_SLUG, serving_slug};
use crate::services::operator::{ChargeCredit, CreditService, CreditServiceError, RefundCredit};

/// The caller's own wallet: its key's user id, else its app id (Document 3, "Authentication").
/// [`GenerationAccount::payer`] puts the app's org, or for a federated caller the app's owner,
/// before it.
pub fn payer_of(caller: &Caller) -> Principal {
    let id = if caller.principal_id.is_empty() {
        &caller.app_id
    } else {
        &caller.principal_id
    };
    Principal::user(id.clone())
}

/// The prices of cold generations and the generator slug a render without one uses.
#[derive(Debug, Clone)]
pub struct GenerationPricing {
    pub price: RenderPrice,
    pub default_generator: String,
}

/// Where the payer of an app's renders is read: the app's org (its hosted settings) and its
/// owner.
#[derive(Clone)]
pub struct AppPayers {
    pub settings: Arc<dyn AppSettingsRepository>,
    pub apps: Arc<dyn AppRepository>,
}

impl AppPayers {
    /// Who pays for a generation of `caller` (a render, or `svc_ops_generate_blueprint`), and so
    /// whose provider keys it uses:
    /// 1. the org of the caller's app, when the app belongs to one (whoever the caller is);
    /// 2. for a federated caller (`<iss>#<sub>`, who has no wallet of their own), the app's owner;
    /// 3. otherwise the caller.
    pub async fn payer(&self, caller: &Caller) -> Result<Principal, RepositoryError> {
        let settings = self.settings.get(&caller.app_id).await?.unwrap_or_default();
        if let Some(org_id) = settings.org_id {
            return Ok(Principal::org(org_id));
        }
        if is_federated_principal(&caller.principal_id)
            && let Some(app) = self.apps.get(&caller.app_id).await?
        {
            return Ok(Principal::user(app.owner_id));
        }
        Ok(payer_of(caller))
    }
}

/// Credits and provider keys around one cold generation.
#[derive(Clone)]
pub struct GenerationAccount {
    credits: Arc<CreditService>,
    keys: ProviderKeyService,
    pricing: GenerationPricing,
    /// `None`: every render is charged to its caller.
    app_payers: Option<AppPayers>,
    /// Refunds of reservations dropped open, written in the background (see `Reservation`).
    background_refunds: TaskTracker,
}

impl GenerationAccount {
    pub fn new(credits: Arc<CreditService>, keys: ProviderKeyService, pricing: GenerationPricing) -> Self {
        Self {
            credits,
            keys,
            pricing,
            app_payers: None,
            background_refunds: TaskTracker::new(),
        }
    }

    /// Waits until the refund of every reservation dropped so far is written: at shutdown,
    /// after the last renders were ended and before the database closes.
    pub async fn background_refunds_written(&self) {
        self.background_refunds.close();
        self.background_refunds.wait().await;
        self.background_refunds.reopen();
    }

    /// Renders of an app in an org are charged to the org, and a federated caller's to the
    /// app's owner.
    pub fn with_app_payers(self, app_payers: AppPayers) -> Self {
        Self {
            app_payers: Some(app_payers),
            ..self
        }
    }

    /// Whose wallet a render of `caller` is charged to and whose provider keys it uses
    /// ([`AppPayers::payer`]; without app payers, the caller).
    pub async fn payer(&self, caller: &Caller) -> Result<Principal, RepositoryError> {
        match &self.app_payers {
            Some(payers) => payers.payer(caller).await,
            None => Ok(payer_of(caller)),
        }
    }

    /// Takes the price of one generation from the payer's wallet, or refuses the render with
    /// `insufficient_credit` (the handshake stays intact). The reservation carries the payer's
    /// provider keys for the generator.
    pub async fn reserve(
        &self,
        caller: &Caller,
        model: Option<&str>,
        generator: Option<&str>,
        session_id: &str,
    ) -> Result<Result<Reservation, Refusal>, RepositoryError> {
        let payer = self.payer(caller).await?;
        self.credits.welcome(&payer).await.map_err(storage)?;
        // Priced by the generator that serves it: a render that names a model and no generator
        // is served by `standard` (every hosted deployment has it), not the default.
        let slug = serving_slug(
            generator,
            model.is_some(),
            Some(STANDARD_SLUG),
            &self.pricing.default_generator,
        );
        let price = self.pricing.price.of(model, slug);
        let charged = if price > 0 {
            let charge = ChargeCredit {
                principal: payer.clone(),
                amount_cents: price,
                reason: format!("render: {}", model.unwrap_or(slug)),
                related_session_id: Some(session_id.to_owned()),
            };
            match self.credits.charge(charge).await {
                Ok(_) => price,
                Err(CreditServiceError::Wallet(WalletError::InsufficientCredit { balance_cents, .. })) => {
                    return Ok(Err(Refusal {
                        entry: RefusalCode::InsufficientCredit.entry(),
                        message: format!("a render costs {price} cents and the wallet holds {balance_cents} cents"),
                        balance_cents_at_check: Some(balance_cents),
                    }));
                }
                Err(other) => return Err(storage(other)),
            }
        } else {
            0
        };
        let keys = match self.keys.caller_keys(&payer).await {
            Ok(keys) => keys,
            Err(error) => {
                let reservation = self.reservation(payer, charged, session_id, CallerKeys::default());
                reservation.refund("refund: the render did not run").await;
                return Err(match error {
                    super::ProviderKeyServiceError::Storage(e) => e,
                    other => RepositoryError::Unavailable(anyhow::anyhow!(other.to_string())),
                });
            }
        };
        Ok(Ok(self.reservation(payer, charged, session_id, keys)))
    }

    fn reservation(&self, payer: Principal, charged: i64, session_id: &str, keys: CallerKeys) -> Reservation {
        Reservation {
            account: self.clone(),
            payer,
            charged_cents: charged,
            session_id: session_id.to_owned(),
            keys,
            closed: false,
        }
    }
}

fn storage(error: CreditServiceError) -> RepositoryError {
    match error {
        CreditServiceError::Storage(e) => e,
        other => RepositoryError::Unavailable(anyhow::anyhow!(other.to_string())),
    }
}

/// A reserved charge. Settle it when the generation produced a component, refund it when it
/// did not; dropped open (the render was cancelled), it refunds in the background.
pub struct Reservation {
    account: GenerationAccount,
    payer: Principal,
    charged_cents: i64,
    session_id: String,
    keys: CallerKeys,
    closed: bool,
}

/// Never the keys.
impl std::fmt::Debug for Reservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reservation")
            .field("payer", &self.payer)
            .field("charged_cents", &self.charged_cents)
            .field("session_id", &self.session_id)
            .finish_non_exhaustive()
    }
}

impl Reservation {
    /// The payer's provider keys, for the generation request.
    pub fn keys(&self) -> CallerKeys {
        self.keys.clone()
    }

    /// The generation succeeded: the charge stands, and the key of the model that ran is marked
    /// used.
    pub async fn settle(mut self, model: Option<&str>) {
        self.closed = true;
        let Some(provider) = model.and_then(|m| m.split([':', '/']).next()) else {
            return;
        };
        if let Err(error) = self.account.keys.touch(&self.payer, provider).await {
            tracing::warn!(error = %error, "could not record the provider key's lastUsedAt");
        }
    }

    /// The generation failed or never ran: the charge is given back.
    pub async fn refund(mut self, reason: &str) {
        self.closed = true;
        refund(&self.account, &self.payer, self.charged_cents, &self.session_id, reason).await;
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.closed || self.charged_cents == 0 {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            tracing::error!(payer = %self.payer.principal_id, cents = self.charged_cents, "a dropped reservation could not be refunded: no runtime");
            return;
        };
        let (account, payer, cents, session) = (
            self.account.clone(),
            self.payer.clone(),
            self.charged_cents,
            self.session_id.clone(),
        );
        let tracker = self.account.background_refunds.clone();
        tracker.spawn_on(
            async move {
                refund(&account, &payer, cents, &session, "refund: the render was cancelled").await;
            },
            &runtime,
        );
    }
}

async fn refund(account: &GenerationAccount, payer: &Principal, cents: i64, session_id: &str, reason: &str) {
    if cents == 0 {
        return;
    }
    let command = RefundCredit {
        principal: payer.clone(),
        amount_cents: cents,
        reason: reason.to_owned(),
        related_session_id: Some(session_id.to_owned()),
    };
    if let Err(error) = account.credits.refund(command).await {
        tracing::error!(error = %error, payer = %payer.principal_id, cents, "a reserved charge could not be refunded");
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use std::collections::BTreeMap;

    use svc_domain::provider_key::{Keyring, MasterKey};
    use svc_domain::wallet::TransactionKind;

    use super::*;
    use crate::ports::Clock;
    use crate::services::hosted::SetProviderKey;
    use crate::testing::{InMemoryProviderKeys, OperatorFakes};

    fn caller() -> Caller {
        Caller {
            principal_id: "u1".into(),
            app_id: "app1".into(),
            key_id: None,
        }
    }

    fn account(fakes: &OperatorFakes, free: i64, price: i64) -> GenerationAccount {
        priced_account(fakes, free, price, [("openai:gpt-5", 7)])
    }

    fn priced_account<const N: usize>(
        fakes: &OperatorFakes,
        free: i64,
        price: i64,
        per_model: [(&str, i64); N],
    ) -> GenerationAccount {
        let keys = ProviderKeyService::new(
            Arc::new(InMemoryProviderKeys::default()),
            Keyring::new(vec![MasterKey::new("k1", [1; 32])]).unwrap(),
            fakes.clock.clone(),
            fakes.ids.clone(),
        );
        let pricing = GenerationPricing {
            price: RenderPrice::new(price, BTreeMap::from(per_model.map(|(k, v)| (k.to_owned(), v)))).unwrap(),
            default_generator: "builtin".into(),
        };
        GenerationAccount::new(Arc::new(fakes.credit_service().with_free_credit(free)), keys, pricing)
    }

    fn ledger(fakes: &OperatorFakes) -> Vec<(TransactionKind, i64)> {
        fakes
            .store
            .ledger_of(&Principal::user("u1"))
            .iter()
            .map(|e| (e.kind, e.delta_cents))
            .collect()
    }

    #[tokio::test]
    async fn a_reservation_is_charged_then_settled_or_refunded_and_an_empty_wallet_refuses() {
        use TransactionKind::*;
        let fakes = OperatorFakes::new();
        let account = account(&fakes, 10, 5);
        let first = account.reserve(&caller(), None, None, "s1").await.unwrap().unwrap();
        first.settle(None).await;
        let second = account.reserve(&caller(), None, None, "s2").await.unwrap().unwrap();
        let refused = account.reserve(&caller(), None, None, "s3").await.unwrap().unwrap_err();
        assert_eq!(refused.entry.code, "insufficient_credit");
        assert_eq!(refused.balance_cents_at_check, Some(0));
        second.refund("failed").await;
        let model_priced = account
            .reserve(&caller(), Some("openai:gpt-5"), None, "s4")
            .await
            .unwrap();
        assert_eq!(
            model_priced.unwrap_err().balance_cents_at_check,
            Some(5),
            "gpt-5 costs 7"
        );
        assert_eq!(
            ledger(&fakes),
            [(FreeCredit, 10), (RenderCharge, -5), (RenderCharge, -5), (Refund, 5)]
        );
    }

    /// A render that names a model but no generator is served by `standard`, and priced by it
    /// (not by the default generator's slug) when its route has no price of its own.
    #[tokio::test]
    async fn a_render_is_priced_by_the_generator_that_serves_it() {
        use TransactionKind::*;
        let fakes = OperatorFakes::new();
        let account = priced_account(&fakes, 100, 5, [("builtin", 1), ("standard", 4), ("openai:gpt-5", 7)]);
        for (model, generator) in [
            (None, None),
            (Some("mistral:small"), None),
            (Some("openai:gpt-5"), None),
            (Some("mistral:small"), Some("builtin")),
            (None, Some("advanced")),
        ] {
            account
                .reserve(&caller(), model, generator, "s")
                .await
                .unwrap()
                .unwrap()
                .settle(None)
                .await;
        }
        assert_eq!(
            ledger(&fakes),
            [
                (FreeCredit, 100),
                (RenderCharge, -1),
                (RenderCharge, -4),
                (RenderCharge, -7),
                (RenderCharge, -1),
                (RenderCharge, -5)
            ]
        );
    }

    #[tokio::test]
    async fn a_dropped_reservation_is_refunded_and_carries_the_payers_keys() {
        let fakes = OperatorFakes::new();
        let account = account(&fakes, 5, 5);
        account
            .keys
            .set(
                &Principal::user("u1"),
                SetProviderKey {
                    provider: "anthropic".into(),
                    plaintext_key: "a-key".into(),
                    label: None,
                },
            )
            .await
            .unwrap();
        let reservation = account.reserve(&caller(), None, None, "s1").await.unwrap().unwrap();
        assert_eq!(reservation.keys().get("anthropic"), Some("a-key"));
        drop(reservation);
        for _ in 0..100 {
            if ledger(&fakes).len() == 3 {
                break;
            }
            tokio::task::yield_now().await;
        }
        assert_eq!(ledger(&fakes).last(), Some(&(TransactionKind::Refund, 5)));
    }

    /// Settings that put every app in `org` (or in none).
    struct EveryAppIn(Option<String>);

    #[async_trait::async_trait]
    impl AppSettingsRepository for EveryAppIn {
        async fn get(&self, _: &str) -> Result<Option<svc_domain::app_settings::AppSettings>, RepositoryError> {
            Ok(Some(svc_domain::app_settings::AppSettings {
                org_id: self.0.clone(),
                ..Default::default()
            }))
        }
        async fn put(
            &self,
            _: &str,
            _: &svc_domain::app_settings::AppSettings,
            _: chrono::DateTime<chrono::Utc>,
        ) -> Result<(), RepositoryError> {
            unreachable!("the payer is only read")
        }
    }

    #[tokio::test]
    async fn the_payer_is_the_apps_org_else_a_federated_callers_app_owner_else_the_caller() {
        let fakes = OperatorFakes::new();
        let apps = Arc::new(crate::testing::InMemoryAgentStore::default());
        apps.default_app("owner1", &|| "app1".to_owned(), fakes.clock.now())
            .await
            .unwrap();
        let federated = Caller {
            principal_id: crate::services::federated_caller::federated_principal("https://id.example", "s1"),
            ..caller()
        };
        let with_org = |org: Option<&str>| {
            account(&fakes, 0, 5).with_app_payers(AppPayers {
                settings: Arc::new(EveryAppIn(org.map(str::to_owned))),
                apps: apps.clone(),
            })
        };
        let rows = [
            (None, caller(), Principal::user("u1")),
            (None, federated.clone(), Principal::user("owner1")),
            (Some("org1"), caller(), Principal::org("org1")),
            (Some("org1"), federated.clone(), Principal::org("org1")),
        ];
        for (org, who, expected) in rows {
            assert_eq!(with_org(org).payer(&who).await.unwrap(), expected, "{org:?} {who:?}");
        }
        assert_eq!(
            account(&fakes, 0, 5).payer(&federated).await.unwrap(),
            Principal::user(federated.principal_id.clone()),
            "without app payers, the caller"
        );
    }

    #[tokio::test]
    async fn an_org_apps_reservation_carries_the_orgs_keys_never_the_callers() {
        let fakes = OperatorFakes::new();
        let account = account(&fakes, 0, 0).with_app_payers(AppPayers {
            settings: Arc::new(EveryAppIn(Some("org1".into()))),
            apps: Arc::new(crate::testing::InMemoryAgentStore::default()),
        });
        let key = |provider: &str, plaintext_key: &str| SetProviderKey {
            provider: provider.into(),
            plaintext_key: plaintext_key.into(),
            label: None,
        };
        let keys = &account.keys;
        keys.set(&Principal::user("u1"), key("openai", "user-key"))
            .await
            .unwrap();
        keys.set(&Principal::user("u1"), key("mistral", "user-m"))
            .await
            .unwrap();
        keys.set(&Principal::org("org1"), key("openai", "org-key"))
            .await
            .unwrap();
        let reservation = account.reserve(&caller(), None, None, "s1").await.unwrap().unwrap();
        assert_eq!(reservation.keys().get("openai"), Some("org-key"));
        assert_eq!(
            reservation.keys().get("mistral"),
            None,
            "no fallback to the caller's keys"
        );
    }

    #[test]
    fn the_payer_is_the_user_else_the_app() {
        assert_eq!(payer_of(&caller()), Principal::user("u1"));
        let app_only = Caller {
            principal_id: String::new(),
            ..caller()
        };
        assert_eq!(payer_of(&app_only), Principal::user("app1"));
    }
}
