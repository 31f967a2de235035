//! Provider keys: set (setting again rotates), list (never the key, only `lastFour`), remove,
//! and opened for a generation by their owner. Sealed under the deployment's master keyring
//! (`svc_domain::provider_key`); `rotate` re-seals every key under the keyring's current key.

use std::sync::Arc;

use chrono::{DateTime, Utc};
use serde::Serialize;
use svc_domain::provider_key::{Keyring, Provider, ProviderKeyError, ProviderSecret, checked_label};
use svc_domain::wallet::Principal;

use crate::ports::generation::CallerKeys;
use crate::ports::hosted::{ProviderKeyRepository, StoredProviderKey};
use crate::ports::{Clock, Ids, RepositoryError};
use crate::services::operator::INTERNAL_ERROR_CODE;

/// Length of a seal's salt in base62 characters (about 131 bits).
const SALT_CHARACTERS: usize = 22;

/// `svc_ops_set_provider_key`.
#[derive(Clone)]
pub struct SetProviderKey {
    pub provider: String,
    pub plaintext_key: String,
    pub label: Option<String>,
}

/// Document 3's ProviderKeySummary: the key itself is never part of it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct ProviderKeySummary {
    pub provider: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub label: Option<String>,
    pub last_four: String,
    pub created_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_used_at: Option<DateTime<Utc>>,
}

impl From<&StoredProviderKey> for ProviderKeySummary {
    fn from(key: &StoredProviderKey) -> Self {
        Self {
            provider: key.provider.as_str(),
            label: key.label.clone(),
            last_four: key.last_four.clone(),
            created_at: key.created_at,
            last_used_at: key.last_used_at,
        }
    }
}

#[derive(Debug, thiserror::Error)]
pub enum ProviderKeyServiceError {
    #[error(transparent)]
    Key(#[from] ProviderKeyError),
    #[error("provider must be one of openai, anthropic, google, mistral")]
    UnknownProvider,
    #[error("storage failure")]
    Storage(#[from] RepositoryError),
}

impl ProviderKeyServiceError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::Key(error) => error.code(),
            Self::UnknownProvider => "invalid_provider",
            Self::Storage(_) => INTERNAL_ERROR_CODE,
        }
    }
}

/// What `svc hosted rotate-master-key` did.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Rotation {
    pub resealed: usize,
    /// Set again while the rotation ran: already under the current key.
    pub raced: usize,
}

#[derive(Clone)]
pub struct ProviderKeyService {
    keys: Arc<dyn ProviderKeyRepository>,
    keyring: Keyring,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
}

impl ProviderKeyService {
    pub fn new(
        keys: Arc<dyn ProviderKeyRepository>,
        keyring: Keyring,
        clock: Arc<dyn Clock>,
        ids: Arc<dyn Ids>,
    ) -> Self {
        Self {
            keys,
            keyring,
            clock,
            ids,
        }
    }

    pub async fn set(
        &self,
        owner: &Principal,
        command: SetProviderKey,
    ) -> Result<ProviderKeySummary, ProviderKeyServiceError> {
        let provider = Provider::parse(&command.provider).ok_or(ProviderKeyServiceError::UnknownProvider)?;
        let secret = ProviderSecret::parse(&command.plaintext_key)?;
        let label = checked_label(command.label.as_deref())?;
        let stored = StoredProviderKey {
            owner: owner.clone(),
            provider,
            label,
            last_four: secret.last_four(),
            sealed: self.keyring.seal(owner, provider, &secret, self.salt().as_bytes()),
            created_at: self.clock.now(),
            last_used_at: None,
        };
        self.keys.put(&stored).await?;
        Ok(ProviderKeySummary::from(&stored))
    }

    pub async fn list(&self, owner: &Principal) -> Result<Vec<ProviderKeySummary>, ProviderKeyServiceError> {
        let keys = self.keys.list(owner).await?;
        Ok(keys.iter().map(ProviderKeySummary::from).collect())
    }

    /// Whether a key was removed; removing a missing key answers `false`.
    pub async fn remove(&self, owner: &Principal, provider: &str) -> Result<(Provider, bool), ProviderKeyServiceError> {
        let provider = Provider::parse(provider).ok_or(ProviderKeyServiceError::UnknownProvider)?;
        Ok((provider, self.keys.delete(owner, provider).await?))
    }

    /// The owner's keys, opened, for one generation. A key that does not open (its master key is
    /// gone from the configuration) is left out, so the generation fails with no credentials,
    /// and the cause is logged for the operator.
    pub async fn caller_keys(&self, owner: &Principal) -> Result<CallerKeys, ProviderKeyServiceError> {
        let stored = self.keys.list(owner).await?;
        let mut opened = Vec::with_capacity(stored.len());
        for key in stored {
            match self.keyring.open(owner, key.provider, &key.sealed) {
                Ok(secret) => opened.push((key.provider.as_str().to_owned(), secret.expose().to_owned())),
                Err(error) => tracing::error!(
                    provider = key.provider.as_str(),
                    error = %error,
                    "a stored provider key does not open; check hosted.master_keys"
                ),
            }
        }
        Ok(CallerKeys::new(opened))
    }

