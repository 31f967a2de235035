use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use serde::Serialize;
use svc_domain::connector_key::{
    self, ConnectorKey, ConnectorKeyDraft, ConnectorKeyError, ConnectorKeyStatus, ConnectorKeySummary,
    KeyRevokeOutcome, PlaintextKey,
};

use super::INTERNAL_ERROR_CODE;
use super::key_cache::KeyCache;
use crate::ports::agent::{EventBus, LiveEvent};
use crate::ports::operator::{ConnectorKeyRepository, TransitionError};
use crate::ports::{Clock, Ids, RepositoryError};

/// Random characters after `svc_user_`: 40 base62 characters, about 238 bits.
const SECRET_CHARS: usize = 40;

/// `last_used_at` is written at most once per key per this long: a key in use does not turn
/// every request into a write.
const LAST_USED_RESOLUTION: TimeDelta = TimeDelta::seconds(60);

/// The quota key of `hosted.connector_keys_per_account` in the log.
const CONNECTOR_KEYS_QUOTA: &str = "connector-keys";

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssueConnectorKey {
    pub caller_user_id: String,
    pub name: Option<String>,
    pub app_id: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RevokeConnectorKey {
    pub caller_user_id: String,
    /// The app the caller's own key is locked to: it reaches only that app's keys.
    pub caller_locked_app: Option<String>,
    pub key_id: String,
}

/// `svc_ops_issue_connector_key`'s answer: the summary plus the plaintext, shown this once.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IssuedConnectorKey {
    pub summary: ConnectorKeySummary,
    pub plaintext_key: PlaintextKey,
}

/// `svc_ops_revoke_connector_key`'s answer.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct RevokedConnectorKey {
    pub id: String,
    pub status: ConnectorKeyStatus,
    pub already_revoked: bool,
}

#[derive(Debug, thiserror::Error)]
pub enum ConnectorKeyServiceError {
    #[error(transparent)]
    Key(#[from] ConnectorKeyError),
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
}

impl ConnectorKeyServiceError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Key(error) => error.code(),
            Self::Storage(_) => INTERNAL_ERROR_CODE,
        }
    }
}

impl From<TransitionError<ConnectorKeyError>> for ConnectorKeyServiceError {
    fn from(error: TransitionError<ConnectorKeyError>) -> Self {
        match error {
            TransitionError::Rejected(error) => Self::Key(error),
            TransitionError::Repository(error) => Self::Storage(error),
        }
    }
}

/// Connector keys: issue (plaintext revealed once), list, revoke, and authenticate a bearer.
#[derive(Clone)]
pub struct ConnectorKeyService {
    keys: Arc<dyn ConnectorKeyRepository>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    /// Where revocations are announced, so live channels opened under a key end with it.
    revocations: Option<Arc<dyn EventBus>>,
    /// Bearer hash to key record: authentication reads no row while a key is in use.
    cache: KeyCache,
    /// Hosted: the live keys one account keeps; a mint past it revokes the oldest.
    keys_per_account: Option<u64>,
}

impl ConnectorKeyService {
    pub fn new(keys: Arc<dyn ConnectorKeyRepository>, clock: Arc<dyn Clock>, ids: Arc<dyn Ids>) -> Self {
        Self {
            keys,
            clock,
            ids,
            revocations: None,
            cache: KeyCache::new(),
            keys_per_account: None,
        }
    }

    /// An account keeps at most `max_live` live keys: each mint past it revokes the account's
    /// oldest (hosted mode: every sign-in mints one, and nothing else would ever remove them).
    pub fn with_keys_per_account(self, max_live: u64) -> Self {
        Self {
            keys_per_account: Some(max_live),
            ..self
        }
    }

    /// Reads every key's row on each authentication: for replicas on a shared database whose bus
    /// does not reach each other (`live.bus = "in-process"` on a database other servers write),
    /// where a revocation on another replica would not be heard and a kept key would
    /// authenticate for up to the cache's time to live.
    pub fn reading_every_key(self) -> Self {
        Self {
            cache: self.cache.off(),
            ..self
        }
    }

