//! `svc_ops_list_connector_keys`: a key locked to an app lists only its app's keys.

use svc_protocol::NoArgs;
use svc_protocol::ops_results::ConnectorKeysResult;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct ListConnectorKeys;

impl ToolDefinition for ListConnectorKeys {
    const NAME: &'static str = "svc_ops_list_connector_keys";
    const DESCRIPTION: &'static str = "List the caller's connector keys: metadata only, never the secret.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = NoArgs;
    type Output = ConnectorKeysResult;
}

impl OpsTool for ListConnectorKeys {
    async fn call(ctx: &OpsCtx<'_>, _: NoArgs) -> Result<Answer<ConnectorKeysResult>, ToolFailure> {
        let keys = ctx
            .connector_keys()?
            .keys
            .list(ctx.owner(), ctx.caller.locked_app())
            .await
            .map_err(|e| e.failure())?;
        Answer::json(ConnectorKeysResult {
            keys: keys.iter().map(bodies::connector_key).collect(),
        })
    }
}
