//! In-memory fakes of the ports, for service tests here and in other crates (`testing` feature).
//!
//! [`InMemoryOperatorStore`] implements every operator-plane repository over one mutex, so an
//! operation that spans repositories (an org and its wallet, a coupon and a wallet) is atomic
//! exactly as the SQL adapter's transactions are. [`OperatorFakes`] bundles it with a manual
//! clock, predictable ids and a recording mailer, and builds the services over them.
//! [`AgentFakes`] does the same for the agent plane (`agent.rs`), [`OAuthFakes`] for the OAuth
//! surface (`oauth.rs`).

use std::collections::{BTreeMap, HashMap};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use svc_domain::connector_key::{ConnectorKey, ConnectorKeyError, KeyRevokeOutcome};
use svc_domain::coupon::{Coupon, CouponCode, CouponError, Redemption};
use svc_domain::invite::{Invite, InviteDraft, InviteError, InviteIssue, InviteRevokeOutcome, InviteStatus};
use svc_domain::org::{NewOrg, Org, OrgMembership, OrgMembershipRecord};
use svc_domain::wallet::{LedgerEntry, Principal, Wallet, WalletError, WalletMovement};

use crate::ports::operator::{
    ConnectorKeyRepository, CouponRepository, InviteRepository, LedgerPage, LedgerPosition, Mailer, MailerError,
    OrgRepository, TransitionError, WalletRepository,
};
use crate::ports::{BoundedInsert, Clock, Ids, RepositoryError, oldest_past_cap};
use crate::services::hosted::CreditReservations;
use crate::services::operator::{ConnectorKeyService, CouponService, CreditService, OrgService};

mod agent;
mod agent_pipeline;
mod credit_reservations;
mod oauth;
mod rate_windows;
mod window_head;
pub use agent::{AgentFakes, InMemoryAgentStore};
pub use agent_pipeline::{FlatEmbedder, LocalBus, ScriptedGenerator, StubCompiler};
pub use oauth::{InMemoryOAuthStore, OAuthFakes};
pub use rate_windows::InMemorySharedWindows;

/// A clock that stands still until told to move.
pub struct ManualClock(Mutex<DateTime<Utc>>);

impl ManualClock {
    pub fn at(now: DateTime<Utc>) -> Self {
        Self(Mutex::new(now))
    }

    pub fn advance(&self, by: TimeDelta) {
        *lock(&self.0) += by;
    }

    pub fn set(&self, now: DateTime<Utc>) {
        *lock(&self.0) = now;
    }
}

impl Default for ManualClock {
    fn default() -> Self {
        Self::at(Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap())
    }
}

impl Clock for ManualClock {
    fn now(&self) -> DateTime<Utc> {
        *lock(&self.0)
    }
}

/// Ids from one counter: unique, increasing, and readable in assertions.
#[derive(Default)]
pub struct SequentialIds(AtomicU64);

impl SequentialIds {
    fn next(&self) -> u64 {
        self.0.fetch_add(1, Ordering::Relaxed) + 1
    }
}

impl Ids for SequentialIds {
    fn uuid(&self) -> String {
        format!("00000000-0000-4000-8000-{:012}", self.next())
    }

    fn ulid(&self) -> String {
        format!("01TEST{:020}", self.next())
    }

    fn base62(&self, len: usize) -> String {
        let digits = format!("{:0len$}", self.next());
        digits[digits.len() - len..].to_owned()
    }
}

/// Records the invites it was asked to email; can be told to fail once.
#[derive(Default)]
pub struct RecordingMailer {
    sent: Mutex<Vec<(Invite, Option<String>)>>,
    fail_next: AtomicBool,
}

impl RecordingMailer {
    pub fn sent_invite_ids(&self) -> Vec<String> {
        lock(&self.sent)
            .iter()
            .map(|(invite, _)| invite.invite_id.clone())
            .collect()
    }

    /// The accept links the mails carried, in sending order (`None`: no link).
    pub fn sent_accept_urls(&self) -> Vec<Option<String>> {
        lock(&self.sent).iter().map(|(_, url)| url.clone()).collect()
    }

