//! The OAuth surface's ports in memory ([`InMemoryOAuthStore`]), and [`OAuthFakes`], which builds
//! an [`OAuthService`] over them with the operator plane's keys and the agent plane's apps.

use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use chrono::{DateTime, TimeDelta, Utc};
use svc_domain::connector_key::ConnectorKeyStatus;
use svc_domain::oauth::{AuthorizationCode, ClientIdUrl, Issuer, KeyGrant, OAuthClient};

use super::{InMemoryAgentStore, InMemoryOperatorStore, OperatorFakes, lock};
use crate::ports::RepositoryError;
use crate::ports::oauth::{
    AuthorizationCodeRepository, ClientConnection, ClientDocumentFetchError, ClientDocumentFetcher, ClientKeyDelivery,
    CodeConsumption, OAuthClientKeyRepository, OAuthClientRepository,
};
use crate::services::auth::{AuthMode, AuthService};
use crate::services::oauth::{ClientDocuments, ConsentChecks, KnownAppsResourceValidator, OAuthPorts, OAuthService};

#[derive(Default)]
struct OAuthState {
    clients: HashMap<String, OAuthClient>,
    /// When each client last completed an authorization.
    authorized: HashMap<String, DateTime<Utc>>,
    /// By code hash.
    codes: HashMap<String, AuthorizationCode>,
    deliveries: Vec<Delivery>,
    next_seq: i64,
}

struct Delivery {
    client_id: String,
    owner_id: String,
    app_id: Option<String>,
    key_id: String,
    seq: i64,
}

/// Registered clients, authorization codes and delivered keys, in memory. Recording a client's
/// `lastResource` can be told to fail, as a database that drops the connection mid-exchange would.
pub struct InMemoryOAuthStore {
    state: Mutex<OAuthState>,
    last_resource_fails: AtomicBool,
    /// The connector keys the deliveries name, as the SQL adapter joins `connector_keys`: a
    /// delivered key keeps its client only while it is usable.
    keys: Arc<InMemoryOperatorStore>,
}

impl InMemoryOAuthStore {
    /// A store whose deliveries name keys of `keys` (the operator fakes' store).
    pub fn new(keys: Arc<InMemoryOperatorStore>) -> Self {
        Self {
            state: Mutex::default(),
            last_resource_fails: AtomicBool::new(false),
            keys,
        }
    }

    /// Every later `record_last_resource` answers a storage failure.
    pub fn fail_recording_last_resource(&self) {
        self.last_resource_fails.store(true, Ordering::SeqCst);
    }
}

#[async_trait::async_trait]
impl OAuthClientRepository for InMemoryOAuthStore {
    async fn insert(&self, client: &OAuthClient) -> Result<(), RepositoryError> {
        let mut state = lock(&self.state);
        if state.clients.contains_key(&client.client_id) {
            return Err(RepositoryError::Conflict(format!("client {} exists", client.client_id)));
        }
        state.clients.insert(client.client_id.clone(), client.clone());
        Ok(())
    }

    async fn get(&self, client_id: &str) -> Result<Option<OAuthClient>, RepositoryError> {
        Ok(lock(&self.state).clients.get(client_id).cloned())
    }

    async fn record_last_resource(
        &self,
        client_id: &str,
        resource: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), RepositoryError> {
        if self.last_resource_fails.load(Ordering::SeqCst) {
            return Err(RepositoryError::Unavailable(anyhow::anyhow!(
                "the store was told to fail recording lastResource"
            )));
        }
        let mut state = lock(&self.state);
        if let Some(client) = state.clients.get_mut(client_id) {
            client.last_resource = resource.map(str::to_owned);
            state.authorized.insert(client_id.to_owned(), at);
        }
        Ok(())
    }

    async fn forget_unused(&self, unused_since: DateTime<Utc>) -> Result<u64, RepositoryError> {
        // A delivered key counts while it can still be used: not revoked, and not expired before
        // the client's idle time began (a revocation leaves the delivery in place). A delivery
        // whose key is not stored counts for nothing, as the SQL adapter's join finds no row.
        let usable: HashSet<String> = self
            .keys
            .state()
            .keys
            .iter()
            .filter(|key| key.status == ConnectorKeyStatus::Active && key.expires_at.is_none_or(|at| at > unused_since))
            .map(|key| key.id.clone())
            .collect();
        let mut state = lock(&self.state);
        let unused: Vec<String> = state
            .clients
            .values()
            .filter(|client| {
                let id = client.client_id.as_str();
                let last_used = state
                    .authorized
                    .get(id)
                    .map_or(client.created_at, |at| client.created_at.max(*at));
                last_used < unused_since
                    && !state.codes.values().any(|code| code.binding.client_id == id)
                    && !state
                        .deliveries
                        .iter()
                        .any(|delivery| delivery.client_id == id && usable.contains(&delivery.key_id))
            })
            .map(|client| client.client_id.clone())
            .collect();
        for id in &unused {
            state.clients.remove(id);
            state.authorized.remove(id);
        }
        Ok(unused.len() as u64)
    }
}

#[async_trait::async_trait]
impl AuthorizationCodeRepository for InMemoryOAuthStore {
    async fn insert(&self, code: &AuthorizationCode) -> Result<(), RepositoryError> {
        let mut state = lock(&self.state);
        if state.codes.contains_key(&code.code_hash) {
            return Err(RepositoryError::Conflict("code exists".into()));
        }
        state.codes.insert(code.code_hash.clone(), code.clone());
        Ok(())
    }

