//! Connector keys: long-lived `svc_user_*` bearer secrets a user issues for their agents.
//!
//! The plaintext is shown once, at issue; only its sha256 hex and a short display prefix are kept.
//! A key is active until revoked (revoking twice is idempotent, the row is kept) and stops
//! authenticating once revoked or past its optional `expiresAt`.

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Every plaintext key starts with this, so leaked keys are easy to recognise and scan for.
pub const PLAINTEXT_PREFIX: &str = "svc_user_";
/// Length of `apiKeyPrefix`: the first 8 characters of the random part, after `svc_user_`.
/// (The first 8 characters of the whole plaintext would be `svc_user` for every key.)
pub const API_KEY_PREFIX_CHARS: usize = 8;
/// The random part must be at least this long: 32 base62 characters carry about 190 bits.
pub const SECRET_MIN_CHARS: usize = 32;
/// Longest key name, in characters.
pub const KEY_NAME_MAX_CHARS: usize = 120;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ConnectorKeyStatus {
    Active,
    Revoked,
}

impl ConnectorKeyStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Active => "active",
            Self::Revoked => "revoked",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "active" => Some(Self::Active),
            "revoked" => Some(Self::Revoked),
            _ => None,
        }
    }
}

/// A key name: 1 to 120 characters once surrounding whitespace is trimmed, no control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct KeyName(String);

impl KeyName {
    pub fn parse(raw: &str) -> Result<Self, ConnectorKeyError> {
        crate::name::parse_name(raw, KEY_NAME_MAX_CHARS)
            .map(Self)
            .map_err(ConnectorKeyError::InvalidName)
    }

    /// Rebuilds a name read back from storage, where it was validated on the way in.
    pub fn from_stored(value: String) -> Self {
        Self(value)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The one-time plaintext of a key. Its `Debug` hides the secret so it never reaches a log.
#[derive(Clone, PartialEq, Eq)]
pub struct PlaintextKey(String);

impl PlaintextKey {
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for PlaintextKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("PlaintextKey(***)")
    }
}

/// The stored form of a plaintext key: lowercase sha256 hex.
pub fn hash_key(plaintext: &str) -> String {
    hex::encode(Sha256::digest(plaintext.as_bytes()))
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorKey {
    pub id: String,
    pub owner_user_id: String,
    /// Locks the key to one app; `None` makes a universal key.
    pub app_id: Option<String>,
    pub name: Option<KeyName>,
    pub api_key_prefix: String,
    pub key_hash: String,
    pub status: ConnectorKeyStatus,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
    pub expires_at: Option<DateTime<Utc>>,
}

/// The metadata a key's owner may see: never the plaintext, never the hash.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ConnectorKeySummary {
    pub id: String,
    pub api_key_prefix: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<KeyName>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app_id: Option<String>,
    pub status: ConnectorKeyStatus,
    pub created_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<DateTime<Utc>>,
}

/// What issuing a key needs; `id` and the random `secret` come from the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConnectorKeyDraft {
    pub id: String,
    pub owner_user_id: String,
    pub app_id: Option<String>,
    pub name: Option<String>,
    pub expires_at: Option<DateTime<Utc>>,
    /// The random part of the plaintext: at least 32 ASCII letters and digits.
    pub secret: String,
}

/// How a revoke ended; both are successes for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyRevokeOutcome {
    Revoked,
    AlreadyRevoked,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ConnectorKeyError {
    #[error("key name {0}")]
    InvalidName(crate::name::NameError),
    #[error("key secret must be at least {SECRET_MIN_CHARS} ASCII letters and digits")]
    WeakSecret,
    /// The key exists but belongs to another user.
    #[error("the key belongs to another user")]
    AccessDenied,
    #[error("no such key")]
    NotFound,
}

impl ConnectorKeyError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidName(_) => "invalid_key_name",
            Self::WeakSecret => "weak_key_secret",
            Self::AccessDenied => "connector_key_access_denied",
            Self::NotFound => "connector_key_not_found",
        }
    }
}

