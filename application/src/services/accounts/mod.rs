//! Hosted accounts: creating them (the operator's `svc users create`, or the person on the
//! sign-in page when sign-up is open) and signing in.
//!
//! A failed sign-in never says whether the email exists: an unknown email and a wrong password
//! get the same error after the same work (a password is hashed against a dummy hash).

mod external;
mod hashing;
mod invites;
mod links;
mod reset_sign_out;
mod sign_in;

use std::sync::Arc;

use chrono::TimeDelta;
use svc_domain::account::password::{self, PasswordRuleError, SALT_BYTES};
use svc_domain::account::{self, Account, AccountError, SignupMode};
use svc_domain::invite::EmailAddress;
use tokio::sync::Semaphore;
use tokio_util::task::TaskTracker;

use crate::ports::accounts::AccountRepository;
use crate::ports::external_identity::ExternalIdentityRepository;
use crate::ports::rate_windows::SharedWindows;
use crate::ports::{Clock, Ids, RepositoryError};
use crate::services::cpu_gate::CpuBusy;

pub use invites::{InviteAcceptError, InviteAccepted, InviteSignup, OpenedInvite};
pub use links::{AccountLinks, RESET_PATH, VERIFY_PATH};
pub use reset_sign_out::ResetSignOut;
pub use sign_in::{ACCOUNT_QUOTA, ADDRESS_QUOTA, RESET_ACCOUNT_QUOTA, RESET_ADDRESS_QUOTA, SignIn, SignedIn};

/// Random base62 characters of a generated password: about 143 bits.
pub const GENERATED_PASSWORD_CHARS: usize = 24;
/// Base62 characters of a user id after `usr_`.
const USER_ID_CHARS: usize = 20;

#[derive(Debug, thiserror::Error)]
pub enum AccountServiceError {
    #[error(transparent)]
    Rule(#[from] AccountError),
    /// Only `svc users create` makes accounts (`hosted.signup` is not `open`).
    #[error("sign-up is closed on this server: ask its operator for an account")]
    SignupClosed,
    /// `svc users create` for an email that has an account.
    #[error("an account with this email exists")]
    EmailTaken,
    /// The email or the password is wrong (which one is never said).
    #[error("the email or password is not right")]
    Refused,
    /// Too many sign-in attempts for this account or from this address.
    #[error("too many sign-in attempts; try again in {} seconds", .retry_after.num_seconds())]
    RateLimited {
        retry_after: TimeDelta,
        quota: &'static str,
    },
    /// A verification or reset link that is unknown, used or expired.
    #[error("this link has expired or was already used")]
    LinkInvalid,
    /// An external identity with no account, and none may be made for it (sign-up is not open,
    /// and no account has the email the provider verified).
    #[error(
        "no account on this server belongs to this identity, and sign-up is closed: ask the operator for an account"
    )]
    ExternalIdentityUnknown,
    /// Open sign-up, but the provider shared no email address, or one it did not verify, to make
    /// the account with.
    #[error("the identity provider did not share a verified email address, which an account needs")]
    ExternalEmailMissing,
    /// An account has the identity's email, but the provider or the account never verified that
    /// address: not linked.
    #[error(
        "an account with this email exists but its address is not verified (by the identity provider, or by the account's own verification link); sign in with its password and verify the address first"
    )]
    ExternalEmailTaken,
    /// Every hashing slot is taken and the queue behind them is full (`hashing.rs`).
    #[error(transparent)]
    Busy(#[from] CpuBusy),
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
}

impl From<PasswordRuleError> for AccountServiceError {
    fn from(e: PasswordRuleError) -> Self {
        Self::Rule(AccountError::Password(e))
    }
}

/// An account just created by the operator, with the password when it was generated.
#[derive(Debug)]
pub struct CreatedAccount {
    pub account: Account,
    pub generated_password: Option<String>,
}

#[derive(Clone)]
pub struct AccountService {
    accounts: Arc<dyn AccountRepository>,
    windows: Option<Arc<dyn SharedWindows>>,
    /// Verification and reset mail; `None`: no mail is sent.
    links: Option<AccountLinks>,
    /// Identities of external OpenID Connect providers linked to accounts.
    identities: Option<Arc<dyn ExternalIdentityRepository>>,
    /// What a password reset ends besides the old password; `None`: nothing else.
    reset_sign_out: Option<ResetSignOut>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
    signup: SignupMode,
    /// A hash of no one's password, verified for unknown emails so they cost the same work.
    dummy_hash: Arc<str>,
    /// argon2id, a bounded number at a time in kept working memory (`hashing.rs`).
    hashing: hashing::Hashing,
    /// Work finished after its request was answered (a reset request's lookup and mail,
    /// `links.rs`), awaited at shutdown before the database closes.
    background: TaskTracker,
    /// Places for reset requests' background work: at most [`links::RESET_LOOKUPS_IN_FLIGHT`]
    /// run at once, and a request past them is dropped (`links.rs` says why that is safe).
    reset_lookups: Arc<Semaphore>,
}

