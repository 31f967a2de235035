//! Ports of the hosted plane: provider keys sealed at rest.

use chrono::{DateTime, Utc};
use svc_domain::provider_key::{Provider, SealedSecret};
use svc_domain::wallet::Principal;

use super::RepositoryError;

/// One stored provider key: never the plaintext, only its seal and its last four characters.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredProviderKey {
    pub owner: Principal,
    pub provider: Provider,
    pub label: Option<String>,
    pub last_four: String,
    pub sealed: SealedSecret,
    pub created_at: DateTime<Utc>,
    pub last_used_at: Option<DateTime<Utc>>,
}

#[async_trait::async_trait]
pub trait ProviderKeyRepository: Send + Sync {
    /// Stores the owner's key for its provider, replacing the one there (setting again rotates).
    async fn put(&self, key: &StoredProviderKey) -> Result<(), RepositoryError>;
    async fn get(&self, owner: &Principal, provider: Provider) -> Result<Option<StoredProviderKey>, RepositoryError>;
    /// The owner's keys in provider order.
    async fn list(&self, owner: &Principal) -> Result<Vec<StoredProviderKey>, RepositoryError>;
    /// Whether a key was there to delete.
    async fn delete(&self, owner: &Principal, provider: Provider) -> Result<bool, RepositoryError>;
    /// Records a generation that used the key; a missing key is ignored.
    async fn touch_last_used(
        &self,
        owner: &Principal,
        provider: Provider,
        at: DateTime<Utc>,
    ) -> Result<(), RepositoryError>;
    /// Every key not sealed under master key `key_id` (for `svc hosted rotate-master-key`).
    async fn sealed_under_other_keys(&self, key_id: &str) -> Result<Vec<StoredProviderKey>, RepositoryError>;
    /// Replaces `previous` with `next` only if the row still holds `previous` (a key set again
    /// meanwhile is left alone); whether it did.
    async fn reseal(
        &self,
        owner: &Principal,
        provider: Provider,
        previous: &SealedSecret,
        next: &SealedSecret,
    ) -> Result<bool, RepositoryError>;
}
