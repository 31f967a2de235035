//! Authentication of tool-route callers: the open development mode and the strict key check.

use std::sync::Arc;

use super::agent::{AgentError, Caller};
use crate::ports::agent::AppRepository;
use crate::ports::auth::KeyStore;
use crate::ports::{Clock, Ids};

/// The identity every bearer maps to in `--dev-allow-all` mode.
pub const DEV_IDENTITY: &str = "builder";

/// Length of minted app ids (base62).
pub const APP_ID_LEN: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// Any bearer string authenticates as `builder`.
    DevAllowAll,
    /// Only known keys authenticate.
    Strict,
}

#[derive(Debug, thiserror::Error)]
pub enum AuthError {
    /// No bearer at all.
    #[error("authentication required")]
    Anonymous,
    /// A bearer that no key store knows (or a revoked or expired key).
    #[error("invalid bearer token")]
    InvalidToken,
    /// A key locked to an app that no longer exists (deleted, i.e. deprovisioned).
    #[error("app {0} not found")]
    AppDeprovisioned(String),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

/// Who a caller is, verified (a bearer key, or a console session opened with one), before its app
/// is resolved.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Identity {
    pub principal_id: String,
    pub locked_app: Option<String>,
    pub key_id: Option<String>,
}

/// An authenticated caller and how its key scopes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Authenticated {
    pub caller: Caller,
    /// The key is locked to `caller.app_id`; otherwise it is scoped to the owner's default app.
    pub app_locked: bool,
}

#[derive(Clone)]
pub struct AuthService {
    mode: AuthMode,
    keys: Vec<Arc<dyn KeyStore>>,
    apps: Arc<dyn AppRepository>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    /// Federated identities and per-app auth modes on `/apps/<appId>/mcp`; absent, that endpoint
    /// takes native keys only.
    federation: Option<super::federated_caller::Federation>,
}

impl AuthService {
    pub fn new(
        mode: AuthMode,
        keys: Vec<Arc<dyn KeyStore>>,
        apps: Arc<dyn AppRepository>,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            mode,
            keys,
            apps,
            clock,
            ids,
            federation: None,
        }
    }

    /// Checks JWT bearers on per-app endpoints against the app's federation issuer, and each
    /// app's auth mode.
    pub fn with_federation(mut self, federation: super::federated_caller::Federation) -> Self {
        self.federation = Some(federation);
        self
    }

    pub(crate) fn federation(&self) -> Option<&super::federated_caller::Federation> {
        self.federation.as_ref()
    }

    pub fn mode(&self) -> AuthMode {
        self.mode
    }

    /// Resolves a bearer (the text after `Bearer `) to a caller scoped to one app.
    pub async fn authenticate(&self, bearer: Option<&str>) -> Result<Caller, AuthError> {
        Ok(self.authenticate_scoped(bearer).await?.caller)
    }

    /// Like [`AuthService::authenticate`], also telling whether the key is locked to its app.
    pub async fn authenticate_scoped(&self, bearer: Option<&str>) -> Result<Authenticated, AuthError> {
        let identity = self.identify(bearer).await?;
        self.resolve(identity).await
    }

    /// Scopes a verified identity to its app: the app its key is locked to (which must still
    /// exist), else the owner's default app (created on first use).
    pub async fn resolve(&self, identity: Identity) -> Result<Authenticated, AuthError> {
        let Identity {
            principal_id: principal,
            locked_app,
            key_id,
        } = identity;
        let app_locked = locked_app.is_some();
        let app_id = match locked_app {
            Some(app) => {
                let exists = self
                    .apps
                    .get(&app)
                    .await
                    .map_err(|e| AuthError::Internal(e.into()))?
                    .is_some();
                if !exists {
                    return Err(AuthError::AppDeprovisioned(app));
                }
                app
            }
            None => {
                let app = self
                    .apps
                    .default_app(&principal, &|| self.ids.base62(APP_ID_LEN), self.clock.now())
                    .await
                    .map_err(|e| AuthError::Internal(e.into()))?;
                app.app_id.clone()
            }
        };
        Ok(Authenticated {
            caller: Caller {
                principal_id: principal,
                app_id,
                key_id,
            },
            app_locked,
        })
    }

    /// The principal behind a bearer, the app its key is locked to and the key's id.
    pub async fn identify(&self, bearer: Option<&str>) -> Result<Identity, AuthError> {
        let bearer = bearer
            .map(str::trim)
            .filter(|b| !b.is_empty())
            .ok_or(AuthError::Anonymous)?;
        match self.mode {
            AuthMode::DevAllowAll => Ok(Identity {
                principal_id: DEV_IDENTITY.to_owned(),
                locked_app: None,
                key_id: None,
            }),
            AuthMode::Strict => {
                let owner = self.lookup(bearer).await?.ok_or(AuthError::InvalidToken)?;
                Ok(Identity {
                    principal_id: owner.principal_id,
                    locked_app: owner.app_id,
                    key_id: Some(owner.key_id),
                })
            }
        }
    }

    /// Whether a key may still authenticate (a key no store holds any more is gone). Live-channel
    /// tokens minted under a key are honoured only while it is live.
    pub async fn key_is_live(&self, key_id: &str) -> Result<bool, AuthError> {
        for store in &self.keys {
            if let Some(live) = store.is_live(key_id).await.map_err(|e| AuthError::Internal(e.into()))? {
                return Ok(live);
            }
        }
        Ok(false)
    }

    pub(crate) fn apps(&self) -> &Arc<dyn AppRepository> {
        &self.apps
    }

    async fn lookup(&self, bearer: &str) -> Result<Option<crate::ports::auth::KeyOwner>, AuthError> {
        for store in &self.keys {
            if let Some(owner) = store.find(bearer).await.map_err(|e| AuthError::Internal(e.into()))? {
                return Ok(Some(owner));
            }
        }
        Ok(None)
    }
}

impl From<AuthError> for AgentError {
    fn from(e: AuthError) -> Self {
        AgentError::Internal(anyhow::Error::new(e))
    }
}
