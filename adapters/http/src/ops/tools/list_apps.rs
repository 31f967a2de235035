//! `svc_ops_list_apps`

use svc_protocol::NoArgs;
use svc_protocol::ops_results::AppsResult;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct ListApps;

impl ToolDefinition for ListApps {
    const NAME: &'static str = "svc_ops_list_apps";
    const DESCRIPTION: &'static str = "List the caller's apps, oldest first.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = NoArgs;
    type Output = AppsResult;
}

impl OpsTool for ListApps {
    async fn call(ctx: &OpsCtx<'_>, _: NoArgs) -> Result<Answer<AppsResult>, ToolFailure> {
        let listed = ctx.apps()?.list(ctx.owner()).await.map_err(|e| e.failure())?;
        Answer::json(AppsResult {
            apps: listed.iter().map(bodies::app).collect(),
        })
    }
}