    async fn consume(&self, code_hash: &str, now: DateTime<Utc>) -> Result<CodeConsumption, RepositoryError> {
        let mut state = lock(&self.state);
        let Some(code) = state.codes.get(code_hash).cloned() else {
            return Ok(CodeConsumption::Unknown);
        };
        match code.consume(now) {
            Ok(consumed) => {
                state.codes.insert(code_hash.to_owned(), consumed);
                Ok(CodeConsumption::Consumed(code))
            }
            Err(_) => Ok(CodeConsumption::Replayed(code)),
        }
    }

    async fn settle_unredeemed(&self, now: DateTime<Utc>, limit: u64) -> Result<Vec<KeyGrant>, RepositoryError> {
        let mut state = lock(&self.state);
        let mut expired: Vec<&mut AuthorizationCode> = state
            .codes
            .values_mut()
            .filter(|code| code.consumed_at.is_none() && code.expires_at <= now)
            .collect();
        expired.sort_by_key(|code| code.expires_at);
        Ok(expired
            .into_iter()
            .take(usize::try_from(limit).unwrap_or(usize::MAX))
            .map(|code| {
                code.consumed_at = Some(now);
                code.key.clone()
            })
            .collect())
    }

    async fn forget_expired(&self, before: DateTime<Utc>) -> Result<u64, RepositoryError> {
        let mut state = lock(&self.state);
        let count = state.codes.len();
        state
            .codes
            .retain(|_, code| code.consumed_at.is_none() || code.expires_at >= before);
        Ok((count - state.codes.len()) as u64)
    }
}

#[async_trait::async_trait]
impl OAuthClientKeyRepository for InMemoryOAuthStore {
    async fn record(
        &self,
        connection: ClientConnection<'_>,
        key_id: &str,
        _at: DateTime<Utc>,
    ) -> Result<i64, RepositoryError> {
        let mut state = lock(&self.state);
        state.next_seq += 1;
        let seq = state.next_seq;
        state.deliveries.push(Delivery {
            client_id: connection.client_id.to_owned(),
            owner_id: connection.owner_id.to_owned(),
            app_id: connection.app_id.map(str::to_owned),
            key_id: key_id.to_owned(),
            seq,
        });
        Ok(seq)
    }

    async fn delivered(&self, connection: ClientConnection<'_>) -> Result<Vec<ClientKeyDelivery>, RepositoryError> {
        Ok(lock(&self.state)
            .deliveries
            .iter()
            .filter(|d| {
                d.client_id == connection.client_id
                    && d.owner_id == connection.owner_id
                    && d.app_id.as_deref() == connection.app_id
            })
            .map(|d| ClientKeyDelivery {
                key_id: d.key_id.clone(),
                seq: d.seq,
            })
            .collect())
    }

    async fn forget(&self, key_id: &str) -> Result<(), RepositoryError> {
        lock(&self.state).deliveries.retain(|d| d.key_id != key_id);
        Ok(())
    }
}

/// Refuses every metadata document: these fakes serve registered clients only.
struct NoClientDocuments;

#[async_trait::async_trait]
impl ClientDocumentFetcher for NoClientDocuments {
    async fn fetch(&self, _url: &ClientIdUrl) -> Result<Vec<u8>, ClientDocumentFetchError> {
        Err(ClientDocumentFetchError::Unreachable)
    }
}

/// The OAuth surface over in-memory ports: keys from the operator plane's fakes (the strict key
/// check accepts them, and `store` reads their status), apps from the agent plane's.
#[derive(Clone)]
pub struct OAuthFakes {
    pub operator: OperatorFakes,
    pub apps: Arc<InMemoryAgentStore>,
    pub store: Arc<InMemoryOAuthStore>,
}

impl Default for OAuthFakes {
    fn default() -> Self {
        let operator = OperatorFakes::new();
        let store = Arc::new(InMemoryOAuthStore::new(operator.store.clone()));
        Self {
            operator,
            apps: Arc::default(),
            store,
        }
    }
}

impl OAuthFakes {
    pub const ISSUER: &str = "https://mcp.example.com";

    pub fn service(&self) -> OAuthService {
        let clock = self.operator.clock.clone();
        let ids = self.operator.ids.clone();
        let keys = self.operator.connector_key_service();
        let ports = OAuthPorts {
            clients: self.store.clone(),
            codes: self.store.clone(),
            client_keys: self.store.clone(),
            resources: Arc::new(KnownAppsResourceValidator::new(self.apps.clone())),
            apps: self.apps.clone(),
            clock: clock.clone(),
            ids: ids.clone(),
            client_documents: ClientDocuments::new(Arc::new(NoClientDocuments), false),
        };
        let checks = ConsentChecks {
            auth: AuthService::new(
                AuthMode::Strict,
                vec![Arc::new(keys.clone())],
                self.apps.clone(),
                clock,
                ids,
            ),
            pairing: None,
            keys,
            accounts: None,
            external: None,
        };
        let issuer = Issuer::parse(Self::ISSUER).expect("a valid issuer");
        OAuthService::new(issuer, ports, checks, TimeDelta::minutes(5))
    }
}
