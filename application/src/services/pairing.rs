//! Pairing: the 6-digit code printed at boot is exchanged for a bearer key (a connector key of the
//! local operator), so a client can connect without a key minted beforehand. A code is spent ten
//! minutes after its first use (`svc_domain::pair_code`); the next one is drawn and announced.
//! The code lives in a store every replica shares, so any replica accepts the code in force.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use svc_domain::connector_key::{ConnectorKeyError, KeyName};
use svc_domain::name::NameError;
use svc_domain::pair_code::PairCode;

use super::operator::{ConnectorKeyService, IssueConnectorKey};
use crate::ports::auth::{KeyOwner, KeyStore};
use crate::ports::pair_codes::{PairCodeStore, StoredPairCode};
use crate::ports::{Clock, RepositoryError};

/// Draws a fresh pair code.
pub type FreshPairCode = Arc<dyn Fn() -> String + Send + Sync>;
/// Tells the operator the code that replaced a spent one (the banner printed the first).
pub type AnnouncePairCode = Arc<dyn Fn(&str) + Send + Sync>;

/// Digits of a pair code.
pub const PAIR_CODE_DIGITS: usize = 6;

/// Compare-and-set rounds before giving up: replicas racing on one code settle in one or two.
const REDEEM_ROUNDS: usize = 8;

#[derive(Debug, thiserror::Error)]
pub enum PairingError {
    #[error("wrong pair code")]
    WrongCode,
    /// `clientName` breaks the key-name rule.
    #[error("clientName: {0}")]
    InvalidClientName(NameError),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

#[derive(Clone)]
pub struct PairingService {
    store: Arc<dyn PairCodeStore>,
    /// The principal paired bearers act for.
    operator: String,
    keys: ConnectorKeyService,
    clock: Arc<dyn Clock>,
    fresh: FreshPairCode,
    announce: AnnouncePairCode,
}

impl PairingService {
    pub fn new(
        store: Arc<dyn PairCodeStore>,
        operator: String,
        keys: ConnectorKeyService,
        clock: Arc<dyn Clock>,
        fresh: FreshPairCode,
        announce: AnnouncePairCode,
    ) -> Self {
        Self {
            store,
            operator,
            keys,
            clock,
            fresh,
            announce,
        }
    }

    /// The code in force now (stored first by whichever replica starts first). A spent code is
    /// replaced here too, so the banner of a server restarted after its code was spent prints one
    /// that pairs; the caller shows it, so it is not announced.
    pub async fn code(&self) -> Result<String, PairingError> {
        let (in_force, _) = self.in_force(self.clock.now()).await?;
        Ok(in_force.code.code().to_owned())
    }

    /// The stored code unless it is spent at `now`, else its replacement, stored by
    /// compare-and-set (`true` when this call drew it, so it alone announces it).
    async fn in_force(&self, now: DateTime<Utc>) -> Result<(StoredPairCode, bool), PairingError> {
        for _ in 0..REDEEM_ROUNDS {
            let stored = self
                .store
                .load_or_issue(PairCode::issued((self.fresh)()))
                .await
                .map_err(internal)?;
            if !stored.code.is_spent(now) {
                return Ok((stored, false));
            }
            let fresh = PairCode::issued((self.fresh)());
            if self.store.replace(stored.version, &fresh).await.map_err(internal)? {
                let version = stored.version + 1;
                return Ok((StoredPairCode { code: fresh, version }, true));
            }
        }
        Err(changing())
    }

    /// Redeems `candidate` against the code in force. Every change is a compare-and-set, so two
    /// replicas never both rotate or both open a reuse window.
    async fn redeem(&self, candidate: &str) -> Result<(), PairingError> {
        for _ in 0..REDEEM_ROUNDS {
            let now = self.clock.now();
            let (current, rotated) = self.in_force(now).await?;
            if rotated {
                (self.announce)(current.code.code());
            }
            let outcome = current.code.redeem(candidate, now);
            if let Ok(next) = &outcome
                && next.first_used_at() != current.code.first_used_at()
                && !self.store.replace(current.version, next).await.map_err(internal)?
            {
                continue;
            }
            return outcome.map(|_| ()).map_err(|_| PairingError::WrongCode);
        }
        Err(changing())
    }

    /// Exchanges the pair code for a fresh bearer, returned once.
    pub async fn exchange(&self, code: &str, client_name: Option<String>) -> Result<(String, String), PairingError> {
        self.exchange_for_app(code, client_name, None).await
    }