impl ConnectorKey {
    /// (none) -> active. Returns the key to store and the plaintext to reveal once.
    pub fn issue(
        draft: ConnectorKeyDraft,
        now: DateTime<Utc>,
    ) -> Result<(ConnectorKey, PlaintextKey), ConnectorKeyError> {
        let name = draft.name.as_deref().map(KeyName::parse).transpose()?;
        let secret = draft.secret;
        if secret.len() < SECRET_MIN_CHARS || !secret.chars().all(|c| c.is_ascii_alphanumeric()) {
            return Err(ConnectorKeyError::WeakSecret);
        }
        let plaintext = format!("{PLAINTEXT_PREFIX}{secret}");
        let key = ConnectorKey {
            id: draft.id,
            owner_user_id: draft.owner_user_id,
            app_id: draft.app_id,
            name,
            api_key_prefix: secret[..API_KEY_PREFIX_CHARS].to_owned(),
            key_hash: hash_key(&plaintext),
            status: ConnectorKeyStatus::Active,
            created_at: now,
            last_used_at: None,
            expires_at: draft.expires_at,
        };
        Ok((key, PlaintextKey(plaintext)))
    }

    /// active -> revoked; revoked -> revoked (`alreadyRevoked`). The row is kept.
    pub fn revoke(&self) -> (ConnectorKey, KeyRevokeOutcome) {
        let outcome = match self.status {
            ConnectorKeyStatus::Active => KeyRevokeOutcome::Revoked,
            ConnectorKeyStatus::Revoked => KeyRevokeOutcome::AlreadyRevoked,
        };
        (
            ConnectorKey {
                status: ConnectorKeyStatus::Revoked,
                ..self.clone()
            },
            outcome,
        )
    }

    /// Whether a request bearing this key's plaintext is let in at `now`: only while active and
    /// before `expires_at`, whatever the hash says.
    pub fn authenticates(&self, now: DateTime<Utc>) -> bool {
        self.status == ConnectorKeyStatus::Active && self.expires_at.is_none_or(|expires_at| now < expires_at)
    }

    /// Only the owner may manage a key.
    pub fn ensure_owned_by(&self, user_id: &str) -> Result<(), ConnectorKeyError> {
        if self.owner_user_id == user_id {
            Ok(())
        } else {
            Err(ConnectorKeyError::AccessDenied)
        }
    }

    /// Whether a caller whose own key is locked to `locked_app` sees this key: a locked caller
    /// sees only the keys locked to its app; a universal one (`None`) sees all its owner's.
    pub fn within_app(&self, locked_app: Option<&str>) -> bool {
        locked_app.is_none_or(|app| self.app_id.as_deref() == Some(app))
    }

    /// Whether a caller may manage this key: the owner, and when locked to an app only for the
    /// keys of that app (another of the owner's keys answers like a missing one).
    pub fn ensure_reachable(&self, user_id: &str, locked_app: Option<&str>) -> Result<(), ConnectorKeyError> {
        self.ensure_owned_by(user_id)?;
        if self.within_app(locked_app) {
            Ok(())
        } else {
            Err(ConnectorKeyError::NotFound)
        }
    }