    /// Announces each revocation on `bus` (every replica's live channels hear it), and forgets
    /// each key the bus says was revoked, on whichever replica.
    pub fn announcing_revocations_on(self, bus: Arc<dyn EventBus>) -> Self {
        self.cache.listen(bus.as_ref());
        Self {
            revocations: Some(bus),
            ..self
        }
    }

    /// `Some(true)` while the key may authenticate, `Some(false)` once revoked or expired, `None`
    /// for an unknown id.
    pub async fn key_is_live(&self, key_id: &str) -> Result<Option<bool>, ConnectorKeyServiceError> {
        let key = self.keys.get(key_id).await?;
        Ok(key.map(|k| k.authenticates(self.clock.now())))
    }

    /// The caller's keys, metadata only; a caller locked to an app sees only that app's keys.
    pub async fn list(
        &self,
        caller_user_id: &str,
        caller_locked_app: Option<&str>,
    ) -> Result<Vec<ConnectorKeySummary>, ConnectorKeyServiceError> {
        let keys = self.keys.list_by_owner(caller_user_id).await?;
        Ok(keys
            .iter()
            .filter(|k| k.within_app(caller_locked_app))
            .map(ConnectorKey::summary)
            .collect())
    }

    /// A new active key. Only its hash and display prefix are stored. Past the keys an account
    /// keeps ([`Self::with_keys_per_account`]), its oldest live keys are revoked as
    /// [`Self::revoke`] revokes them.
    pub async fn issue(&self, command: IssueConnectorKey) -> Result<IssuedConnectorKey, ConnectorKeyServiceError> {
        let draft = ConnectorKeyDraft {
            id: self.ids.ulid(),
            owner_user_id: command.caller_user_id,
            app_id: command.app_id,
            name: command.name,
            expires_at: command.expires_at,
            secret: self.ids.base62(SECRET_CHARS),
        };
        let (key, plaintext_key) = ConnectorKey::issue(draft, self.clock.now())?;
        match self.keys_per_account {
            None => self.keys.insert(&key).await?,
            Some(cap) => {
                for key_id in self.keys.insert_keeping_newest(&key, cap).await? {
                    tracing::warn!(
                        quota_key = CONNECTOR_KEYS_QUOTA,
                        user_id = %key.owner_user_id,
                        key_id = %key_id,
                        cap,
                        "connector_key_cap_hit"
                    );
                    self.revoked(&key_id);
                }
            }
        }
        Ok(IssuedConnectorKey {
            summary: key.summary(),
            plaintext_key,
        })
    }

    /// Revokes one of the caller's keys; revoking twice answers `alreadyRevoked`.
    pub async fn revoke(&self, command: RevokeConnectorKey) -> Result<RevokedConnectorKey, ConnectorKeyServiceError> {
        let key = self
            .keys
            .get(&command.key_id)
            .await?
            .ok_or(ConnectorKeyError::NotFound)?;
        key.ensure_reachable(&command.caller_user_id, command.caller_locked_app.as_deref())?;
        let (revoked, outcome) = self.keys.revoke(&command.key_id).await?;
        // Announced again on a repeated revoke: a replica that missed the first still hears it.
        self.revoked(&revoked.id);
        Ok(RevokedConnectorKey {
            id: revoked.id,
            status: revoked.status,
            already_revoked: outcome == KeyRevokeOutcome::AlreadyRevoked,
        })
    }

    /// What follows a key's revocation in the store: before answering, this replica stops
    /// authenticating it, and every replica's live channels opened under it hear it.
    fn revoked(&self, key_id: &str) {
        self.cache.forget(key_id);
        if let Some(bus) = &self.revocations {
            bus.publish(LiveEvent::KeyRevoked {
                key_id: key_id.to_owned(),
            });
        }
    }

    /// Revokes every active key of `owner_user_id`, each as [`Self::revoke`] does (forgotten
    /// from the cache and announced to the replicas); answers how many were active.
    pub async fn revoke_all_of(&self, owner_user_id: &str) -> Result<usize, ConnectorKeyServiceError> {
        let now = self.clock.now();
        let active: Vec<String> = self
            .keys
            .list_by_owner(owner_user_id)
            .await?
            .into_iter()
            .filter(|key| key.authenticates(now))
            .map(|key| key.id)
            .collect();
        for key_id in &active {
            self.revoke(RevokeConnectorKey {
                caller_user_id: owner_user_id.to_owned(),
                caller_locked_app: None,
                key_id: key_id.clone(),
            })
            .await?;
        }
        Ok(active.len())
    }

