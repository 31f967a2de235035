//! `svc_ops_remove_provider_key` (hosted): the caller's key (with `orgId`, an org's the caller
//! administers); idempotent, `deleted: false` when there was none.

use svc_protocol::ops_results::RemovedProviderKeyBody;
use svc_protocol::ops_tools::RemoveProviderKeyArgs;

use super::{OpsCtx, OpsTool};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct RemoveProviderKey;

impl ToolDefinition for RemoveProviderKey {
    const NAME: &'static str = "svc_ops_remove_provider_key";
    const DESCRIPTION: &'static str = "Remove your key for a provider (or with orgId an org's you own or administer). Idempotent: deleted is false when there was none.";
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = RemoveProviderKeyArgs;
    type Output = RemovedProviderKeyBody;
}

impl OpsTool for RemoveProviderKey {
    async fn call(ctx: &OpsCtx<'_>, a: RemoveProviderKeyArgs) -> Result<Answer<RemovedProviderKeyBody>, ToolFailure> {
        let owner = ctx.key_owner(a.org_id).await?;
        let (provider, deleted) = ctx
            .provider_keys()?
            .remove(&owner, a.provider.as_str())
            .await
            .map_err(|e| e.failure())?;
        Answer::json(RemovedProviderKeyBody {
            deleted,
            provider: provider.as_str().to_owned(),
        })
    }
}
