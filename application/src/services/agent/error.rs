use crate::ports::RepositoryError;
use svc_domain::contract::Violations;

/// Every way an agent tool can fail outside its result body. The transport maps each variant to
/// exactly one JSON-RPC code or error result.
#[derive(Debug, thiserror::Error)]
pub enum AgentError {
    /// Missing, foreign and expired-and-deleted sessions answer alike, so existence never leaks.
    #[error("session not found")]
    SessionNotFound,
    /// A tool argument broke a rule; `field` is a dotted path into the arguments.
    #[error("{field}: {rule}")]
    InvalidParams { field: String, rule: String },
    /// A contract or code argument is over a complexity budget (answered as invalid params that
    /// name the budget and the JSON path).
    #[error("{field}: {over}")]
    OverBudget {
        field: String,
        over: svc_domain::budget::BudgetExceeded,
    },
    /// Props, a patch result or a stream payload did not match the contract: the first
    /// violations, and whether more were left out.
    #[error("contract violation at {target}")]
    ContractViolation { target: String, violations: Violations },
    /// The render has no component source (a failed render, or a component no longer stored).
    #[error("no source: {0}")]
    NoSource(String),
    /// An explicit appId differs from the caller's app.
    #[error("app access denied")]
    AppAccessDenied,
    /// The generation queue is saturated.
    #[error("generation queue overloaded")]
    Overloaded { retry_after_seconds: u64 },
    /// No CPU slot for heavy work (schema compilation or validation, TSX compilation) freed in
    /// time.
    #[error(transparent)]
    Busy(#[from] crate::services::cpu_gate::CpuBusy),
    #[error("internal error")]
    Internal(#[source] anyhow::Error),
}

impl AgentError {
    pub fn invalid(field: impl Into<String>, rule: impl Into<String>) -> Self {
        Self::InvalidParams {
            field: field.into(),
            rule: rule.into(),
        }
    }
}

impl From<RepositoryError> for AgentError {
    fn from(e: RepositoryError) -> Self {
        Self::Internal(anyhow::Error::new(e))
    }
}