    /// The key a bearer plaintext stands for, if it may authenticate now; records its use.
    pub async fn authenticate(&self, plaintext: &str) -> Result<Option<ConnectorKey>, ConnectorKeyServiceError> {
        if !plaintext.starts_with(connector_key::PLAINTEXT_PREFIX) {
            return Ok(None);
        }
        let now = self.clock.now();
        let hash = connector_key::hash_key(plaintext);
        let (key, cached) = match self.cache.get(&hash) {
            Some(key) => (key, true),
            None => match self.keys.find_by_hash(&hash).await? {
                Some(key) => (key, false),
                None => return Ok(None),
            },
        };
        if !key.authenticates(now) {
            return Ok(None);
        }
        let (key, touched) = self.record_use(key, now).await;
        // A hit is not re-inserted (that would restart its time to live).
        if !cached || touched {
            self.cache.insert(key.clone());
        }
        Ok(Some(key))
    }

    /// Writes `last_used_at` when the stored one is older than [`LAST_USED_RESOLUTION`].
    /// Last-used is informational: a failed write must not refuse a valid key.
    async fn record_use(&self, key: ConnectorKey, now: DateTime<Utc>) -> (ConnectorKey, bool) {
        if key.last_used_at.is_some_and(|at| now - at < LAST_USED_RESOLUTION) {
            return (key, false);
        }
        if let Err(error) = self.keys.touch_last_used(&key.id, now).await {
            tracing::warn!(key_id = %key.id, error = %error, "could not record connector key use");
            return (key, false);
        }
        let used = ConnectorKey {
            last_used_at: Some(now),
            ..key
        };
        (used, true)
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use chrono::TimeDelta;

    use super::*;
    use crate::testing::OperatorFakes;

    fn issue(caller: &str) -> IssueConnectorKey {
        IssueConnectorKey {
            caller_user_id: caller.into(),
            name: Some("laptop".into()),
            app_id: None,
            expires_at: None,
        }
    }

    #[tokio::test]
    async fn an_issued_key_authenticates_until_revoked() {
        let fakes = OperatorFakes::new();
        let service = fakes.connector_key_service();
        let issued = service.issue(issue("u1")).await.unwrap();
        let plaintext = issued.plaintext_key.expose().to_owned();
        assert!(plaintext.starts_with("svc_user_"));
        assert_eq!(issued.summary.api_key_prefix, plaintext["svc_user_".len()..][..8]);

        fakes.clock.advance(TimeDelta::minutes(1));
        let authenticated = service.authenticate(&plaintext).await.unwrap().unwrap();
        assert_eq!(authenticated.id, issued.summary.id);
        let listed = service.list("u1", None).await.unwrap();
        assert_eq!(listed.len(), 1);
        assert_eq!(listed[0].last_used_at, Some(fakes.clock.now()));
        assert!(service.list("u2", None).await.unwrap().is_empty());

        let revoke = RevokeConnectorKey {
            caller_user_id: "u1".into(),
            caller_locked_app: None,
            key_id: issued.summary.id.clone(),
        };
        let first = service.revoke(revoke.clone()).await.unwrap();
        assert_eq!(
            (first.status, first.already_revoked),
            (ConnectorKeyStatus::Revoked, false)
        );
        let again = service.revoke(revoke).await.unwrap();
        assert_eq!(
            (again.status, again.already_revoked),
            (ConnectorKeyStatus::Revoked, true)
        );
        assert_eq!(
            service.authenticate(&plaintext).await.unwrap(),
            None,
            "revoked regardless of hash match"
        );
        assert_eq!(service.list("u1", None).await.unwrap().len(), 1, "the row is kept");
    }

    #[tokio::test]
    async fn revoking_someone_elses_or_a_missing_key_is_refused() {
        let fakes = OperatorFakes::new();
        let service = fakes.connector_key_service();
        let issued = service.issue(issue("u1")).await.unwrap();
        let rows = [
            (
                RevokeConnectorKey {
                    caller_user_id: "u2".into(),
                    caller_locked_app: None,
                    key_id: issued.summary.id.clone(),
                },
                "connector_key_access_denied",
            ),
            (
                RevokeConnectorKey {
                    caller_user_id: "u1".into(),
                    caller_locked_app: None,
                    key_id: "missing".into(),
                },
                "connector_key_not_found",
            ),
        ];
        for (command, code) in rows {
            assert_eq!(service.revoke(command).await.unwrap_err().code(), code);
        }
        assert!(
            service
                .authenticate(issued.plaintext_key.expose())
                .await
                .unwrap()
                .is_some()
        );
    }

    #[tokio::test]
    async fn an_expired_or_unknown_key_does_not_authenticate() {
        let fakes = OperatorFakes::new();
        let service = fakes.connector_key_service();
        let expiring = IssueConnectorKey {
            expires_at: Some(fakes.clock.now() + TimeDelta::hours(1)),
            ..issue("u1")
        };
        let issued = service.issue(expiring).await.unwrap();
        assert!(
            service
                .authenticate(issued.plaintext_key.expose())
                .await
                .unwrap()
                .is_some()
        );
        fakes.clock.advance(TimeDelta::hours(1));
        assert_eq!(service.authenticate(issued.plaintext_key.expose()).await.unwrap(), None);
        assert_eq!(service.authenticate("svc_user_unknown").await.unwrap(), None);
        assert_eq!(service.authenticate("Bearer something").await.unwrap(), None);
    }

    /// Hosted `connector_keys_per_account`: a mint past the cap revokes the owner's oldest live
    /// key (a revoked or expired one is not counted) exactly as a revocation does: it stops
    /// authenticating and the bus hears it. Another owner's keys are not counted.
    #[tokio::test]
    async fn a_mint_past_the_cap_revokes_the_owners_oldest_live_key() {
        use crate::ports::agent::{EventBus, KEY_REVOCATIONS_TOPIC};
        use crate::testing::LocalBus;

        let fakes = OperatorFakes::new();
        let bus = Arc::new(LocalBus::default());
        let mut heard = bus.subscribe(KEY_REVOCATIONS_TOPIC);
        let service = fakes
            .connector_key_service()
            .announcing_revocations_on(bus.clone())
            .with_keys_per_account(2);
        let mint = async |owner: &str| {
            fakes.clock.advance(TimeDelta::seconds(1));
            let issued = service.issue(issue(owner)).await.unwrap();
            (issued.summary.id, issued.plaintext_key.expose().to_owned())
        };
        let expired = IssueConnectorKey {
            expires_at: Some(fakes.clock.now() + TimeDelta::milliseconds(500)),
            ..issue("u1")
        };
        service.issue(expired).await.unwrap();
        let oldest = mint("u1").await;
        let theirs = mint("u2").await;
        let older = mint("u1").await;
        assert!(heard.try_recv().is_err(), "nothing revoked within the cap");
        let newest = mint("u1").await;

        assert_eq!(service.authenticate(&oldest.1).await.unwrap(), None);
        for (id, plaintext) in [&older, &newest, &theirs] {
            assert_eq!(
                service.authenticate(plaintext).await.unwrap().map(|k| k.id),
                Some(id.clone())
            );
        }
        let announced = heard.try_recv().expect("the revocation is announced");
        assert!(
            matches!(announced.event(), LiveEvent::KeyRevoked { key_id } if *key_id == oldest.0),
            "{:?}",
            announced.event()
        );
        assert!(heard.try_recv().is_err(), "one key revoked");
    }

    #[tokio::test]
    async fn names_are_validated() {
        let fakes = OperatorFakes::new();
        let service = fakes.connector_key_service();
        let long = IssueConnectorKey {
            name: Some("x".repeat(121)),
            ..issue("u1")
        };
        assert_eq!(service.issue(long).await.unwrap_err().code(), "invalid_key_name");
        let unnamed = IssueConnectorKey {
            name: None,
            ..issue("u1")
        };
        assert_eq!(service.issue(unnamed).await.unwrap().summary.name, None);
    }
}