    /// [`PairingService::exchange`] for a bearer locked to `app_id` when one is given (an OAuth
    /// client that asked for one app's resource gets a key for that app alone).
    pub async fn exchange_for_app(
        &self,
        code: &str,
        client_name: Option<String>,
        app_id: Option<String>,
    ) -> Result<(String, String), PairingError> {
        self.redeem(code).await?;
        // A name sent empty or blank breaks the rule like any other (`/ops` refuses it too);
        // only one left out takes the default.
        let name = match client_name {
            None => "paired client".to_owned(),
            Some(raw) => match KeyName::parse(&raw) {
                Ok(name) => name.as_str().to_owned(),
                Err(ConnectorKeyError::InvalidName(rule)) => return Err(PairingError::InvalidClientName(rule)),
                Err(other) => return Err(PairingError::Internal(other.into())),
            },
        };
        let issued = self
            .keys
            .issue(IssueConnectorKey {
                caller_user_id: self.operator.clone(),
                name: Some(name),
                app_id,
                expires_at: None,
            })
            .await
            .map_err(|e| PairingError::Internal(anyhow::anyhow!("{e}")))?;
        Ok((issued.summary.id.clone(), issued.plaintext_key.expose().to_owned()))
    }
}

fn changing() -> PairingError {
    internal(anyhow::anyhow!(
        "the pair code kept changing under {REDEEM_ROUNDS} attempts"
    ))
}

fn internal(error: impl Into<anyhow::Error>) -> PairingError {
    PairingError::Internal(error.into())
}

/// Connector keys (paired, OAuth-minted, or issued on `/ops`) authenticate tool routes.
#[async_trait::async_trait]
impl KeyStore for ConnectorKeyService {
    async fn find(&self, bearer: &str) -> Result<Option<KeyOwner>, RepositoryError> {
        let key = self
            .authenticate(bearer)
            .await
            .map_err(|e| RepositoryError::Unavailable(anyhow::anyhow!("{e}")))?;
        Ok(key.map(|k| KeyOwner {
            key_id: k.id,
            principal_id: k.owner_user_id,
            app_id: k.app_id,
        }))
    }

