//! Signing in (and signing up, when `hosted.signup = open`) with an email and a password.

use svc_domain::account::{
    self, Account, RESET_PER_ACCOUNT, RESET_PER_ADDRESS, SIGN_IN_PER_ACCOUNT, SIGN_IN_PER_ADDRESS, SIGN_IN_WINDOW,
    password,
};

use super::{AccountService, AccountServiceError};

/// Quota names of the two sign-in budgets (`rate_windows.quota`, the `rate_limit_hit` log line).
pub const ACCOUNT_QUOTA: &str = "sign-in-account";
pub const ADDRESS_QUOTA: &str = "sign-in-address";
/// Quota names of the two password-reset budgets.
pub const RESET_ACCOUNT_QUOTA: &str = "reset-account";
pub const RESET_ADDRESS_QUOTA: &str = "reset-address";

/// The two budgets an attempt is counted against: its client address's, then its account's.
pub(super) struct Budgets {
    address: (&'static str, u32),
    account: (&'static str, u32),
}

/// Signing in (and the invite page's sign-in).
pub(super) const SIGN_IN: Budgets = Budgets {
    address: (ADDRESS_QUOTA, SIGN_IN_PER_ADDRESS),
    account: (ACCOUNT_QUOTA, SIGN_IN_PER_ACCOUNT),
};

/// Asking for a password-reset link: budgets of their own (`RESET_PER_ACCOUNT`).
pub(super) const RESET: Budgets = Budgets {
    address: (RESET_ADDRESS_QUOTA, RESET_PER_ADDRESS),
    account: (RESET_ACCOUNT_QUOTA, RESET_PER_ACCOUNT),
};

/// One attempt from the sign-in form.
#[derive(Debug, Clone)]
pub struct SignIn {
    pub email: String,
    pub password: String,
    /// The client's address as the rate limit keys it (`None`: not limited per address).
    pub client_address: Option<String>,
    /// The person asked to create the account (honoured only when sign-up is open).
    pub sign_up: bool,
}

#[derive(Debug, Clone)]
pub struct SignedIn {
    pub account: Account,
    /// This was the account's first sign-in (true once, on one replica).
    pub first_sign_in: bool,
    /// The account was created by this attempt.
    pub created: bool,
}

/// Characters of a typed sign-in name that is no address kept as its rate-limit key (an
/// address is at most 254).
const TYPED_KEY_MAX_CHARS: usize = 320;

impl AccountService {
    pub async fn sign_in(&self, attempt: SignIn) -> Result<SignedIn, AccountServiceError> {
        let email = account::parse_email(&attempt.email);
        // Counted on the key the person typed when it is no address, so garbage is limited too;
        // only its beginning, as the longest address could be (the field is a whole form body).
        let key = email.as_ref().map_or_else(
            |_| {
                let typed: String = attempt.email.trim().chars().take(TYPED_KEY_MAX_CHARS).collect();
                typed.to_ascii_lowercase()
            },
            account::email_key,
        );
        self.admit(&SIGN_IN, attempt.client_address.as_deref(), &key).await?;
        // A sign-up is refused, or its password judged, before the address is looked up: no
        // answer to one tells whether the address has an account.
        if attempt.sign_up {
            if !self.signup.allows_self_signup() {
                return Err(AccountServiceError::SignupClosed);
            }
            password::check_new(&attempt.password)?;
        }
        let email = match email {
            Ok(email) => email,
            Err(e) if attempt.sign_up && self.signup.allows_self_signup() => return Err(e.into()),
            Err(_) => return self.refuse(&attempt.password).await,
        };
        let (account, created) = match self.accounts.find_by_email_key(&key).await? {
            Some(account) => {
                if !self.verify(&attempt.password, &account.password_hash).await? {
                    return Err(AccountServiceError::Refused);
                }
                (self.rehash_if_stale(account, &attempt.password).await?, false)
            }
            None if attempt.sign_up => {
                match self.insert(email, &attempt.password).await? {
                    Some(account) => {
                        self.send_verification(&account).await?;
                        (account, true)
                    }
                    // Taken by a racing sign-up meanwhile: sign in to it instead.
                    None => {
                        return Box::pin(self.sign_in(SignIn {
                            sign_up: false,
                            ..attempt
                        }))
                        .await;
                    }
                }
            }
            None => return self.refuse(&attempt.password).await,
        };
        let first_sign_in = self
            .accounts
            .mark_first_sign_in(&account.user_id, self.clock.now())
            .await?;
        Ok(SignedIn {
            account,
            first_sign_in,
            created,
        })
    }

    /// The answer for an unknown email, after the work a known one costs (or the same `Busy`
    /// a known one would get).
    async fn refuse(&self, password: &str) -> Result<SignedIn, AccountServiceError> {
        self.verify(password, &self.dummy_hash).await?;
        Err(AccountServiceError::Refused)
    }

    /// A hash made with older parameters is replaced while the password is at hand. When the
    /// hashing queue is full the stale hash stays (it is replaced at a later sign-in): the
    /// password was right, so the person signs in rather than being told the server is busy.
    pub(super) async fn rehash_if_stale(
        &self,
        mut account: Account,
        password: &str,
    ) -> Result<Account, AccountServiceError> {
        if password::needs_rehash(&account.password_hash) {
            let Ok(fresh) = self.hash(password).await else {
                return Ok(account);
            };
            self.accounts.set_password_hash(&account.user_id, &fresh).await?;
            account.password_hash = fresh;
        }
        Ok(account)
    }

    /// Counts the attempt against the address's budget, then the account's; a spent budget
    /// refuses before any password is hashed. Every attempt counts, right or wrong.
    pub(super) async fn admit(
        &self,
        budgets: &Budgets,
        address: Option<&str>,
        email_key: &str,
    ) -> Result<(), AccountServiceError> {
        let Some(windows) = &self.windows else {
            return Ok(());
        };
        let now = self.clock.now();
        let (address_quota, per_address) = budgets.address;
        let (account_quota, per_account) = budgets.account;
        let budgets = address.map(|a| (address_quota, a, per_address)).into_iter().chain([(
            account_quota,
            email_key,
            per_account,
        )]);
        for (quota, key, limit) in budgets {
            if let Some(retry_after) = windows.admit(quota, key, limit, SIGN_IN_WINDOW, now).await? {
                return Err(AccountServiceError::RateLimited { retry_after, quota });
            }
        }
        Ok(())
    }
}
