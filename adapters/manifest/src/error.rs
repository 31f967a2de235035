/// Why a manifest is refused: one message naming the path inside the file and the rule (the
/// caller names the file).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct ManifestError(pub String);
