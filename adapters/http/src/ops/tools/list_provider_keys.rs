//! `svc_ops_list_provider_keys` (hosted): summaries (`lastFour`), never a key.

use svc_protocol::NoArgs;
use svc_protocol::ops_results::ProviderKeysResult;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct ListProviderKeys;

impl ToolDefinition for ListProviderKeys {
    const NAME: &'static str = "svc_ops_list_provider_keys";
    const DESCRIPTION: &'static str =
        "List your provider keys: provider, label, lastFour, createdAt, lastUsedAt; never the key.";
    const ANNOTATIONS: Annotations = Annotations::READ;
    type Input = NoArgs;
    type Output = ProviderKeysResult;
}

impl OpsTool for ListProviderKeys {
    async fn call(ctx: &OpsCtx<'_>, _: NoArgs) -> Result<Answer<ProviderKeysResult>, ToolFailure> {
        let listed = ctx.provider_keys()?.list(&ctx.payer()).await.map_err(|e| e.failure())?;
        Answer::json(ProviderKeysResult {
            keys: listed.into_iter().map(bodies::provider_key).collect(),
        })
    }
}
