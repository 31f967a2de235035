/// What any repository adapter may answer besides success. Adapters turn driver errors into these
/// variants at the seam, so services never see SQL.
#[derive(Debug, thiserror::Error)]
pub enum RepositoryError {
    /// A uniqueness or compare-and-set conflict: another writer got there first.
    #[error("conflict: {0}")]
    Conflict(String),
    /// A stored value the domain refuses (a contract that is not a JSON object): the row is
    /// unreadable rather than silently replaced. Logged, never shown to callers.
    #[error("corrupt {column} column: {reason}")]
    Corrupt { column: &'static str, reason: String },
    /// The store failed; the cause is logged, never shown to callers.
    #[error("storage failure")]
    Unavailable(#[source] anyhow::Error),
}
