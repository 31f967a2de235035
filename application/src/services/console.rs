//! Console sessions: a browser signs in once and then calls the operator tools with a cookie
//! instead of a bearer. A session is opened from a verified caller identity
//! ([`ConsoleSessions::open`]): self-hosted, the identity behind a key or a paired key; a hosted
//! account sign-in opens one the same way. The session is stored (so every replica honours it),
//! ends at its expiry or on sign-out, and ends with the key it was opened with.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use svc_domain::contract::sha256_hex;

use super::accounts::{AccountServiceError, SignIn};
use super::auth::{AuthError, AuthService, Authenticated, Identity};
use super::oauth::AccountSignIn;
use crate::ports::console_sessions::{ConsoleSessionStore, StoredConsoleSession};
use crate::ports::{Clock, Ids};
use svc_domain::wallet::Principal;

/// How long a console session lasts from sign-in.
pub const CONSOLE_SESSION_HOURS: i64 = 12;

/// Base62 characters of the cookie secret (about 256 bits) and of the CSRF token.
const SECRET_LEN: usize = 43;

/// The quota key of `hosted.console_sessions_per_account` in the log.
const CONSOLE_SESSIONS_QUOTA: &str = "console-sessions";

#[derive(Debug, thiserror::Error)]
pub enum ConsoleError {
    /// No cookie, an unknown or expired session, or one whose key was revoked or expired.
    #[error("sign in to the console")]
    SignedOut,
    /// The key the session was opened with is locked to an app that was deleted.
    #[error("app {0} not found")]
    AppDeprovisioned(String),
    /// A hosted account sign-in was refused (wrong email or password, rate limited, ...).
    #[error(transparent)]
    Account(AccountServiceError),
    /// Email and password sign-in on a server without hosted accounts.
    #[error("this server has no accounts: sign in with the pair code or a key")]
    AccountsUnavailable,
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl From<AuthError> for ConsoleError {
    fn from(error: AuthError) -> Self {
        match error {
            AuthError::Anonymous | AuthError::InvalidToken => Self::SignedOut,
            AuthError::AppDeprovisioned(app) => Self::AppDeprovisioned(app),
            AuthError::Internal(cause) => Self::Internal(cause),
        }
    }
}

/// A session just opened: the cookie secret and the CSRF token are handed out once.
#[derive(Debug, Clone)]
pub struct OpenedSession {
    pub cookie_secret: String,
    pub csrf_token: String,
    pub expires_at: DateTime<Utc>,
}

/// A live session and the caller it acts as.
#[derive(Debug, Clone)]
pub struct ResumedSession {
    pub csrf_token: String,
    pub expires_at: DateTime<Utc>,
    pub caller: Authenticated,
}

#[derive(Clone)]
pub struct ConsoleSessions {
    store: Arc<dyn ConsoleSessionStore>,
    auth: AuthService,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    /// Hosted mode: email and password sign-in (and the welcome credit of a first sign-in).
    accounts: Option<AccountSignIn>,
    /// Hosted mode: the sessions one account keeps open; a sign-in past it ends the oldest.
    sessions_per_account: Option<u64>,
}

impl ConsoleSessions {
    pub fn new(
        store: Arc<dyn ConsoleSessionStore>,
        auth: AuthService,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            store,
            auth,
            clock,
            ids,
            accounts: None,
            sessions_per_account: None,
        }
    }

    /// An account (any principal) keeps at most `max_live` sessions open: each sign-in past it
    /// ends the account's oldest, as signing out does (hosted mode: sessions would otherwise
    /// pile up until each one's expiry).
    pub fn with_sessions_per_account(mut self, max_live: u64) -> Self {
        self.sessions_per_account = Some(max_live);
        self
    }

    /// Hosted mode: accounts sign in with their email and password.
    pub fn with_accounts(mut self, accounts: AccountSignIn) -> Self {
        self.accounts = Some(accounts);
        self
    }

    /// Whether email and password sign-in is offered (hosted mode).
    pub fn has_accounts(&self) -> bool {
        self.accounts.is_some()
    }

