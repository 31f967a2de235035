//! Who pays for a cold generation and with which provider keys (hosted mode).
//!
//! The charge is a reservation: a `render_charge` ledger row written atomically (the wallet row
//! locked) before the generation runs, with an open reservation stored in the same transaction
//! (`CreditReservations`), so two concurrent renders with balance for one get one generation and
//! one `insufficient_credit` refusal, and the balance never goes negative. A generation that
//! fails, a render that ends before it produced anything or runs past the render deadline, gets
//! a `refund` of the reservation; a generation that succeeds settles it as charged. A render whose
//! process died leaves its reservation open, and the sweep refunds it. A cache hit never comes
//! here: it is free.

use std::sync::Arc;

use svc_domain::credit_reservation::CreditReservation;
use svc_domain::refusal::RefusalCode;
use svc_domain::render_price::RenderPrice;
use svc_domain::wallet::{Principal, WalletError};
use tokio_util::task::TaskTracker;

use super::credit_reservations::{CreditReservations, ReservationError};
use super::provider_keys::ProviderKeyService;
use crate::ports::RepositoryError;
use crate::ports::agent::AppRepository;
use crate::ports::app_settings::AppSettingsRepository;
use crate::ports::generation::CallerKeys;
use crate::services::agent::{Caller, Refusal};
use crate::services::federated_caller::is_federated_principal;
use crate::services::generation::{STANDARD_SLUG, serving_slug};
use crate::services::operator::{CreditService, CreditServiceError};

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
    /// The one-time free credit of a wallet's first use.
    credits: Arc<CreditService>,
    reservations: CreditReservations,
    keys: ProviderKeyService,
    pricing: GenerationPricing,
    /// `None`: every render is charged to its caller.
    app_payers: Option<AppPayers>,
    /// Refunds of reservations dropped open, written in the background (see `Reservation`).
    background_refunds: TaskTracker,
}

impl GenerationAccount {
    pub fn new(
        credits: Arc<CreditService>,
        reservations: CreditReservations,
        keys: ProviderKeyService,
        pricing: GenerationPricing,
    ) -> Self {
        Self {
            credits,
            reservations,
            keys,
            pricing,
            app_payers: None,
            background_refunds: TaskTracker::new(),
        }
    }

    /// The reservations, for the sweep of abandoned ones.
    pub fn reservations(&self) -> &CreditReservations {
        &self.reservations
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
        // The deadline runs from the charge, as the sweep's measure of the reservation does.
        let charged_at = tokio::time::Instant::now();
        let opened = if price > 0 {
            let reason = format!("render: {}", model.unwrap_or(slug));
            match self.reservations.open(&payer, price, reason, session_id).await {
                Ok(opened) => Some(opened),
                Err(ReservationError::Wallet(WalletError::InsufficientCredit { balance_cents, .. })) => {
                    return Ok(Err(Refusal {
                        entry: RefusalCode::InsufficientCredit.entry(),
                        message: format!("a render costs {price} cents and the wallet holds {balance_cents} cents"),
                        balance_cents_at_check: Some(balance_cents),
                    }));
                }
                Err(ReservationError::Wallet(other)) => {
                    return Err(RepositoryError::Unavailable(anyhow::anyhow!(other.to_string())));
                }
                Err(ReservationError::Storage(error)) => return Err(error),
            }
        } else {
            None
        };
        let keys = match self.keys.caller_keys(&payer).await {
            Ok(keys) => keys,
            Err(error) => {
                let reservation = self.reservation(payer, opened, charged_at, CallerKeys::default());
                reservation.refund("refund: the render did not run").await;
                return Err(match error {
                    super::ProviderKeyServiceError::Storage(e) => e,
                    other => RepositoryError::Unavailable(anyhow::anyhow!(other.to_string())),
                });
            }
        };
        Ok(Ok(self.reservation(payer, opened, charged_at, keys)))
    }

