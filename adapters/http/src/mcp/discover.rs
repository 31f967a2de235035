//! `svc_discover` (Document 1; hosted deployments only): what this deployment renders and, for
//! the caller's app, its hosted settings. The wire types are `svc_protocol::agent_results`'s.

use svc_application::services::agent::Caller;
use svc_application::services::app_settings::AppSettingsService;
use svc_application::services::blueprints::{MANIFEST_CONTENT_TYPE, MCP_APPS_CONTENT_TYPE};
use svc_domain::app_settings::{ADAPTER_TYPES, AppSettings, SHELL_TYPES};
use svc_domain::gadgets::{ExportName, standard_package};
use svc_protocol::agent_results::{DiscoverResult, DiscoveredApp};
use svc_protocol::{INTERNAL_ERROR, NoArgs, SERVICE_PROTOCOL_VERSION};

use super::jsonrpc::RpcFailure;
use crate::errors::ToolFailure;

/// What a render is delivered as: the MCP-Apps mount document, and the compiled component
/// (`svc_render_blueprint`'s `contentType`).
const CONTENT_TYPES: [&str; 2] = [MCP_APPS_CONTENT_TYPE, MANIFEST_CONTENT_TYPE];

fn discovered_app(s: AppSettings) -> DiscoveredApp {
    DiscoveredApp {
        enabled_adapters: s.enabled_adapters,
        granted_capabilities: s.granted_capabilities,
        default_shell_type: s.default_shell_type,
        auth_mode: s.auth_mode.map(|m| m.as_str()),
        rate_limit_per_minute: s.rate_limit_per_minute,
    }
}

/// The caller is authenticated and scoped to a known app, so `app` is always present.
pub async fn discover(
    apps: &AppSettingsService,
    caller: &Caller,
    _input: NoArgs,
) -> Result<DiscoverResult, ToolFailure> {
    let settings = apps.get(&caller.app_id).await.map_err(|e| {
        tracing::error!(error = ?e, "svc_discover could not read the app's settings");
        ToolFailure::Rpc(RpcFailure::new(INTERNAL_ERROR, "Internal error"))
    })?;
    let component_capabilities = standard_package()
        .exports
        .into_iter()
        .map(|export| match export.name {
            ExportName::Hook(name) | ExportName::Component(name) => name,
        })
        .collect();
    Ok(DiscoverResult {
        protocol_version: SERVICE_PROTOCOL_VERSION,
        content_types: CONTENT_TYPES.to_vec(),
        shell_types: SHELL_TYPES.to_vec(),
        adapter_types: ADAPTER_TYPES.to_vec(),
        component_capabilities,
        app: Some(discovered_app(settings)),
    })
}
