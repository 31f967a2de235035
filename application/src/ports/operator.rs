//! Ports of the operator plane (orgs, invites, connector keys, coupons, wallets).
//!
//! Methods that change state run one domain transition atomically: the adapter reads the current
//! value inside one write transaction (rows locked where the store can), calls the pure
//! transition from `svc_domain`, and writes its result, so two racing callers see one success and
//! one idempotent or refused answer. The rules stay in the domain; the adapters only make them
//! atomic.

use chrono::{DateTime, Utc};
use svc_domain::connector_key::{ConnectorKey, ConnectorKeyError, KeyRevokeOutcome};
use svc_domain::coupon::{Coupon, CouponCode, CouponError, Redemption};
use svc_domain::invite::{Invite, InviteDraft, InviteError, InviteIssue, InviteRevokeOutcome};
use svc_domain::org::{NewOrg, Org, OrgMembership, OrgMembershipRecord};
use svc_domain::wallet::{LedgerEntry, Principal, Wallet, WalletError, WalletMovement};

use super::{BoundedInsert, RepositoryError};

/// Why an atomic transition did not happen: the domain refused it, or the store failed.
#[derive(Debug, thiserror::Error)]
pub enum TransitionError<E> {
    #[error(transparent)]
    Rejected(E),
    #[error(transparent)]
    Repository(#[from] RepositoryError),
}

#[async_trait::async_trait]
pub trait OrgRepository: Send + Sync {
    /// Writes the org, its owner membership and its wallet in one transaction, or nothing.
    /// An existing org id is a `Conflict`.
    async fn create(&self, new_org: &NewOrg) -> Result<(), RepositoryError>;
    /// [`Self::create`], unless the new org's owner already owns `max_owned` orgs or more
    /// (counted with the insert, so concurrent creations never pass it).
    async fn create_bounded(&self, new_org: &NewOrg, max_owned: u64) -> Result<BoundedInsert, RepositoryError>;
    async fn get(&self, org_id: &str) -> Result<Option<Org>, RepositoryError>;
    async fn membership(&self, org_id: &str, user_id: &str) -> Result<Option<OrgMembership>, RepositoryError>;
    /// The user's memberships joined with their orgs, oldest membership first.
    async fn list_memberships_of_user(&self, user_id: &str) -> Result<Vec<OrgMembershipRecord>, RepositoryError>;
}

#[async_trait::async_trait]
pub trait InviteRepository: Send + Sync {
    /// Atomically reads the stored pending invite of the draft's (org, email), lets
    /// `Invite::issue` decide, and writes a new invite (marking a superseded one expired) unless
    /// the existing one is reused. Racing callers for one pair get one row between them.
    async fn create_or_reuse(&self, draft: InviteDraft, now: DateTime<Utc>) -> Result<InviteIssue, RepositoryError>;
    async fn get(&self, invite_id: &str) -> Result<Option<Invite>, RepositoryError>;
    /// Every invite of the org as stored, newest first.
    async fn list_of_org(&self, org_id: &str) -> Result<Vec<Invite>, RepositoryError>;
    /// Compare-and-set `Invite::revoke`: the invite as stored afterwards and how the revoke
    /// ended. `Rejected(AlreadyAccepted)` for an accepted invite, `Rejected(NotFound)` for none.
    async fn revoke(
        &self,
        invite_id: &str,
        now: DateTime<Utc>,
    ) -> Result<(Invite, InviteRevokeOutcome), TransitionError<InviteError>>;
    /// Compare-and-set `Invite::accept`, writing the new membership in the same transaction.
    /// A user who is already a member keeps the membership they have.
    async fn accept(
        &self,
        invite_id: &str,
        user_id: &str,
        now: DateTime<Utc>,
    ) -> Result<(Invite, OrgMembership), TransitionError<InviteError>>;
}

/// The one-time links of invite mails (hosted mode): only the sha256 of a link's token is kept,
/// with the invite it opens. A link is not deleted when used: the invite's own status says it
/// was (so a second use is told the invite was accepted). The retention sweep deletes it once
/// its invite ended that grace ago (`RetentionRepository::delete_invite_links_ended_by`).
#[async_trait::async_trait]
pub trait InviteLinkRepository: Send + Sync {
    async fn insert(&self, token_hash: &str, invite_id: &str, created_at: DateTime<Utc>)
    -> Result<(), RepositoryError>;
    /// The invite id of the link whose token hashes to `token_hash`.
    async fn invite_of(&self, token_hash: &str) -> Result<Option<String>, RepositoryError>;
}

#[async_trait::async_trait]
pub trait ConnectorKeyRepository: Send + Sync {
    /// A duplicate id or hash is a `Conflict`.
    async fn insert(&self, key: &ConnectorKey) -> Result<(), RepositoryError>;
    /// [`Self::insert`] that keeps at most `max_live` keys of the owner live (authenticating at
    /// the key's `created_at`): the owner's oldest live keys (by `created_at`, then id) are
    /// revoked, as `ConnectorKey::revoke` does, in the insert's transaction, and their ids
    /// answered. Inserts of one owner count under one lock, so racing ones never leave more.
    async fn insert_keeping_newest(&self, key: &ConnectorKey, max_live: u64) -> Result<Vec<String>, RepositoryError>;
    async fn get(&self, key_id: &str) -> Result<Option<ConnectorKey>, RepositoryError>;
    /// The owner's keys, newest first.
    async fn list_by_owner(&self, owner_user_id: &str) -> Result<Vec<ConnectorKey>, RepositoryError>;
    /// The key whose plaintext hashes to `key_hash` (lowercase sha256 hex), whatever its status.
    async fn find_by_hash(&self, key_hash: &str) -> Result<Option<ConnectorKey>, RepositoryError>;
    /// Atomic `ConnectorKey::revoke`; `Rejected(NotFound)` for an unknown id.
    async fn revoke(
        &self,
        key_id: &str,
    ) -> Result<(ConnectorKey, KeyRevokeOutcome), TransitionError<ConnectorKeyError>>;
    /// Records a successful authentication; a missing key is ignored.
    async fn touch_last_used(&self, key_id: &str, at: DateTime<Utc>) -> Result<(), RepositoryError>;
}

#[async_trait::async_trait]
pub trait CouponRepository: Send + Sync {
    /// Stores an issued coupon; an existing code is a `Conflict`.
    async fn issue(&self, coupon: &Coupon) -> Result<(), RepositoryError>;
    async fn get(&self, code: &CouponCode) -> Result<Option<Coupon>, RepositoryError>;
    /// In one transaction: reads the coupon (`Rejected(NotFound)` if absent) and the target's
    /// wallet (opened empty if absent), lets `Coupon::redeem` compute the three legs, and writes
    /// them all. Of two racing redemptions one succeeds and the other gets
    /// `Rejected(AlreadyRedeemed)`; the wallet is credited once.
    async fn redeem(
        &self,
        code: &CouponCode,
        target: &Principal,
        transaction_id: String,
        now: DateTime<Utc>,
    ) -> Result<Redemption, TransitionError<CouponError>>;
}

/// A position in a principal's ledger, in the order rows were written. Opaque to callers.
pub type LedgerPosition = i64;

/// One page of ledger rows, newest first.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerPage {
    pub entries: Vec<LedgerEntry>,
    /// Pass as `before` to get the next (older) page; `None` on the last page.
    pub next_before: Option<LedgerPosition>,
}