    /// Signs in a hosted account with its email and password, exactly as the consent page does
    /// (same budgets, same welcome credit on a first sign-in). The session has no key: it ends
    /// at its expiry or on sign-out.
    pub async fn sign_in_with_account(&self, attempt: SignIn) -> Result<OpenedSession, ConsoleError> {
        let accounts = self.accounts.as_ref().ok_or(ConsoleError::AccountsUnavailable)?;
        let signed_in = accounts.accounts.sign_in(attempt).await.map_err(|e| match e {
            AccountServiceError::Storage(cause) => ConsoleError::Internal(cause.into()),
            refused => ConsoleError::Account(refused),
        })?;
        let user_id = signed_in.account.user_id;
        if signed_in.first_sign_in
            && let Some(credits) = &accounts.credits
        {
            credits
                .welcome(&Principal::user(user_id.clone()))
                .await
                .map_err(|e| ConsoleError::Internal(e.into()))?;
        }
        self.open(Identity {
            principal_id: user_id,
            locked_app: None,
            key_id: None,
        })
        .await
    }

    /// Forgets every session past its expiry (run periodically, so rows of browsers that never
    /// come back do not pile up).
    pub async fn sweep_expired(&self) -> Result<(), ConsoleError> {
        self.store
            .delete_expired(self.clock.now())
            .await
            .map_err(|e| ConsoleError::Internal(e.into()))
    }

    /// Signs in with a bearer key (a connector key, a keys-file key, a paired key).
    pub async fn sign_in_with_key(&self, bearer: &str) -> Result<OpenedSession, ConsoleError> {
        let identity = self.auth.identify(Some(bearer)).await?;
        self.open(identity).await
    }

    /// Opens a session for an identity the caller has verified.
    pub async fn open(&self, identity: Identity) -> Result<OpenedSession, ConsoleError> {
        // The bearer was authenticated from a cache that hears another replica's revocation only
        // when the bus carries it: a session lasts hours, so it is opened only on a live row.
        self.ensure_key_is_live(identity.key_id.as_deref()).await?;
        let now = self.clock.now();
        if let Err(cause) = self.store.delete_expired(now).await {
            tracing::warn!(error = ?cause, "could not forget expired console sessions");
        }
        let cookie_secret = self.ids.base62(SECRET_LEN);
        let session = StoredConsoleSession {
            token_hash: sha256_hex(cookie_secret.as_bytes()),
            principal_id: identity.principal_id,
            locked_app: identity.locked_app,
            key_id: identity.key_id,
            csrf_token: self.ids.base62(SECRET_LEN),
            created_at: now,
            expires_at: now + TimeDelta::hours(CONSOLE_SESSION_HOURS),
        };
        match self.sessions_per_account {
            None => self.store.insert(&session).await,
            Some(cap) => self.store.insert_keeping_newest(&session, cap).await.map(|ended| {
                if ended > 0 {
                    tracing::warn!(
                        quota_key = CONSOLE_SESSIONS_QUOTA,
                        principal_id = %session.principal_id,
                        ended,
                        cap,
                        "console_session_cap_hit"
                    );
                }
            }),
        }
        .map_err(|e| ConsoleError::Internal(e.into()))?;
        Ok(OpenedSession {
            cookie_secret,
            csrf_token: session.csrf_token,
            expires_at: session.expires_at,
        })
    }

    /// The live session behind a cookie, with the caller it acts as. The key it was opened with
    /// is checked on every request, so revoking the key ends the session at once.
    pub async fn resume(&self, cookie_secret: &str) -> Result<ResumedSession, ConsoleError> {
        let hash = sha256_hex(cookie_secret.as_bytes());
        let session = self
            .store
            .find(&hash)
            .await
            .map_err(|e| ConsoleError::Internal(e.into()))?
            .ok_or(ConsoleError::SignedOut)?;
        if session.expires_at <= self.clock.now() {
            self.store
                .delete(&hash)
                .await
                .map_err(|e| ConsoleError::Internal(e.into()))?;
            return Err(ConsoleError::SignedOut);
        }
        self.ensure_key_is_live(session.key_id.as_deref()).await?;
        let caller = self
            .auth
            .resolve(Identity {
                principal_id: session.principal_id,
                locked_app: session.locked_app,
                key_id: session.key_id,
            })
            .await?;
        Ok(ResumedSession {
            csrf_token: session.csrf_token,
            expires_at: session.expires_at,
            caller,
        })
    }

    /// Refuses a session whose key was revoked or expired; a session opened without a key
    /// (an account sign-in) has none to check.
    async fn ensure_key_is_live(&self, key_id: Option<&str>) -> Result<(), ConsoleError> {
        match key_id {
            Some(key_id) if !self.auth.key_is_live(key_id).await? => Err(ConsoleError::SignedOut),
            _ => Ok(()),
        }
    }

