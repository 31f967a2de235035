//! The `_meta` of a rendered result: `ui.resourceUri` and the `ai.svc/render` bootstrap slice.

use serde_json::{Value, json};
use svc_application::services::agent::{FirstPaint, RenderIdentity};
use svc_domain::themes;

use super::agent_tools::render_uri;
use crate::route_states::AgentRoutes;

/// Theme mode written into bootstraps; the card follows the host's mode when it reports one.
const DEFAULT_THEME_MODE: &str = "light";

/// The slice carries what the card paints with (`component`, `contract`, `props`, both theme
/// palettes): the shell `ui://svc/render` is fed only by the host's tool-result notification,
/// and a host that allows the card no connection must still show it.
pub fn render_meta(
    state: &AgentRoutes,
    identity: &RenderIdentity,
    theme_id: &str,
    last_sequence: i64,
    first_paint: &FirstPaint,
    key_id: Option<&str>,
) -> Value {
    let (ws_token, expires_at) = state
        .tokens
        .mint(&identity.session_id, &identity.app_id, key_id, state.agent.now());
    let theme = themes::css_variables(theme_id, themes::ThemeMode::Light).unwrap_or_default();
    let dark = themes::css_variables(theme_id, themes::ThemeMode::Dark);
    let uri = render_uri(&identity.session_id);
    let (runtime_url, runtime_integrity) = state.runtime();
    let mut meta = json!({
        "ui": { "resourceUri": uri },
        "ai.svc/render": {
            "sessionId": identity.session_id,
            "appId": identity.app_id,
            "runtimeUrl": runtime_url,
            "wsUrl": state.urls.ws,
            "wsToken": ws_token,
            "expiresAt": expires_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            "resourceUri": uri,
            "epoch": 1,
            "capabilities": { "liveChannel": true, "polling": true },
            "themeId": theme_id,
            "themeMode": DEFAULT_THEME_MODE,
            "themeVariants": { "light": theme, "dark": dark },
            "theme": theme,
            "pollingUrl": format!("{}/_svc/poll/{}", state.urls.base, identity.session_id),
            "lastSequence": last_sequence,
            "props": first_paint.props,
            "contract": first_paint.contract,
            "component": { "code": first_paint.component_code, "blueprintId": identity.blueprint_id },
            "gadgetBundles": state.agent.gadget_bundles(&first_paint.contract),
        }
    });
    if let Some(integrity) = runtime_integrity {
        meta["ai.svc/render"]["runtimeIntegrity"] = json!(integrity);
    }
    meta
}
