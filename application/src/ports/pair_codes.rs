//! The pair code in force, shared by every replica: a replica reads it, computes the next state
//! with the domain's rules, and writes it back only if no other replica wrote in between.

use svc_domain::pair_code::PairCode;

use super::RepositoryError;

/// A stored pair code and the version a replacement must name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StoredPairCode {
    pub code: PairCode,
    pub version: i64,
}

#[async_trait::async_trait]
pub trait PairCodeStore: Send + Sync {
    /// The code in force; `fresh` is stored first when there is none (the first replica wins).
    async fn load_or_issue(&self, fresh: PairCode) -> Result<StoredPairCode, RepositoryError>;
    /// Stores `next` as version `version + 1` if the stored version is still `version`; `false`
    /// when another writer got there first (the caller reloads and decides again).
    async fn replace(&self, version: i64, next: &PairCode) -> Result<bool, RepositoryError>;
}
