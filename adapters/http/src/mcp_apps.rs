//! The MCP-Apps option (Document 2, "MCP-Apps capability and mount metadata"). On, `initialize`
//! advertises `experimental['io.modelcontextprotocol/ui']`, tool declarations carry `_meta.ui`
//! and a rendered `svc_render` result carries `_meta` (`ui.resourceUri` and the
//! `ai.svc/render` bootstrap slice). Off, none of these: a host sees plain MCP tools, and a
//! render stays readable through `resources/read` on its `ui://` locator.

use crate::route_states::AgentRoutes;
use crate::runtime_asset::RUNTIME_HASH;

/// Path of the runtime bundle this server serves.
pub const RUNTIME_PATH: &str = "/_svc/iframe-runtime.js";

/// The option's settings; the public WebSocket URL is `AgentRoutes::urls.ws`.
#[derive(Debug, Clone, Default)]
pub struct McpApps {
    /// A runtime bundle hosted elsewhere, written into bootstraps instead of ours.
    pub external_runtime: Option<ExternalRuntime>,
}

/// An external runtime bundle and its Subresource Integrity digest (`sha384-...`).
#[derive(Debug, Clone)]
pub struct ExternalRuntime {
    pub url: String,
    pub integrity: String,
}

impl AgentRoutes {
    pub(crate) fn mcp_apps_on(&self) -> bool {
        self.mcp_apps.is_some()
    }

    /// `runtimeUrl` of a bootstrap, and its `runtimeIntegrity` when the bundle is external. Ours
    /// names the bundle's content hash, so a host may keep it for a year and a new bundle is a
    /// new URL.
    pub(crate) fn runtime(&self) -> (String, Option<String>) {
        match self.mcp_apps.as_ref().and_then(|m| m.external_runtime.as_ref()) {
            Some(external) => (external.url.clone(), Some(external.integrity.clone())),
            None => (format!("{}{RUNTIME_PATH}?v={}", self.urls.base, *RUNTIME_HASH), None),
        }
    }
}
