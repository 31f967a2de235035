//! One-time account tokens: the secret of an email-verification or password-reset link.
//!
//! The link carries the token; the database keeps only its sha256, the purpose, the account and
//! an expiry. A token is used once: the first use consumes it.

use chrono::{DateTime, TimeDelta, Utc};

use crate::connector_key::hash_key;

/// Random base62 characters of a token: about 256 bits.
pub const TOKEN_CHARS: usize = 43;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenPurpose {
    VerifyEmail,
    ResetPassword,
}

impl TokenPurpose {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::VerifyEmail => "verify_email",
            Self::ResetPassword => "reset_password",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "verify_email" => Some(Self::VerifyEmail),
            "reset_password" => Some(Self::ResetPassword),
            _ => None,
        }
    }

    /// How long a link works: a day to verify an address, an hour to reset a password
    /// (OWASP Forgot Password Cheat Sheet: reset tokens expire quickly).
    pub fn lifetime(self) -> TimeDelta {
        match self {
            Self::VerifyEmail => TimeDelta::days(1),
            Self::ResetPassword => TimeDelta::hours(1),
        }
    }
}

/// The stored form of a token (lowercase sha256 hex), never the token.
pub fn token_hash(token: &str) -> String {
    hash_key(token)
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AccountToken {
    pub token_hash: String,
    pub user_id: String,
    pub purpose: TokenPurpose,
    pub expires_at: DateTime<Utc>,
}

impl AccountToken {
    pub fn issue(token: &str, user_id: &str, purpose: TokenPurpose, now: DateTime<Utc>) -> Self {
        Self {
            token_hash: token_hash(token),
            user_id: user_id.to_owned(),
            purpose,
            expires_at: now + purpose.lifetime(),
        }
    }

    pub fn is_live(&self, now: DateTime<Utc>) -> bool {
        now < self.expires_at
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_lives_for_its_purposes_lifetime_and_is_stored_hashed() {
        let now = DateTime::from_timestamp(1_800_000_000, 0).unwrap();
        for purpose in [TokenPurpose::VerifyEmail, TokenPurpose::ResetPassword] {
            let token = AccountToken::issue("secret-token", "u1", purpose, now);
            assert_ne!(token.token_hash, "secret-token");
            assert_eq!(token.token_hash, token_hash("secret-token"));
            assert!(token.is_live(now + purpose.lifetime() - TimeDelta::seconds(1)));
            assert!(!token.is_live(now + purpose.lifetime()));
            assert_eq!(TokenPurpose::parse(purpose.as_str()), Some(purpose));
        }
    }
}