    pub fn fail_next(&self) {
        self.fail_next.store(true, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl Mailer for RecordingMailer {
    async fn send_invite(&self, invite: &Invite, accept_url: Option<&str>) -> Result<(), MailerError> {
        if self.fail_next.swap(false, Ordering::SeqCst) {
            return Err(MailerError(anyhow::anyhow!("mailer told to fail")));
        }
        lock(&self.sent).push((invite.clone(), accept_url.map(str::to_owned)));
        Ok(())
    }

    async fn invite_queued(&self, invite_id: &str) -> Result<bool, MailerError> {
        Ok(lock(&self.sent).iter().any(|(invite, _)| invite.invite_id == invite_id))
    }
}

#[derive(Default)]
struct OperatorState {
    orgs: BTreeMap<String, Org>,
    /// In insertion order, which is joining order.
    memberships: Vec<OrgMembership>,
    invites: BTreeMap<String, Invite>,
    /// In insertion order, which is creation order.
    keys: Vec<ConnectorKey>,
    coupons: HashMap<CouponCode, Coupon>,
    wallets: HashMap<Principal, Wallet>,
    /// Position `i + 1` is `ledger[i]`.
    ledger: Vec<LedgerEntry>,
    /// Open credit reservations by their charge's transaction id.
    reservations: BTreeMap<String, svc_domain::credit_reservation::CreditReservation>,
}

impl OperatorState {
    fn membership(&self, org_id: &str, user_id: &str) -> Option<&OrgMembership> {
        self.memberships
            .iter()
            .find(|m| m.org_id == org_id && m.user_id == user_id)
    }

    fn wallet_or_empty(&self, principal: &Principal, now: DateTime<Utc>) -> Wallet {
        self.wallets
            .get(principal)
            .cloned()
            .unwrap_or_else(|| Wallet::open(principal.clone(), now))
    }

    fn record_movement(&mut self, wallet: Wallet, entry: LedgerEntry) {
        self.wallets.insert(wallet.principal.clone(), wallet);
        self.ledger.push(entry);
    }
}

/// Every operator-plane repository, in memory.
#[derive(Default)]
pub struct InMemoryOperatorStore(Mutex<OperatorState>);

impl InMemoryOperatorStore {
    fn state(&self) -> MutexGuard<'_, OperatorState> {
        lock(&self.0)
    }

    /// The stored wallet of `principal`, for assertions.
    pub fn wallet(&self, principal: &Principal) -> Option<Wallet> {
        self.state().wallets.get(principal).cloned()
    }

    /// Every ledger row of `principal`, oldest first, for assertions.
    pub fn ledger_of(&self, principal: &Principal) -> Vec<LedgerEntry> {
        self.state()
            .ledger
            .iter()
            .filter(|entry| &entry.principal == principal)
            .cloned()
            .collect()
    }
}

/// A poisoned lock only means another test thread panicked; the data is still usable.
pub(crate) fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex.lock().unwrap_or_else(|poisoned| poisoned.into_inner())
}

#[async_trait::async_trait]
impl OrgRepository for InMemoryOperatorStore {
    async fn create(&self, new_org: &NewOrg) -> Result<(), RepositoryError> {
        let mut state = self.state();
        if state.orgs.contains_key(&new_org.org.org_id) {
            return Err(RepositoryError::Conflict(format!("org {} exists", new_org.org.org_id)));
        }
        state.orgs.insert(new_org.org.org_id.clone(), new_org.org.clone());
        state.memberships.push(new_org.owner_membership.clone());
        state
            .wallets
            .insert(new_org.wallet.principal.clone(), new_org.wallet.clone());
        Ok(())
    }

    async fn create_bounded(&self, new_org: &NewOrg, max_owned: u64) -> Result<BoundedInsert, RepositoryError> {
        let owner = &new_org.owner_membership.user_id;
        let stored = self
            .state()
            .memberships
            .iter()
            .filter(|m| &m.user_id == owner && m.role == svc_domain::org::OrgRole::Owner)
            .count() as u64;
        if stored >= max_owned {
            return Ok(BoundedInsert::Full { stored });
        }
        self.create(new_org).await?;
        Ok(BoundedInsert::Inserted)
    }

    async fn get(&self, org_id: &str) -> Result<Option<Org>, RepositoryError> {
        Ok(self.state().orgs.get(org_id).cloned())
    }

    async fn membership(&self, org_id: &str, user_id: &str) -> Result<Option<OrgMembership>, RepositoryError> {
        Ok(self.state().membership(org_id, user_id).cloned())
    }

    async fn list_memberships_of_user(&self, user_id: &str) -> Result<Vec<OrgMembershipRecord>, RepositoryError> {
        let state = self.state();
        let records = state
            .memberships
            .iter()
            .filter(|m| m.user_id == user_id)
            .filter_map(|m| state.orgs.get(&m.org_id).map(|org| org.membership_record(m)))
            .collect();
        Ok(records)
    }
}

#[async_trait::async_trait]
impl InviteRepository for InMemoryOperatorStore {
    async fn create_or_reuse(&self, draft: InviteDraft, now: DateTime<Utc>) -> Result<InviteIssue, RepositoryError> {
        let mut state = self.state();
        let existing = state
            .invites
            .values()
            .find(|i| i.org_id == draft.org_id && i.email == draft.email && i.status == InviteStatus::Pending)
            .cloned();
        let issue = Invite::issue(existing, draft, now);
        if let InviteIssue::Created { invite, superseded } = &issue {
            for written in superseded.iter().chain([invite]) {
                state.invites.insert(written.invite_id.clone(), written.clone());
            }
        }
        Ok(issue)
    }

