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

/// A source of bearer keys, looked up by the sha256 hex of the presented secret.
#[async_trait::async_trait]
pub trait KeyStore: Send + Sync {
    async fn find_by_hash(&self, sha256_hex: &str) -> Result<Option<KeyOwner>, RepositoryError>;
}