impl AccountService {
    pub fn new(accounts: Arc<dyn AccountRepository>, clock: Arc<dyn Clock>, ids: Arc<dyn Ids>) -> Self {
        let dummy_hash = password::hash(&ids.base62(GENERATED_PASSWORD_CHARS), &salt(ids.as_ref())).into();
        Self {
            accounts,
            windows: None,
            links: None,
            identities: None,
            reset_sign_out: None,
            clock,
            ids,
            signup: SignupMode::Closed,
            dummy_hash,
            hashing: hashing::Hashing::new(),
            background: TaskTracker::new(),
            reset_lookups: Arc::new(Semaphore::new(links::RESET_LOOKUPS_IN_FLIGHT)),
        }
    }

    /// Waits until the work begun in the background so far is done: at shutdown, after the
    /// last requests were answered and before the database closes.
    pub async fn background_work_finished(&self) {
        self.background.close();
        self.background.wait().await;
        self.background.reopen();
    }

    pub fn with_signup(self, signup: SignupMode) -> Self {
        Self { signup, ..self }
    }

    /// Counts sign-in attempts in `windows` (shared by every replica).
    pub fn limited_by(self, windows: Arc<dyn SharedWindows>) -> Self {
        Self {
            windows: Some(windows),
            ..self
        }
    }

    /// Sends verification links on sign-up and serves password resets through `links`.
    pub fn mailing(self, links: AccountLinks) -> Self {
        Self {
            links: Some(links),
            ..self
        }
    }

    /// Signs in identities of external providers, linked in `identities`.
    pub fn with_identities(self, identities: Arc<dyn ExternalIdentityRepository>) -> Self {
        Self {
            identities: Some(identities),
            ..self
        }
    }

    /// Ends the account's sessions (and, for an address never verified, its keys) when its
    /// password is reset: see [`ResetSignOut`].
    pub fn signing_out_on_reset(self, sign_out: ResetSignOut) -> Self {
        Self {
            reset_sign_out: Some(sign_out),
            ..self
        }
    }

    pub fn signup_mode(&self) -> SignupMode {
        self.signup
    }

    /// `svc users create`: an account for `email`, with `password` or a generated one; its
    /// verification mail is queued.
    pub async fn create(&self, email: &str, password: Option<&str>) -> Result<CreatedAccount, AccountServiceError> {
        let created = self.create_unverified(email, password).await?;
        self.send_verification(&created.account).await?;
        Ok(created)
    }

    /// `svc users create --verified`: the operator vouches for the address, as if its
    /// verification link had been followed, so no mail is sent and an identity provider that
    /// verified the same address links to the account at once.
    pub async fn create_verified(
        &self,
        email: &str,
        password: Option<&str>,
    ) -> Result<CreatedAccount, AccountServiceError> {
        let mut created = self.create_unverified(email, password).await?;
        let now = self.clock.now();
        self.accounts.mark_email_verified(&created.account.user_id, now).await?;
        created.account.email_verified_at = Some(now);
        Ok(created)
    }

    async fn create_unverified(
        &self,
        email: &str,
        password: Option<&str>,
    ) -> Result<CreatedAccount, AccountServiceError> {
        let email = account::parse_email(email)?;
        let (password, generated) = match password {
            Some(p) => (p.to_owned(), false),
            None => (self.ids.base62(GENERATED_PASSWORD_CHARS), true),
        };
        let account = self
            .insert(email, &password)
            .await?
            .ok_or(AccountServiceError::EmailTaken)?;
        Ok(CreatedAccount {
            account,
            generated_password: generated.then_some(password),
        })
    }

    /// The account of `email`, if any (the operator's look-up: `svc keys mint --user`).
    pub async fn find_by_email(&self, email: &str) -> Result<Option<Account>, AccountServiceError> {
        let email = account::parse_email(email)?;
        Ok(self.accounts.find_by_email_key(&account::email_key(&email)).await?)
    }

    /// Stores a new account; `None` when the email is taken.
    async fn insert(&self, email: EmailAddress, password: &str) -> Result<Option<Account>, AccountServiceError> {
        password::check_new(password)?;
        let hash = self.hash(password).await?;
        let user_id = format!("usr_{}", self.ids.base62(USER_ID_CHARS));
        let account = Account::new(user_id, email, hash, self.clock.now());
        Ok(self.accounts.insert(&account).await?.then_some(account))
    }

    /// argon2id off the async workers, a bounded number at a time behind a bounded queue
    /// (`hashing.rs`); refused with [`AccountServiceError::Busy`] past the queue.
    async fn hash(&self, password: &str) -> Result<String, CpuBusy> {
        let salt = salt(self.ids.as_ref());
        self.hashing.hash(password.to_owned(), salt).await
    }

    async fn verify(&self, password: &str, stored: &str) -> Result<bool, CpuBusy> {
        self.hashing.verify(password.to_owned(), stored.to_owned()).await
    }
}

fn salt(ids: &dyn Ids) -> [u8; SALT_BYTES] {
    let drawn = ids.base62(SALT_BYTES);
    let mut salt = [0u8; SALT_BYTES];
    salt.copy_from_slice(&drawn.as_bytes()[..SALT_BYTES]);
    salt
}

#[cfg(all(test, feature = "testing"))]
mod reset_request_tests;
#[cfg(all(test, feature = "testing"))]
mod tests;