    async fn get(&self, invite_id: &str) -> Result<Option<Invite>, RepositoryError> {
        Ok(self.state().invites.get(invite_id).cloned())
    }

    async fn list_of_org(&self, org_id: &str) -> Result<Vec<Invite>, RepositoryError> {
        let mut invites: Vec<Invite> = self
            .state()
            .invites
            .values()
            .filter(|i| i.org_id == org_id)
            .cloned()
            .collect();
        invites.sort_by(|a, b| b.created_at.cmp(&a.created_at).then(b.invite_id.cmp(&a.invite_id)));
        Ok(invites)
    }

    async fn revoke(
        &self,
        invite_id: &str,
        now: DateTime<Utc>,
    ) -> Result<(Invite, InviteRevokeOutcome), TransitionError<InviteError>> {
        let mut state = self.state();
        let current = state
            .invites
            .get(invite_id)
            .ok_or(TransitionError::Rejected(InviteError::NotFound))?;
        let (next, outcome) = current.revoke(now).map_err(TransitionError::Rejected)?;
        state.invites.insert(invite_id.to_owned(), next.clone());
        Ok((next, outcome))
    }

    async fn accept(
        &self,
        invite_id: &str,
        user_id: &str,
        now: DateTime<Utc>,
    ) -> Result<(Invite, OrgMembership), TransitionError<InviteError>> {
        let mut state = self.state();
        let current = state
            .invites
            .get(invite_id)
            .ok_or(TransitionError::Rejected(InviteError::NotFound))?;
        let (next, membership) = current.accept(user_id, now).map_err(TransitionError::Rejected)?;
        state.invites.insert(invite_id.to_owned(), next.clone());
        let kept = match state.membership(&membership.org_id, user_id) {
            Some(existing) => existing.clone(),
            None => {
                state.memberships.push(membership.clone());
                membership
            }
        };
        Ok((next, kept))
    }
}

#[async_trait::async_trait]
impl ConnectorKeyRepository for InMemoryOperatorStore {
    async fn insert(&self, key: &ConnectorKey) -> Result<(), RepositoryError> {
        let mut state = self.state();
        if state.keys.iter().any(|k| k.id == key.id || k.key_hash == key.key_hash) {
            return Err(RepositoryError::Conflict(format!("connector key {} exists", key.id)));
        }
        state.keys.push(key.clone());
        Ok(())
    }

    async fn insert_keeping_newest(&self, key: &ConnectorKey, max_live: u64) -> Result<Vec<String>, RepositoryError> {
        let mut state = self.state();
        if state.keys.iter().any(|k| k.id == key.id || k.key_hash == key.key_hash) {
            return Err(RepositoryError::Conflict(format!("connector key {} exists", key.id)));
        }
        let mut live: Vec<&ConnectorKey> = state
            .keys
            .iter()
            .filter(|k| k.owner_user_id == key.owner_user_id && k.authenticates(key.created_at))
            .collect();
        live.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
        let revoked: Vec<String> = oldest_past_cap(&live, max_live).iter().map(|k| k.id.clone()).collect();
        for stored in state.keys.iter_mut().filter(|k| revoked.contains(&k.id)) {
            *stored = stored.revoke().0;
        }
        state.keys.push(key.clone());
        Ok(revoked)
    }

    async fn get(&self, key_id: &str) -> Result<Option<ConnectorKey>, RepositoryError> {
        Ok(self.state().keys.iter().find(|k| k.id == key_id).cloned())
    }

    async fn list_by_owner(&self, owner_user_id: &str) -> Result<Vec<ConnectorKey>, RepositoryError> {
        Ok(self
            .state()
            .keys
            .iter()
            .rev()
            .filter(|k| k.owner_user_id == owner_user_id)
            .cloned()
            .collect())
    }

    async fn find_by_hash(&self, key_hash: &str) -> Result<Option<ConnectorKey>, RepositoryError> {
        Ok(self.state().keys.iter().find(|k| k.key_hash == key_hash).cloned())
    }

