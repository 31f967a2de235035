//! The handshake's last reuse step: the operator's default blueprint for the contract
//! (`svc_ops_register_blueprint` / `_generate_blueprint` with `setAsOperatorDefault`, or
//! `svc_ops_update_blueprint` with `isOperatorDefault: true`).

use super::{AgentError, AgentService, Caller};
use crate::ports::agent::CacheMatch;
use crate::ports::blueprints::BlueprintFilter;

impl AgentService {
    /// The app's operator default for this contractHash (there is at most one, whatever its
    /// variance), when it can be served: a registered component that does not compile never is.
    pub(super) async fn operator_default_match(
        &self,
        caller: &Caller,
        contract_hash: &str,
    ) -> Result<Option<CacheMatch>, AgentError> {
        let filter = BlueprintFilter {
            app_ids: Some(vec![caller.app_id.clone()]),
            contract_hash: Some(contract_hash.to_owned()),
            ..BlueprintFilter::default()
        };
        let Some(default) = self
            .ports
            .blueprints
            .list(&filter)
            .await?
            .into_iter()
            .find(|b| b.is_operator_default && b.is_servable())
        else {
            return Ok(None);
        };
        Ok(Some(CacheMatch {
            blueprint_id: default.blueprint_id,
            similarity: 1.0,
            kind: "operator_default".into(),
            reason: "the operator's default blueprint for this contractHash".into(),
        }))
    }
}