    /// Records that a generation used the owner's key of `provider` (`lastUsedAt`).
    pub async fn touch(&self, owner: &Principal, provider: &str) -> Result<(), ProviderKeyServiceError> {
        if let Some(provider) = Provider::parse(provider) {
            self.keys.touch_last_used(owner, provider, self.clock.now()).await?;
        }
        Ok(())
    }

    /// Re-seals every key not under the keyring's current master key. A key whose master key is
    /// missing from the keyring stops the rotation with that error: nothing is lost, since rows
    /// already re-sealed open under the current key.
    pub async fn rotate(&self) -> Result<Rotation, ProviderKeyServiceError> {
        let mut rotation = Rotation::default();
        for key in self.keys.sealed_under_other_keys(self.keyring.current_id()).await? {
            let secret = self.keyring.open(&key.owner, key.provider, &key.sealed)?;
            let next = self
                .keyring
                .seal(&key.owner, key.provider, &secret, self.salt().as_bytes());
            if self.keys.reseal(&key.owner, key.provider, &key.sealed, &next).await? {
                rotation.resealed += 1;
            } else {
                rotation.raced += 1;
            }
        }
        Ok(rotation)
    }

    /// A fresh HKDF salt per seal, 22 base62 characters (131 random bits): the seal's nonce is
    /// fixed, so only the salt keeps two seals from sharing a key (ids are time-ordered UUIDs
    /// with fewer random bits, made for index locality, not for this).
    fn salt(&self) -> String {
        self.ids.base62(SALT_CHARACTERS)
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use svc_domain::provider_key::MasterKey;

    use super::*;
    use crate::testing::{InMemoryProviderKeys, ManualClock, SequentialIds};

    fn service(store: &Arc<InMemoryProviderKeys>, keys: &[(&str, u8)]) -> ProviderKeyService {
        let ring = Keyring::new(keys.iter().map(|(id, b)| MasterKey::new(*id, [*b; 32])).collect()).unwrap();
        ProviderKeyService::new(
            store.clone(),
            ring,
            Arc::new(ManualClock::default()),
            Arc::new(SequentialIds::default()),
        )
    }

    fn set(provider: &str, key: &str) -> SetProviderKey {
        SetProviderKey {
            provider: provider.into(),
            plaintext_key: key.into(),
            label: None,
        }
    }

    #[tokio::test]
    async fn keys_are_stored_sealed_summarised_and_opened_only_for_their_owner() {
        let store = Arc::new(InMemoryProviderKeys::default());
        let keys = service(&store, &[("k1", 1)]);
        let alice = Principal::user("alice");
        let summary = keys.set(&alice, set("openai", " sk-alice-1234 ")).await.unwrap();
        assert_eq!((summary.provider, summary.last_four.as_str()), ("openai", "1234"));
        let row = &store.rows()[0];
        assert!(!row.sealed.ciphertext.windows(8).any(|w| w == b"sk-alice"));
        assert_eq!(
            row.sealed.salt.len(),
            SALT_CHARACTERS,
            "a salt drawn for the seal, not an id"
        );
        keys.set(&Principal::user("carol"), set("openai", "sk-carol-1234"))
            .await
            .unwrap();
        let salts: Vec<Vec<u8>> = store.rows().iter().map(|row| row.sealed.salt.clone()).collect();
        assert_ne!(salts[0], salts[1], "every seal has its own salt");
        assert_eq!(
            keys.caller_keys(&alice).await.unwrap().get("openai"),
            Some("sk-alice-1234")
        );
        assert_eq!(
            keys.caller_keys(&Principal::user("bob")).await.unwrap().get("openai"),
            None
        );
        let rows = [
            (set("ollama", "k"), "invalid_provider"),
            (set("openai", "  "), "invalid_provider_key"),
        ];
        for (command, code) in rows {
            assert_eq!(keys.set(&alice, command).await.unwrap_err().code(), code);
        }
        assert!(keys.remove(&alice, "openai").await.unwrap().1);
        assert!(
            !keys.remove(&alice, "openai").await.unwrap().1,
            "removing twice is idempotent"
        );
    }

    #[tokio::test]
    async fn rotation_reseals_under_the_first_master_key() {
        let store = Arc::new(InMemoryProviderKeys::default());
        let owner = Principal::user("u");
        let org = Principal::org("o");
        let first = service(&store, &[("k1", 1)]);
        first.set(&owner, set("google", "g-key")).await.unwrap();
        first.set(&org, set("google", "org-key")).await.unwrap();
        let rotated = service(&store, &[("k2", 2), ("k1", 1)]);
        assert_eq!(
            rotated.rotate().await.unwrap(),
            Rotation { resealed: 2, raced: 0 },
            "org keys too"
        );
        assert!(store.rows().iter().all(|row| row.sealed.key_id == "k2"));
        let only_new = service(&store, &[("k2", 2)]);
        assert_eq!(only_new.caller_keys(&owner).await.unwrap().get("google"), Some("g-key"));
        assert_eq!(only_new.caller_keys(&org).await.unwrap().get("google"), Some("org-key"));
        // A key whose master key is gone does not open: the caller simply has no key.
        let unrelated = service(&store, &[("k3", 3)]);
        assert_eq!(unrelated.caller_keys(&owner).await.unwrap().get("google"), None);
        assert_eq!(unrelated.rotate().await.unwrap_err().code(), "provider_key_unsealable");
    }
}