    pub fn summary(&self) -> ConnectorKeySummary {
        ConnectorKeySummary {
            id: self.id.clone(),
            api_key_prefix: self.api_key_prefix.clone(),
            name: self.name.clone(),
            app_id: self.app_id.clone(),
            status: self.status,
            created_at: self.created_at,
            last_used_at: self.last_used_at,
            expires_at: self.expires_at,
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, TimeZone};

    use super::*;

    const SECRET: &str = "AbCdEfGh0123456789abcdefghijklmnopqrstuv";

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 2, 1, 0, 0, 0).unwrap()
    }

    fn draft() -> ConnectorKeyDraft {
        ConnectorKeyDraft {
            id: "key1".into(),
            owner_user_id: "u1".into(),
            app_id: None,
            name: Some("laptop".into()),
            expires_at: None,
            secret: SECRET.into(),
        }
    }

    fn active() -> ConnectorKey {
        ConnectorKey::issue(draft(), now()).unwrap().0
    }

    #[test]
    fn issuing_reveals_the_plaintext_once_and_stores_its_hash() {
        let (key, plaintext) = ConnectorKey::issue(draft(), now()).unwrap();
        assert_eq!(plaintext.expose(), format!("svc_user_{SECRET}"));
        assert_eq!(key.status, ConnectorKeyStatus::Active);
        assert_eq!(key.api_key_prefix, "AbCdEfGh");
        assert_eq!(key.key_hash, hash_key(plaintext.expose()));
        assert_eq!(key.key_hash.len(), 64);
        assert!(!format!("{plaintext:?}{key:?}").contains(SECRET));
        assert_eq!(key.name.as_ref().map(KeyName::as_str), Some("laptop"));
    }

    #[test]
    fn issuing_validates_name_and_secret() {
        let rows: [(Option<String>, &str, Result<(), &str>); 6] = [
            (None, SECRET, Ok(())),
            (Some("x".repeat(120)), SECRET, Ok(())),
            (Some("x".repeat(121)), SECRET, Err("invalid_key_name")),
            (Some("  ".into()), SECRET, Err("invalid_key_name")),
            (None, &SECRET[..31], Err("weak_key_secret")),
            (None, "AbCdEfGh0123456789abcdefghijklm-", Err("weak_key_secret")),
        ];
        for (name, secret, expected) in rows {
            let result = ConnectorKey::issue(
                ConnectorKeyDraft {
                    name: name.clone(),
                    secret: secret.into(),
                    ..draft()
                },
                now(),
            );
            assert_eq!(result.map(|_| ()).map_err(|e| e.code()), expected, "{name:?} {secret}");
        }
    }

    #[test]
    fn revoking_follows_the_table() {
        let revoked = ConnectorKey {
            status: ConnectorKeyStatus::Revoked,
            ..active()
        };
        let rows = [
            (active(), KeyRevokeOutcome::Revoked),
            (revoked.clone(), KeyRevokeOutcome::AlreadyRevoked),
        ];
        for (key, outcome) in rows {
            let (next, got) = key.revoke();
            assert_eq!(got, outcome);
            assert_eq!(next.status, ConnectorKeyStatus::Revoked);
            assert_eq!(next.key_hash, key.key_hash, "the row is kept");
        }
    }

    #[test]
    fn authentication_needs_an_active_unexpired_key() {
        let expiring = ConnectorKey {
            expires_at: Some(now() + TimeDelta::hours(1)),
            ..active()
        };
        let rows = [
            (active(), now() + TimeDelta::days(3650), true),
            (expiring.clone(), now(), true),
            (expiring.clone(), now() + TimeDelta::hours(1), false),
            (
                ConnectorKey {
                    expires_at: Some(now() - TimeDelta::seconds(1)),
                    ..active()
                },
                now(),
                false,
            ),
            (active().revoke().0, now(), false),
        ];
        for (key, at, expected) in rows {
            assert_eq!(
                key.authenticates(at),
                expected,
                "{:?} expires {:?} at {at}",
                key.status,
                key.expires_at
            );
        }
    }

    #[test]
    fn only_the_owner_manages_a_key() {
        assert_eq!(active().ensure_owned_by("u1"), Ok(()));
        let locked = ConnectorKey {
            app_id: Some("shop".into()),
            ..active()
        };
        assert_eq!(locked.ensure_reachable("u1", Some("shop")), Ok(()));
        assert_eq!(locked.ensure_reachable("u1", None), Ok(()));
        assert_eq!(
            locked.ensure_reachable("u1", Some("other")).unwrap_err().code(),
            "connector_key_not_found"
        );
        assert_eq!(
            active().ensure_reachable("u1", Some("shop")).unwrap_err().code(),
            "connector_key_not_found"
        );
        assert_eq!(
            locked.ensure_reachable("u2", Some("shop")).unwrap_err().code(),
            "connector_key_access_denied"
        );
        assert_eq!(
            active().ensure_owned_by("u2").unwrap_err().code(),
            "connector_key_access_denied"
        );
    }

    #[test]
    fn the_summary_never_carries_the_hash() {
        let wire = serde_json::to_value(active().summary()).unwrap();
        assert_eq!(wire["apiKeyPrefix"], "AbCdEfGh");
        assert_eq!(wire["status"], "active");
        assert_eq!(wire["name"], "laptop");
        assert!(wire.get("keyHash").is_none());
        assert!(wire.get("appId").is_none());
        assert!(!wire.to_string().contains(&active().key_hash));
    }
}