    async fn is_live(&self, key_id: &str) -> Result<Option<bool>, RepositoryError> {
        self.key_is_live(key_id)
            .await
            .map_err(|e| RepositoryError::Unavailable(anyhow::anyhow!("{e}")))
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use std::sync::Mutex;
    use std::sync::atomic::{AtomicU32, Ordering};

    use chrono::TimeDelta;
    use svc_domain::pair_code::PAIR_CODE_REUSE_MINUTES;

    use super::*;
    use crate::ports::RepositoryError;
    use crate::ports::pair_codes::StoredPairCode;
    use crate::testing::OperatorFakes;

    /// The shared row, in memory: what two replicas on one database see.
    #[derive(Default)]
    struct MemoryPairCodes(Mutex<Option<StoredPairCode>>);

    #[async_trait::async_trait]
    impl PairCodeStore for MemoryPairCodes {
        async fn load_or_issue(&self, fresh: PairCode) -> Result<StoredPairCode, RepositoryError> {
            let mut row = self.0.lock().unwrap();
            Ok(row
                .get_or_insert(StoredPairCode {
                    code: fresh,
                    version: 0,
                })
                .clone())
        }

        async fn replace(&self, version: i64, next: &PairCode) -> Result<bool, RepositoryError> {
            let mut row = self.0.lock().unwrap();
            match row.as_mut() {
                Some(stored) if stored.version == version => {
                    *stored = StoredPairCode {
                        code: next.clone(),
                        version: version + 1,
                    };
                    Ok(true)
                }
                _ => Ok(false),
            }
        }
    }

    struct Replica {
        service: PairingService,
        announced: Arc<Mutex<Vec<String>>>,
    }

    /// A pairing service on `store`, drawing codes 100000, 100001, ... from `drawn`.
    fn replica(fakes: &OperatorFakes, store: Arc<dyn PairCodeStore>, drawn: Arc<AtomicU32>) -> Replica {
        let announced = Arc::new(Mutex::new(Vec::<String>::new()));
        let fresh: FreshPairCode = Arc::new(move || format!("{:06}", 100_000 + drawn.fetch_add(1, Ordering::SeqCst)));
        let announce: AnnouncePairCode = {
            let announced = announced.clone();
            Arc::new(move |code: &str| announced.lock().unwrap().push(code.to_owned()))
        };
        let service = PairingService::new(
            store,
            "owner".into(),
            fakes.connector_key_service(),
            fakes.clock.clone(),
            fresh,
            announce,
        );
        Replica { service, announced }
    }

    #[tokio::test]
    async fn a_spent_code_is_replaced_and_the_new_one_announced() {
        let fakes = OperatorFakes::new();
        let store: Arc<dyn PairCodeStore> = Arc::new(MemoryPairCodes::default());
        let Replica { service, announced } = replica(&fakes, store, Arc::new(AtomicU32::new(0)));
        let first = service.code().await.unwrap();
        assert_eq!(service.code().await.unwrap(), first, "the code stays until spent");
        service.exchange(&first, Some("laptop".into())).await.unwrap();
        fakes.clock.advance(TimeDelta::minutes(PAIR_CODE_REUSE_MINUTES - 1));
        service.exchange(&first, Some("phone".into())).await.unwrap();
        assert!(announced.lock().unwrap().is_empty(), "reusable within the window");

        fakes.clock.advance(TimeDelta::minutes(1));
        assert!(matches!(
            service.exchange(&first, None).await,
            Err(PairingError::WrongCode)
        ));
        let next = service.code().await.unwrap();
        assert_ne!(next, first);
        assert_eq!(*announced.lock().unwrap(), vec![next.clone()]);
        service.exchange(&next, None).await.unwrap();
    }

    /// A `clientName` sent empty or blank is refused like any name breaking the rule; only one
    /// left out takes the default.
    #[tokio::test]
    async fn a_blank_client_name_is_refused_and_an_absent_one_pairs() {
        let fakes = OperatorFakes::new();
        let store: Arc<dyn PairCodeStore> = Arc::new(MemoryPairCodes::default());
        let Replica { service, .. } = replica(&fakes, store, Arc::new(AtomicU32::new(0)));
        let code = service.code().await.unwrap();
        for blank in ["", "   ", "\t\n"] {
            let refused = service.exchange(&code, Some(blank.into())).await;
            assert!(
                matches!(
                    refused,
                    Err(PairingError::InvalidClientName(NameError::Length {
                        chars: 0,
                        max: 120
                    }))
                ),
                "{blank:?}: {refused:?}"
            );
        }
        service.exchange(&code, None).await.unwrap();
    }

    /// A server restarted after its code was spent: the banner's code (`code()`) is a fresh
    /// one that pairs, not the spent one, and the banner alone shows it.
    #[tokio::test]
    async fn the_code_in_force_after_the_window_is_a_fresh_one_that_pairs() {
        let fakes = OperatorFakes::new();
        let store: Arc<dyn PairCodeStore> = Arc::new(MemoryPairCodes::default());
        let before = replica(&fakes, store.clone(), Arc::new(AtomicU32::new(0)));
        let first = before.service.code().await.unwrap();
        before.service.exchange(&first, None).await.unwrap();
        fakes.clock.advance(TimeDelta::minutes(PAIR_CODE_REUSE_MINUTES));

        let restarted = replica(&fakes, store, Arc::new(AtomicU32::new(500)));
        let shown = restarted.service.code().await.unwrap();
        assert_ne!(shown, first, "the spent code is not shown again");
        assert_eq!(restarted.service.code().await.unwrap(), shown, "it stays in force");
        restarted.service.exchange(&shown, Some("laptop".into())).await.unwrap();
        assert!(matches!(
            restarted.service.exchange(&first, None).await,
            Err(PairingError::WrongCode)
        ));
        assert!(
            restarted.announced.lock().unwrap().is_empty(),
            "the banner shows it; nothing else announces it"
        );
        assert!(before.announced.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn replicas_on_one_store_share_the_code_its_window_and_its_replacement() {
        let fakes = OperatorFakes::new();
        let store: Arc<dyn PairCodeStore> = Arc::new(MemoryPairCodes::default());
        let a = replica(&fakes, store.clone(), Arc::new(AtomicU32::new(0)));
        let b = replica(&fakes, store, Arc::new(AtomicU32::new(500)));
        let code = a.service.code().await.unwrap();
        assert_eq!(
            b.service.code().await.unwrap(),
            code,
            "the first replica's code is in force on both"
        );

        a.service.exchange(&code, None).await.unwrap();
        fakes.clock.advance(TimeDelta::minutes(PAIR_CODE_REUSE_MINUTES));
        assert!(
            matches!(b.service.exchange(&code, None).await, Err(PairingError::WrongCode)),
            "the window opened on A closes on B"
        );
        let replacement = a.service.code().await.unwrap();
        assert_ne!(replacement, code);
        assert_eq!(
            *b.announced.lock().unwrap(),
            vec![replacement.clone()],
            "B rotated and said so"
        );
        assert!(a.announced.lock().unwrap().is_empty());
        a.service.exchange(&replacement, None).await.unwrap();
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn concurrent_first_uses_rotate_a_spent_code_once() {
        let fakes = OperatorFakes::new();
        let store: Arc<dyn PairCodeStore> = Arc::new(MemoryPairCodes::default());
        let drawn = Arc::new(AtomicU32::new(0));
        let replicas: Vec<Replica> = (0..4).map(|_| replica(&fakes, store.clone(), drawn.clone())).collect();
        let code = replicas[0].service.code().await.unwrap();
        replicas[0].service.exchange(&code, None).await.unwrap();
        fakes.clock.advance(TimeDelta::minutes(PAIR_CODE_REUSE_MINUTES));
        let attempts: Vec<_> = replicas
            .iter()
            .map(|r| {
                let (service, code) = (r.service.clone(), code.clone());
                tokio::spawn(async move { service.exchange(&code, None).await })
            })
            .collect();
        for attempt in attempts {
            assert!(matches!(attempt.await.unwrap(), Err(PairingError::WrongCode)));
        }
        let announcements: usize = replicas.iter().map(|r| r.announced.lock().unwrap().len()).sum();
        assert_eq!(announcements, 1, "one replica rotated the spent code");
    }
}
