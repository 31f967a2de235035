//! `svc_ops_list_provider_keys` (hosted): the caller's keys (with `orgId`, an org's the caller
//! is a member of) as summaries (`lastFour`), never a key.

use svc_protocol::ops_results::ProviderKeysResult;
use svc_protocol::ops_tools::ListProviderKeysArgs;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct ListProviderKeys;

impl ToolDefinition for ListProviderKeys {
    const NAME: &'static str = "svc_ops_list_provider_keys";
    const DESCRIPTION: &'static str = "List your provider keys (or with orgId those of an org you are a member of): provider, label, lastFour, createdAt, lastUsedAt; never the key.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = ListProviderKeysArgs;
    type Output = ProviderKeysResult;
}

impl OpsTool for ListProviderKeys {
    async fn call(ctx: &OpsCtx<'_>, a: ListProviderKeysArgs) -> Result<Answer<ProviderKeysResult>, ToolFailure> {
        let owner = ctx.wallet_owner(a.org_id).await?;
        let listed = ctx.provider_keys()?.list(&owner).await.map_err(|e| e.failure())?;
        Answer::json(ProviderKeysResult {
            keys: listed.into_iter().map(bodies::provider_key).collect(),
        })
    }
}