    /// Signs out: the session is forgotten on every replica.
    pub async fn close(&self, cookie_secret: &str) -> Result<(), ConsoleError> {
        self.store
            .delete(&sha256_hex(cookie_secret.as_bytes()))
            .await
            .map_err(|e| ConsoleError::Internal(e.into()))
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use std::sync::Mutex;

    use super::*;
    use crate::ports::RepositoryError;
    use crate::services::auth::AuthMode;
    use crate::services::operator::{IssueConnectorKey, RevokeConnectorKey};
    use crate::testing::{InMemoryAgentStore, OperatorFakes};

    #[derive(Default)]
    struct MemorySessions(Mutex<Vec<StoredConsoleSession>>);

    #[async_trait::async_trait]
    impl ConsoleSessionStore for MemorySessions {
        async fn insert(&self, session: &StoredConsoleSession) -> Result<(), RepositoryError> {
            self.0.lock().unwrap().push(session.clone());
            Ok(())
        }
        async fn insert_keeping_newest(
            &self,
            session: &StoredConsoleSession,
            max_live: u64,
        ) -> Result<u64, RepositoryError> {
            let mut sessions = self.0.lock().unwrap();
            let mut live: Vec<&StoredConsoleSession> = sessions
                .iter()
                .filter(|s| s.principal_id == session.principal_id && s.expires_at > session.created_at)
                .collect();
            live.sort_by_key(|s| (s.created_at, s.token_hash.clone()));
            let ended: Vec<String> = crate::ports::oldest_past_cap(&live, max_live)
                .iter()
                .map(|s| s.token_hash.clone())
                .collect();
            sessions.retain(|s| !ended.contains(&s.token_hash));
            sessions.push(session.clone());
            Ok(ended.len() as u64)
        }
        async fn find(&self, token_hash: &str) -> Result<Option<StoredConsoleSession>, RepositoryError> {
            Ok(self
                .0
                .lock()
                .unwrap()
                .iter()
                .find(|s| s.token_hash == token_hash)
                .cloned())
        }
        async fn delete(&self, token_hash: &str) -> Result<(), RepositoryError> {
            self.0.lock().unwrap().retain(|s| s.token_hash != token_hash);
            Ok(())
        }
        async fn delete_expired(&self, now: DateTime<Utc>) -> Result<(), RepositoryError> {
            self.0.lock().unwrap().retain(|s| s.expires_at > now);
            Ok(())
        }
        async fn delete_of_principal(&self, principal_id: &str) -> Result<(), RepositoryError> {
            self.0.lock().unwrap().retain(|s| s.principal_id != principal_id);
            Ok(())
        }
    }

    struct World {
        fakes: OperatorFakes,
        store: Arc<MemorySessions>,
        sessions: ConsoleSessions,
    }

    fn world() -> World {
        let fakes = OperatorFakes::new();
        let keys = fakes.connector_key_service();
        let auth = AuthService::new(
            AuthMode::Strict,
            vec![Arc::new(keys)],
            Arc::new(InMemoryAgentStore::default()),
            fakes.clock.clone(),
            fakes.ids.clone(),
        );
        let store = Arc::new(MemorySessions::default());
        let sessions = ConsoleSessions::new(store.clone(), auth, fakes.clock.clone(), fakes.ids.clone());
        World { fakes, store, sessions }
    }

    async fn issued_key(w: &World) -> (String, String) {
        let issued = w
            .fakes
            .connector_key_service()
            .issue(IssueConnectorKey {
                caller_user_id: "ada".into(),
                name: Some("laptop".into()),
                app_id: None,
                expires_at: None,
            })
            .await
            .unwrap();
        (issued.summary.id.clone(), issued.plaintext_key.expose().to_owned())
    }

    #[tokio::test]
    async fn a_session_acts_for_its_key_owner_and_stores_no_secret() {
        let w = world();
        let (_, key) = issued_key(&w).await;
        let opened = w.sessions.sign_in_with_key(&key).await.unwrap();
        let resumed = w.sessions.resume(&opened.cookie_secret).await.unwrap();
        assert_eq!(resumed.caller.caller.principal_id, "ada");
        assert_eq!(resumed.csrf_token, opened.csrf_token);
        let stored = w.store.0.lock().unwrap().clone();
        assert_eq!(stored.len(), 1);
        assert_ne!(stored[0].token_hash, opened.cookie_secret, "only the hash is stored");
    }

    #[tokio::test]
    async fn a_session_ends_at_its_expiry_and_is_then_forgotten() {
        let w = world();
        let (_, key) = issued_key(&w).await;
        let opened = w.sessions.sign_in_with_key(&key).await.unwrap();
        w.fakes
            .clock
            .advance(TimeDelta::hours(CONSOLE_SESSION_HOURS) - TimeDelta::seconds(1));
        assert!(w.sessions.resume(&opened.cookie_secret).await.is_ok());
        w.fakes.clock.advance(TimeDelta::seconds(1));
        assert!(matches!(
            w.sessions.resume(&opened.cookie_secret).await,
            Err(ConsoleError::SignedOut)
        ));
        assert!(w.store.0.lock().unwrap().is_empty(), "the expired row is deleted");
    }

    #[tokio::test]
    async fn the_sweep_forgets_expired_sessions_and_keeps_live_ones() {
        let w = world();
        let (_, key) = issued_key(&w).await;
        let old = w.sessions.sign_in_with_key(&key).await.unwrap();
        w.fakes.clock.advance(TimeDelta::hours(1));
        let young = w.sessions.sign_in_with_key(&key).await.unwrap();
        w.fakes
            .clock
            .advance(TimeDelta::hours(CONSOLE_SESSION_HOURS) - TimeDelta::minutes(30));
        w.sessions.sweep_expired().await.unwrap();
        let kept: Vec<String> = w.store.0.lock().unwrap().iter().map(|s| s.token_hash.clone()).collect();
        assert_eq!(kept, vec![sha256_hex(young.cookie_secret.as_bytes())]);
        assert!(matches!(
            w.sessions.resume(&old.cookie_secret).await,
            Err(ConsoleError::SignedOut)
        ));
        assert!(w.sessions.resume(&young.cookie_secret).await.is_ok());
    }

    /// Hosted `console_sessions_per_account`: a sign-in past the cap ends the principal's
    /// oldest session, as signing out does; another principal's sessions are not counted.
    #[tokio::test]
    async fn a_sign_in_past_the_cap_ends_the_oldest_session() {
        let w = world();
        let sessions = w.sessions.clone().with_sessions_per_account(2);
        let (_, key) = issued_key(&w).await;
        let mut opened = Vec::new();
        for _ in 0..3 {
            w.fakes.clock.advance(TimeDelta::seconds(1));
            opened.push(sessions.sign_in_with_key(&key).await.unwrap());
        }
        let theirs = sessions
            .open(Identity {
                principal_id: "grace".into(),
                locked_app: None,
                key_id: None,
            })
            .await
            .unwrap();
        assert!(matches!(
            sessions.resume(&opened[0].cookie_secret).await,
            Err(ConsoleError::SignedOut)
        ));
        for kept in opened[1..].iter().chain([&theirs]) {
            assert!(sessions.resume(&kept.cookie_secret).await.is_ok());
        }
        assert_eq!(w.store.0.lock().unwrap().len(), 3, "the ended row is deleted");
    }

    #[tokio::test]
    async fn account_sign_in_needs_hosted_accounts() {
        let w = world();
        let attempt = SignIn {
            email: "ada@example.com".into(),
            password: "correct horse battery".into(),
            client_address: None,
            sign_up: false,
        };
        assert!(!w.sessions.has_accounts());
        assert!(matches!(
            w.sessions.sign_in_with_account(attempt).await,
            Err(ConsoleError::AccountsUnavailable)
        ));
    }

    #[tokio::test]
    async fn revoking_the_key_or_signing_out_ends_the_session() {
        let w = world();
        let (key_id, key) = issued_key(&w).await;
        let first = w.sessions.sign_in_with_key(&key).await.unwrap();
        let second = w.sessions.sign_in_with_key(&key).await.unwrap();
        w.sessions.close(&second.cookie_secret).await.unwrap();
        assert!(matches!(
            w.sessions.resume(&second.cookie_secret).await,
            Err(ConsoleError::SignedOut)
        ));
        assert!(w.sessions.resume(&first.cookie_secret).await.is_ok());
        w.fakes
            .connector_key_service()
            .revoke(RevokeConnectorKey {
                caller_user_id: "ada".into(),
                caller_locked_app: None,
                key_id,
            })
            .await
            .unwrap();
        assert!(matches!(
            w.sessions.resume(&first.cookie_secret).await,
            Err(ConsoleError::SignedOut)
        ));
        assert!(matches!(
            w.sessions.sign_in_with_key(&key).await,
            Err(ConsoleError::SignedOut)
        ));
    }
}
