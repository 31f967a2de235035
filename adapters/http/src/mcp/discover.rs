//! `svc_discover` (Document 1; hosted deployments only): what this deployment renders and, for
//! the caller's app, its hosted settings.

use schemars::JsonSchema;
use serde::Serialize;
use svc_application::services::agent::Caller;
use svc_application::services::app_settings::AppSettingsService;
use svc_domain::app_settings::{ADAPTER_TYPES, AppSettings, SHELL_TYPES};
use svc_domain::gadgets::{ExportName, standard_package};
use svc_protocol::INTERNAL_ERROR;

use super::jsonrpc::RpcFailure;
use crate::errors::ToolFailure;

/// The protocol revision this server speaks (Document 1, Versioning).
pub const PROTOCOL_VERSION: &str = "draft-2026-06-12";
/// What a render is delivered as: the MCP-Apps mount document, and the compiled component
/// (`svc_render_blueprint`'s `contentType`).
pub const CONTENT_TYPES: [&str; 2] = ["text/html;profile=mcp-app", "application/javascript+react"];

/// The input: none.
pub use svc_protocol::NoArgs as DiscoverInput;

#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverOutput {
    pub protocol_version: &'static str,
    pub content_types: Vec<&'static str>,
    pub shell_types: Vec<&'static str>,
    pub adapter_types: Vec<&'static str>,
    /// The hooks and components every mounted component can import (the standard package).
    pub component_capabilities: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub app: Option<DiscoveredApp>,
}

/// The caller's app's settings; fields not set are left out.
#[derive(Debug, Serialize, JsonSchema)]
#[serde(rename_all = "camelCase")]
pub struct DiscoveredApp {
    #[serde(skip_serializing_if = "Option::is_none")]
    pub enabled_adapters: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub granted_capabilities: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub default_shell_type: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub auth_mode: Option<&'static str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rate_limit_per_minute: Option<u32>,
}

impl From<AppSettings> for DiscoveredApp {
    fn from(s: AppSettings) -> Self {
        Self {
            enabled_adapters: s.enabled_adapters,
            granted_capabilities: s.granted_capabilities,
            default_shell_type: s.default_shell_type,
            auth_mode: s.auth_mode.map(|m| m.as_str()),
            rate_limit_per_minute: s.rate_limit_per_minute,
        }
    }
}

/// The caller is authenticated and scoped to a known app, so `app` is always present.
pub async fn discover(
    apps: &AppSettingsService,
    caller: &Caller,
    _input: DiscoverInput,
) -> Result<DiscoverOutput, ToolFailure> {
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
    Ok(DiscoverOutput {
        protocol_version: PROTOCOL_VERSION,
        content_types: CONTENT_TYPES.to_vec(),
        shell_types: SHELL_TYPES.to_vec(),
        adapter_types: ADAPTER_TYPES.to_vec(),
        component_capabilities,
        app: Some(settings.into()),
    })
}
