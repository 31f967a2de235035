//! `svc_ops_set_provider_key` (hosted): stores or rotates the caller's key for one provider
//! (with `orgId`, an org's the caller administers), sealed; answers its summary, never the key.

use svc_application::services::hosted::SetProviderKey as SetProviderKeyCommand;
use svc_protocol::ops_results::ProviderKeySummaryBody;
use svc_protocol::ops_tools::SetProviderKeyArgs;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct SetProviderKey;

impl ToolDefinition for SetProviderKey {
    const NAME: &'static str = "svc_ops_set_provider_key";
    const DESCRIPTION: &'static str = "Store your own API key for a language-model provider (or with orgId the key of an org you own or administer); the generations you (or the org's apps) pay for use it. Stored encrypted, never shown again (summarised by lastFour); setting again rotates.";
    const ANNOTATIONS: Annotations = Annotations::OVERWRITE;
    type Input = SetProviderKeyArgs;
    type Output = ProviderKeySummaryBody;
}

impl OpsTool for SetProviderKey {
    async fn call(ctx: &OpsCtx<'_>, a: SetProviderKeyArgs) -> Result<Answer<ProviderKeySummaryBody>, ToolFailure> {
        let owner = ctx.key_owner(a.org_id).await?;
        let command = SetProviderKeyCommand {
            provider: a.provider.as_str().to_owned(),
            plaintext_key: a.plaintext_key,
            label: a.label,
        };
        let summary = ctx
            .provider_keys()?
            .set(&owner, command)
            .await
            .map_err(|e| e.failure())?;
        Answer::json(bodies::provider_key(summary))
    }
}
