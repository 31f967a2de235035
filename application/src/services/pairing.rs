//! Pairing: the 6-digit code printed at boot is exchanged for a bearer key (a connector key of the
//! local operator), so a client can connect without a key minted beforehand. A code is spent ten
//! minutes after its first use (`svc_domain::pair_code`); the next one is drawn and announced.

use std::sync::{Arc, Mutex};

use svc_domain::connector_key::{ConnectorKeyError, KeyName};
use svc_domain::name::NameError;
use svc_domain::pair_code::PairCode;

use super::operator::{ConnectorKeyService, IssueConnectorKey};
use crate::ports::auth::{KeyOwner, KeyStore};
use crate::ports::{Clock, RepositoryError};

/// Draws a fresh pair code.
pub type FreshPairCode = Arc<dyn Fn() -> String + Send + Sync>;
/// Tells the operator the code that replaced a spent one (the banner printed the first).
pub type AnnouncePairCode = Arc<dyn Fn(&str) + Send + Sync>;

/// Digits of a pair code.
pub const PAIR_CODE_DIGITS: usize = 6;

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
    code: Arc<Mutex<PairCode>>,
    /// The principal paired bearers act for.
    operator: String,
    keys: ConnectorKeyService,
    clock: Arc<dyn Clock>,
    fresh: FreshPairCode,
    announce: AnnouncePairCode,
}

impl PairingService {
    pub fn new(
        operator: String,
        keys: ConnectorKeyService,
        clock: Arc<dyn Clock>,
        fresh: FreshPairCode,
        announce: AnnouncePairCode,
    ) -> Self {
        Self {
            code: Arc::new(Mutex::new(PairCode::issued(fresh()))),
            operator,
            keys,
            clock,
            fresh,
            announce,
        }
    }

    /// The code in force now.
    pub fn code(&self) -> String {
        self.code.lock().expect("pair code lock").code().to_owned()
    }

    /// Redeems `candidate`, replacing a spent code first.
    fn redeem(&self, candidate: &str) -> Result<(), PairingError> {
        let now = self.clock.now();
        let mut current = self.code.lock().expect("pair code lock");
        if current.is_spent(now) {
            *current = PairCode::issued((self.fresh)());
            (self.announce)(current.code());
        }
        *current = current.redeem(candidate, now).map_err(|_| PairingError::WrongCode)?;
        Ok(())
    }

    /// Exchanges the pair code for a fresh bearer, returned once.
    pub async fn exchange(&self, code: &str, client_name: Option<String>) -> Result<(String, String), PairingError> {
        self.redeem(code)?;
        let name = match client_name.filter(|n| !n.trim().is_empty()) {
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
                app_id: None,
                expires_at: None,
            })
            .await
            .map_err(|e| PairingError::Internal(anyhow::anyhow!("{e}")))?;
        Ok((issued.summary.id.clone(), issued.plaintext_key.expose().to_owned()))
    }
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
    use std::sync::atomic::{AtomicU32, Ordering};

    use chrono::TimeDelta;
    use svc_domain::pair_code::PAIR_CODE_REUSE_MINUTES;

    use super::*;
    use crate::testing::OperatorFakes;

    #[tokio::test]
    async fn a_spent_code_is_replaced_and_the_new_one_announced() {
        let fakes = OperatorFakes::new();
        let drawn = Arc::new(AtomicU32::new(0));
        let announced = Arc::new(Mutex::new(Vec::<String>::new()));
        let fresh: FreshPairCode = {
            let drawn = drawn.clone();
            Arc::new(move || format!("{:06}", 100_000 + drawn.fetch_add(1, Ordering::SeqCst)))
        };
        let announce: AnnouncePairCode = {
            let announced = announced.clone();
            Arc::new(move |code: &str| announced.lock().unwrap().push(code.to_owned()))
        };
        let service = PairingService::new(
            "owner".into(),
            fakes.connector_key_service(),
            fakes.clock.clone(),
            fresh,
            announce,
        );
        assert_eq!(service.code(), "100000");
        service.exchange("100000", Some("laptop".into())).await.unwrap();
        fakes.clock.advance(TimeDelta::minutes(PAIR_CODE_REUSE_MINUTES - 1));
        service.exchange("100000", Some("phone".into())).await.unwrap();
        assert!(announced.lock().unwrap().is_empty(), "reusable within the window");

        fakes.clock.advance(TimeDelta::minutes(1));
        assert!(matches!(
            service.exchange("100000", None).await,
            Err(PairingError::WrongCode)
        ));
        assert_eq!(*announced.lock().unwrap(), vec!["100001".to_owned()]);
        assert_eq!(service.code(), "100001");
        service.exchange("100001", None).await.unwrap();
    }
}