#[async_trait::async_trait]
pub trait WalletRepository: Send + Sync {
    async fn get(&self, principal: &Principal) -> Result<Option<Wallet>, RepositoryError>;
    /// In one transaction: reads the wallet (opened empty if absent), lets `Wallet::apply`
    /// compute the movement, and writes the wallet and its ledger row.
    async fn apply(
        &self,
        principal: &Principal,
        movement: WalletMovement,
        now: DateTime<Utc>,
    ) -> Result<(Wallet, LedgerEntry), TransitionError<WalletError>>;
    /// Like [`WalletRepository::apply`], but only while the principal's ledger holds no row of
    /// `movement.kind` (a one-time grant such as `free_credit`); `None` when it already does.
    /// Racing callers grant once.
    async fn apply_once(
        &self,
        principal: &Principal,
        movement: WalletMovement,
        now: DateTime<Utc>,
    ) -> Result<Option<(Wallet, LedgerEntry)>, TransitionError<WalletError>>;
    /// Up to `limit` rows written before `before` (or the newest when `None`), newest first.
    async fn list_ledger(
        &self,
        principal: &Principal,
        limit: u32,
        before: Option<LedgerPosition>,
    ) -> Result<LedgerPage, RepositoryError>;
}

#[derive(Debug, thiserror::Error)]
#[error("the email could not be queued")]
pub struct MailerError(#[source] pub anyhow::Error);

/// Sends the emails of the operator plane.
#[async_trait::async_trait]
pub trait Mailer: Send + Sync {
    /// Sends (or durably queues) the email that tells of an invite; `accept_url` is the
    /// one-time link that accepts it (hosted mode), when there is one.
    async fn send_invite(&self, invite: &Invite, accept_url: Option<&str>) -> Result<(), MailerError>;
    /// Whether the email of this invite was queued (sent since, or not).
    async fn invite_queued(&self, invite_id: &str) -> Result<bool, MailerError>;
}
