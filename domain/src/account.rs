//! Hosted accounts: a person who signs in with an email address and a password.
//!
//! The email is the login; it is matched without regard to case (`Account::email_key`), so
//! `Ada@Example.org` and `ada@example.org` are one account. The password is never kept: only its
//! argon2id hash in PHC form ([`password`]). An account's `user_id` is the principal its keys,
//! wallet and provider keys belong to.

pub mod password;
pub mod token;

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::invite::EmailAddress;

/// Sign-in attempts one account may receive per window, from anywhere (a password-guessing
/// budget: OWASP Authentication Cheat Sheet, "account lockout" as a throttle, not a lock).
pub const SIGN_IN_PER_ACCOUNT: u32 = 10;
/// Sign-in attempts one client address may make per window, whatever the accounts.
pub const SIGN_IN_PER_ADDRESS: u32 = 30;
/// The fixed window of both budgets (and of the reset budgets).
pub const SIGN_IN_WINDOW: chrono::TimeDelta = chrono::TimeDelta::minutes(15);
/// Password-reset requests for one account per window, from anywhere: a budget of its own, so
/// requests nobody asked for (each mails the owner) never spend the owner's sign-in attempts,
/// and a stranger's wrong guesses never stop the owner asking for a link.
pub const RESET_PER_ACCOUNT: u32 = 3;
/// Password-reset requests one client address may make per window, whatever the accounts.
pub const RESET_PER_ADDRESS: u32 = 10;

/// Who may create an account (`hosted.signup`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SignupMode {
    /// Only the operator creates accounts (`svc users create`).
    #[default]
    Closed,
    /// An org invite's acceptance creates or binds the account.
    Invite,
    /// Anyone may sign up on the consent page.
    Open,
}

impl SignupMode {
    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "closed" => Some(Self::Closed),
            "invite" => Some(Self::Invite),
            "open" => Some(Self::Open),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Closed => "closed",
            Self::Invite => "invite",
            Self::Open => "open",
        }
    }

    /// Whether a person may create their own account on the sign-in page.
    pub fn allows_self_signup(self) -> bool {
        self == Self::Open
    }

    /// Whether the person holding an org invite's link may create an account with it.
    pub fn allows_invite_signup(self) -> bool {
        self != Self::Closed
    }
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum AccountError {
    #[error("`{0}` is not an email address")]
    InvalidEmail(String),
    #[error(transparent)]
    Password(#[from] password::PasswordRuleError),
}

/// The key an email is looked up by: the whole address lowercased.
pub fn email_key(email: &EmailAddress) -> String {
    email.as_str().to_ascii_lowercase()
}

/// Parses an email typed by a person or an operator (surrounding whitespace ignored).
pub fn parse_email(raw: &str) -> Result<EmailAddress, AccountError> {
    EmailAddress::parse(raw.trim()).map_err(|_| AccountError::InvalidEmail(raw.trim().to_owned()))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Account {
    pub user_id: String,
    pub email: EmailAddress,
    /// The argon2id hash in PHC string form.
    pub password_hash: String,
    pub created_at: DateTime<Utc>,
    pub email_verified_at: Option<DateTime<Utc>>,
    /// Set by the first sign-in, once; the free credit hangs on it.
    pub first_sign_in_at: Option<DateTime<Utc>>,
}

impl Account {
    pub fn new(user_id: String, email: EmailAddress, password_hash: String, now: DateTime<Utc>) -> Self {
        Self {
            user_id,
            email,
            password_hash,
            created_at: now,
            email_verified_at: None,
            first_sign_in_at: None,
        }
    }

    pub fn email_key(&self) -> String {
        email_key(&self.email)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signup_modes_round_trip_and_only_open_lets_people_in() {
        for (text, mode, self_signup, invite_signup) in [
            ("closed", SignupMode::Closed, false, false),
            ("invite", SignupMode::Invite, false, true),
            ("open", SignupMode::Open, true, true),
        ] {
            assert_eq!(SignupMode::parse(text), Some(mode));
            assert_eq!(mode.as_str(), text);
            assert_eq!(mode.allows_self_signup(), self_signup);
            assert_eq!(mode.allows_invite_signup(), invite_signup);
        }
        assert_eq!(SignupMode::parse("Open"), None);
    }

    #[test]
    fn emails_are_matched_without_case() {
        let a = parse_email(" Ada@Example.org ").unwrap();
        let b = parse_email("ada@EXAMPLE.ORG").unwrap();
        assert_eq!(email_key(&a), email_key(&b));
        assert_eq!(a.as_str(), "Ada@example.org");
        assert!(matches!(
            parse_email("not an email"),
            Err(AccountError::InvalidEmail(_))
        ));
    }
}