    fn reservation(
        &self,
        payer: Principal,
        opened: Option<CreditReservation>,
        charged_at: tokio::time::Instant,
        keys: CallerKeys,
    ) -> Reservation {
        Reservation {
            account: self.clone(),
            payer,
            opened,
            deadline: charged_at + self.reservations.deadline().get(),
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
/// did not; dropped open (the render was cancelled), it refunds in the background. A render
/// past [`Reservation::deadline`] is ended and refunded: after that the sweep may take the
/// reservation for one whose process died.
pub struct Reservation {
    account: GenerationAccount,
    payer: Principal,
    /// `None` when the render is free (a price of 0): nothing to settle or refund.
    opened: Option<CreditReservation>,
    deadline: tokio::time::Instant,
    keys: CallerKeys,
    closed: bool,
}

/// Never the keys.
impl std::fmt::Debug for Reservation {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Reservation")
            .field("payer", &self.payer)
            .field("opened", &self.opened)
            .finish_non_exhaustive()
    }
}

impl Reservation {
    /// The payer's provider keys, for the generation request.
    pub fn keys(&self) -> CallerKeys {
        self.keys.clone()
    }

    /// When the render must have produced its component: the charge plus the render deadline.
    pub fn deadline(&self) -> tokio::time::Instant {
        self.deadline
    }

    /// The render deadline, for the message of a render that passed it.
    pub fn deadline_seconds(&self) -> u64 {
        self.account.reservations.deadline().get().as_secs()
    }

    /// The generation succeeded: the charge stands, and the key of the model that ran is marked
    /// used.
    pub async fn settle(mut self, model: Option<&str>) {
        self.closed = true;
        if let Some(opened) = &self.opened {
            settle(&self.account, opened).await;
        }
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
        if let Some(opened) = &self.opened {
            refund(&self.account, opened, reason).await;
        }
    }
}

impl Drop for Reservation {
    fn drop(&mut self) {
        if self.closed {
            return;
        }
        let Some(opened) = self.opened.take() else {
            return;
        };
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            // Still open in the database: the sweep refunds it.
            tracing::error!(payer = %self.payer.principal_id, cents = opened.amount_cents, "a dropped reservation could not be refunded now (no runtime); the sweep will");
            return;
        };
        let account = self.account.clone();
        let tracker = self.account.background_refunds.clone();
        tracker.spawn_on(
            async move {
                refund(&account, &opened, "refund: the render was cancelled").await;
            },
            &runtime,
        );
    }
}

async fn settle(account: &GenerationAccount, opened: &CreditReservation) {
    match account.reservations.settle(&opened.transaction_id).await {
        Ok(true) => {}
        // The render ran past the time the sweep allows it: the component is kept, unpaid.
        Ok(false) => tracing::warn!(
            reservation = %opened.transaction_id,
            payer = %opened.principal.principal_id,
            cents = opened.amount_cents,
            "a render finished after its reservation was refunded as abandoned; its component is kept"
        ),
        // Left open, the sweep refunds it: the render is free rather than charged twice.
        Err(error) => tracing::error!(
            error = %error,
            reservation = %opened.transaction_id,
            "a reserved charge could not be settled; the sweep will refund it"
        ),
    }
}

async fn refund(account: &GenerationAccount, opened: &CreditReservation, reason: &str) {
    match account.reservations.refund(&opened.transaction_id, reason).await {
        Ok(Some(_)) => {}
        Ok(None) => tracing::info!(
            reservation = %opened.transaction_id,
            "the reservation was refunded already (by the sweep)"
        ),
        Err(error) => tracing::error!(
            error = %error,
            payer = %opened.principal.principal_id,
            cents = opened.amount_cents,
            "a reserved charge could not be refunded now; the sweep will"
        ),
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
        GenerationAccount::new(
            Arc::new(fakes.credit_service().with_free_credit(free)),
            fakes.credit_reservations(DEADLINE),
            keys,
            pricing,
        )
    }

    const DEADLINE: std::time::Duration = std::time::Duration::from_secs(60);

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

    /// The reservation is stored with its charge (named by the charge's transaction id) and
    /// leaves the store when settled or refunded; a refused one stores nothing.
    #[tokio::test]
    async fn a_reservation_is_stored_with_its_charge_until_settled_or_refunded() {
        let fakes = OperatorFakes::new();
        let account = account(&fakes, 10, 5);
        let first = account.reserve(&caller(), None, None, "s1").await.unwrap().unwrap();
        let second = account.reserve(&caller(), None, None, "s2").await.unwrap().unwrap();
        let mut open: Vec<_> = fakes
            .store
            .open_reservations()
            .into_iter()
            .map(|r| (r.transaction_id, r.amount_cents, r.related_session_id.unwrap()))
            .collect();
        open.sort_by(|a, b| a.2.cmp(&b.2));
        let charges: Vec<_> = fakes
            .store
            .ledger_of(&Principal::user("u1"))
            .into_iter()
            .filter(|e| e.kind == TransactionKind::RenderCharge)
            .map(|e| (e.transaction_id, 5, e.related_session_id.unwrap()))
            .collect();
        assert_eq!(open, charges);
        account.reserve(&caller(), None, None, "s3").await.unwrap().unwrap_err();
        assert_eq!(fakes.store.open_reservations().len(), 2, "a refusal opens nothing");
        first.settle(None).await;
        assert_eq!(fakes.store.open_reservations().len(), 1);
        second.refund("refund: the generation failed").await;
        assert!(fakes.store.open_reservations().is_empty());
    }

    /// The sweep refunded two renders that overran (as if their process had died): the one that
    /// then succeeds keeps its component unpaid without failing, the one that then fails refunds
    /// nothing twice.
    #[tokio::test]
    async fn a_render_whose_reservation_was_swept_settles_and_refunds_nothing() {
        use TransactionKind::*;
        let fakes = OperatorFakes::new();
        let account = account(&fakes, 10, 5);
        let succeeds_late = account.reserve(&caller(), None, None, "s1").await.unwrap().unwrap();
        let fails_late = account.reserve(&caller(), None, None, "s2").await.unwrap().unwrap();
        fakes.clock.advance(chrono::TimeDelta::from_std(DEADLINE * 2).unwrap());
        assert_eq!(account.reservations().refund_abandoned().await.unwrap().refunded, 0);
        fakes.clock.advance(chrono::TimeDelta::seconds(1));
        assert_eq!(account.reservations().refund_abandoned().await.unwrap().refunded, 2);
        succeeds_late.settle(None).await;
        fails_late.refund("refund: the generation failed").await;
        assert_eq!(
            ledger(&fakes),
            [
                (FreeCredit, 10),
                (RenderCharge, -5),
                (RenderCharge, -5),
                (Refund, 5),
                (Refund, 5)
            ]
        );
        let reasons: Vec<_> = fakes
            .store
            .ledger_of(&Principal::user("u1"))
            .into_iter()
            .filter(|e| e.kind == Refund)
            .map(|e| e.reason)
            .collect();
        assert_eq!(reasons, [crate::services::hosted::INTERRUPTED_REASON; 2]);
    }

    /// A cancelled render's background refund races the sweep (of another replica, its clock
    /// far ahead): the charge comes back once.
    #[tokio::test]
    async fn a_dropped_reservation_and_the_sweep_refund_it_once() {
        let fakes = OperatorFakes::new();
        let account = account(&fakes, 5, 5);
        let reservation = account.reserve(&caller(), None, None, "s1").await.unwrap().unwrap();
        fakes.clock.advance(chrono::TimeDelta::hours(1));
        drop(reservation);
        let swept = account.reservations().refund_abandoned();
        let (swept, ()) = tokio::join!(swept, account.background_refunds_written());
        let refunds = ledger(&fakes)
            .into_iter()
            .filter(|(kind, _)| *kind == TransactionKind::Refund)
            .count();
        assert_eq!(refunds, 1, "swept {swept:?}");
        assert_eq!(fakes.store.wallet(&Principal::user("u1")).unwrap().balance_cents, 5);
    }

    #[tokio::test]
    async fn a_render_is_due_by_its_charge_plus_the_render_deadline() {
        let fakes = OperatorFakes::new();
        let account = account(&fakes, 5, 5);
        let before = tokio::time::Instant::now();
        let reservation = account.reserve(&caller(), None, None, "s1").await.unwrap().unwrap();
        let after = tokio::time::Instant::now();
        assert!((before + DEADLINE..=after + DEADLINE).contains(&reservation.deadline()));
        assert_eq!(reservation.deadline_seconds(), 60);
        reservation.settle(None).await;
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