    async fn revoke(
        &self,
        key_id: &str,
    ) -> Result<(ConnectorKey, KeyRevokeOutcome), TransitionError<ConnectorKeyError>> {
        let mut state = self.state();
        let key = state
            .keys
            .iter_mut()
            .find(|k| k.id == key_id)
            .ok_or(TransitionError::Rejected(ConnectorKeyError::NotFound))?;
        let (next, outcome) = key.revoke();
        *key = next.clone();
        Ok((next, outcome))
    }

    async fn touch_last_used(&self, key_id: &str, at: DateTime<Utc>) -> Result<(), RepositoryError> {
        if let Some(key) = self.state().keys.iter_mut().find(|k| k.id == key_id) {
            key.last_used_at = Some(at);
        }
        Ok(())
    }
}

#[async_trait::async_trait]
impl CouponRepository for InMemoryOperatorStore {
    async fn issue(&self, coupon: &Coupon) -> Result<(), RepositoryError> {
        let mut state = self.state();
        if state.coupons.contains_key(&coupon.code) {
            return Err(RepositoryError::Conflict("coupon code exists".into()));
        }
        state.coupons.insert(coupon.code.clone(), coupon.clone());
        Ok(())
    }

    async fn get(&self, code: &CouponCode) -> Result<Option<Coupon>, RepositoryError> {
        Ok(self.state().coupons.get(code).cloned())
    }

    async fn redeem(
        &self,
        code: &CouponCode,
        target: &Principal,
        transaction_id: String,
        now: DateTime<Utc>,
    ) -> Result<Redemption, TransitionError<CouponError>> {
        let mut state = self.state();
        let coupon = state
            .coupons
            .get(code)
            .ok_or(TransitionError::Rejected(CouponError::NotFound))?;
        let wallet = state.wallet_or_empty(target, now);
        let redemption = coupon
            .redeem(&wallet, transaction_id, now)
            .map_err(TransitionError::Rejected)?;
        state.coupons.insert(code.clone(), redemption.coupon.clone());
        state.record_movement(redemption.wallet.clone(), redemption.ledger_entry.clone());
        Ok(redemption)
    }
}

#[async_trait::async_trait]
impl WalletRepository for InMemoryOperatorStore {
    async fn get(&self, principal: &Principal) -> Result<Option<Wallet>, RepositoryError> {
        Ok(self.state().wallets.get(principal).cloned())
    }

    async fn apply(
        &self,
        principal: &Principal,
        movement: WalletMovement,
        now: DateTime<Utc>,
    ) -> Result<(Wallet, LedgerEntry), TransitionError<WalletError>> {
        let mut state = self.state();
        let wallet = state.wallet_or_empty(principal, now);
        let (next, entry) = wallet.apply(movement, now).map_err(TransitionError::Rejected)?;
        state.record_movement(next.clone(), entry.clone());
        Ok((next, entry))
    }

    async fn apply_once(
        &self,
        principal: &Principal,
        movement: WalletMovement,
        now: DateTime<Utc>,
    ) -> Result<Option<(Wallet, LedgerEntry)>, TransitionError<WalletError>> {
        let mut state = self.state();
        let kind = movement.kind;
        if state.ledger.iter().any(|e| &e.principal == principal && e.kind == kind) {
            return Ok(None);
        }
        let wallet = state.wallet_or_empty(principal, now);
        let (next, entry) = wallet.apply(movement, now).map_err(TransitionError::Rejected)?;
        state.record_movement(next.clone(), entry.clone());
        Ok(Some((next, entry)))
    }

    async fn list_ledger(
        &self,
        principal: &Principal,
        limit: u32,
        before: Option<LedgerPosition>,
    ) -> Result<LedgerPage, RepositoryError> {
        let state = self.state();
        let mut rows = state
            .ledger
            .iter()
            .enumerate()
            .rev()
            .map(|(index, entry)| (entry, index as LedgerPosition + 1))
            .filter(|(entry, position)| &entry.principal == principal && before.is_none_or(|b| *position < b))
            .take(limit as usize + 1)
            .map(|(entry, position)| (entry.clone(), position))
            .collect::<Vec<_>>();
        let has_more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next_before = if has_more {
            rows.last().map(|(_, position)| *position)
        } else {
            None
        };
        Ok(LedgerPage {
            entries: rows.into_iter().map(|(entry, _)| entry).collect(),
            next_before,
        })
    }
}

/// The operator plane's fakes, wired together, and the services built over them.
#[derive(Clone)]
pub struct OperatorFakes {
    pub store: Arc<InMemoryOperatorStore>,
    pub mailer: Arc<RecordingMailer>,
    /// The coupon-guessing budget's windows.
    pub windows: Arc<InMemorySharedWindows>,
    pub clock: Arc<ManualClock>,
    pub ids: Arc<SequentialIds>,
}

impl Default for OperatorFakes {
    fn default() -> Self {
        Self::new()
    }
}

impl OperatorFakes {
    pub fn new() -> Self {
        Self {
            store: Arc::default(),
            mailer: Arc::default(),
            windows: Arc::default(),
            clock: Arc::default(),
            ids: Arc::default(),
        }
    }

