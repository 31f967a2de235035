//! `svc_list_gadgets`: the packages generated UI may import.

use serde_json::{Map, Value};
use svc_application::services::agent::AgentError;
use svc_protocol::AppScopedArgs;
use svc_protocol::agent_results::GadgetsResult;

use super::{AgentCtx, AgentTool};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct ListGadgets;

impl ToolDefinition for ListGadgets {
    const NAME: &'static str = "svc_list_gadgets";
    const DESCRIPTION: &'static str = "List the gadget packages (hooks and components) generated UI may import.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = AppScopedArgs;
    type Output = GadgetsResult;
}

impl AgentTool for ListGadgets {
    async fn call(ctx: &AgentCtx<'_>, a: AppScopedArgs) -> Result<Answer<GadgetsResult>, ToolFailure> {
        let gadgets = ctx
            .state
            .agent
            .list_gadgets(ctx.caller, a.app_id.as_deref())
            .map_err(map_agent_error)?;
        // A descriptor's shape is its declarer's (`requires` is kept as written).
        let gadgets = gadgets
            .iter()
            .map(|g| match serde_json::to_value(g) {
                Ok(Value::Object(map)) => Ok(map),
                Ok(_) => Err(map_agent_error(AgentError::Internal(anyhow::anyhow!(
                    "a gadget descriptor is not an object"
                )))),
                Err(e) => Err(map_agent_error(AgentError::Internal(e.into()))),
            })
            .collect::<Result<Vec<Map<String, Value>>, ToolFailure>>()?;
        Ok(Answer::ok(GadgetsResult { gadgets }, "gadget catalog attached"))
    }
}
