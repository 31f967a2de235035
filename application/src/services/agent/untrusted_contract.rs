//! Negotiating a contract an agent sent: the complexity budgets first, on the calling task (they
//! are linear and refuse what would be costly), then negotiation, which compiles every schema, on a
//! blocking thread through the CPU gate, so no async worker does CPU work on untrusted input and
//! a burst of drafts waits for (or is refused) a slot instead of taking every core. The validators
//! it compiled go to the schema cache, so the contract's checks do not compile them again.

use serde_json::Value;
use svc_domain::contract::{Negotiated, NegotiationError, check_contract_budgets, negotiate_keeping_validators};

use super::{AgentError, SchemaCache};
use crate::services::cpu_gate::{CpuGate, CpuWorkError};

/// Negotiates `draft` (the argument named `field`): over a budget is `OverBudget`; a draft that
/// cannot be agreed is the inner `Err`. An agreed draft's validators are kept in `schemas`.
pub(super) async fn negotiate_untrusted(
    cpu: &CpuGate,
    schemas: &SchemaCache,
    field: &str,
    draft: &Value,
) -> Result<Result<Negotiated, NegotiationError>, AgentError> {
    check_contract_budgets(draft).map_err(|over| AgentError::OverBudget {
        field: field.to_owned(),
        over,
    })?;
    let (draft, schemas) = (draft.clone(), schemas.clone());
    cpu.run(move || {
        let (agreed, compiled) = negotiate_keeping_validators(&draft)?;
        schemas.adopt(&agreed.contract, compiled);
        Ok(agreed)
    })
    .await
    .map_err(|refused| match refused {
        CpuWorkError::Busy(busy) => AgentError::Busy(busy),
        panicked => AgentError::Internal(anyhow::Error::new(panicked)),
    })
}