    pub fn org_service(&self) -> OrgService {
        OrgService::new(
            self.store.clone(),
            self.store.clone(),
            self.mailer.clone(),
            self.clock.clone(),
            self.ids.clone(),
        )
    }

    pub fn connector_key_service(&self) -> ConnectorKeyService {
        ConnectorKeyService::new(self.store.clone(), self.clock.clone(), self.ids.clone())
    }

    pub fn coupon_service(&self) -> CouponService {
        CouponService::new(
            self.store.clone(),
            self.store.clone(),
            self.windows.clone(),
            self.clock.clone(),
            self.ids.clone(),
        )
    }

    pub fn credit_service(&self) -> CreditService {
        CreditService::new(self.store.clone(), self.clock.clone(), self.ids.clone())
    }

    /// Reservations over the store, for renders given `deadline`.
    pub fn credit_reservations(&self, deadline: std::time::Duration) -> CreditReservations {
        CreditReservations::new(
            self.store.clone(),
            self.clock.clone(),
            self.ids.clone(),
            svc_domain::credit_reservation::RenderDeadline::new(deadline),
        )
    }
}

/// Provider keys in memory, keyed by owner and provider.
#[derive(Default)]
pub struct InMemoryProviderKeys(Mutex<Vec<crate::ports::hosted::StoredProviderKey>>);

impl InMemoryProviderKeys {
    /// Every stored row, for assertions.
    pub fn rows(&self) -> Vec<crate::ports::hosted::StoredProviderKey> {
        lock(&self.0).clone()
    }
}

#[async_trait::async_trait]
impl crate::ports::hosted::ProviderKeyRepository for InMemoryProviderKeys {
    async fn put(&self, key: &crate::ports::hosted::StoredProviderKey) -> Result<(), RepositoryError> {
        let mut rows = lock(&self.0);
        rows.retain(|k| !(k.owner == key.owner && k.provider == key.provider));
        rows.push(key.clone());
        Ok(())
    }

    async fn get(
        &self,
        owner: &Principal,
        provider: svc_domain::provider_key::Provider,
    ) -> Result<Option<crate::ports::hosted::StoredProviderKey>, RepositoryError> {
        Ok(lock(&self.0)
            .iter()
            .find(|k| &k.owner == owner && k.provider == provider)
            .cloned())
    }

    async fn list(&self, owner: &Principal) -> Result<Vec<crate::ports::hosted::StoredProviderKey>, RepositoryError> {
        let mut keys: Vec<_> = lock(&self.0).iter().filter(|k| &k.owner == owner).cloned().collect();
        keys.sort_by_key(|k| k.provider);
        Ok(keys)
    }

    async fn delete(
        &self,
        owner: &Principal,
        provider: svc_domain::provider_key::Provider,
    ) -> Result<bool, RepositoryError> {
        let mut rows = lock(&self.0);
        let before = rows.len();
        rows.retain(|k| !(&k.owner == owner && k.provider == provider));
        Ok(rows.len() < before)
    }

    async fn touch_last_used(
        &self,
        owner: &Principal,
        provider: svc_domain::provider_key::Provider,
        at: DateTime<Utc>,
    ) -> Result<(), RepositoryError> {
        for key in lock(&self.0).iter_mut() {
            if &key.owner == owner && key.provider == provider {
                key.last_used_at = Some(at);
            }
        }
        Ok(())
    }

    async fn sealed_under_other_keys(
        &self,
        key_id: &str,
    ) -> Result<Vec<crate::ports::hosted::StoredProviderKey>, RepositoryError> {
        Ok(lock(&self.0)
            .iter()
            .filter(|k| k.sealed.key_id != key_id)
            .cloned()
            .collect())
    }

    async fn reseal(
        &self,
        owner: &Principal,
        provider: svc_domain::provider_key::Provider,
        previous: &svc_domain::provider_key::SealedSecret,
        next: &svc_domain::provider_key::SealedSecret,
    ) -> Result<bool, RepositoryError> {
        for key in lock(&self.0).iter_mut() {
            if &key.owner == owner && key.provider == provider && &key.sealed == previous {
                key.sealed = next.clone();
                return Ok(true);
            }
        }
        Ok(false)
    }
}
