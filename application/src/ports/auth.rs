//! The bearer check that guards `/mcp` and `/ops`.

use super::RepositoryError;

/// Who a bearer key belongs to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyOwner {
    pub key_id: String,
    pub principal_id: String,
    /// A key locked to one app; `None` for a universal key scoped to the owner's default app.
    pub app_id: Option<String>,
}

/// A source of bearer keys. Stores keep only hashes; each hashes the presented secret itself.
#[async_trait::async_trait]
pub trait KeyStore: Send + Sync {
    /// The owner of `bearer` when it is a live key of this store.
    async fn find(&self, bearer: &str) -> Result<Option<KeyOwner>, RepositoryError>;
    /// Whether the key with this id may still authenticate: `Some(false)` once revoked or
    /// expired, `None` when this store does not hold it (a key no store holds is gone).
    async fn is_live(&self, key_id: &str) -> Result<Option<bool>, RepositoryError>;
}
