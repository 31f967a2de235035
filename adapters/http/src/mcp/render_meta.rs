//! The `_meta` of a rendered result: `ui.resourceUri` and the `ai.svc/render` bootstrap slice,
//! serialised here once, with the component code written as the blueprint's kept escaped string
//! (`escaped_code.rs`) rather than escaped again for every render.

use serde::Serialize;
use serde_json::Value;
use serde_json::value::RawValue;
use svc_application::services::agent::{FirstPaint, RenderIdentity};
use svc_domain::contract::Contract;
use svc_domain::gadgets::GadgetBundle;
use svc_domain::themes::{self, ThemeMode};

use super::agent_tools::render_uri;
use super::theme_json;
use crate::route_states::AgentRoutes;

#[derive(Serialize)]
struct Meta<'a> {
    ui: Ui<'a>,
    #[serde(rename = "ai.svc/render")]
    render: RenderSlice<'a>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Ui<'a> {
    resource_uri: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct RenderSlice<'a> {
    session_id: &'a str,
    app_id: &'a str,
    runtime_url: String,
    ws_url: &'a str,
    ws_token: String,
    expires_at: String,
    resource_uri: &'a str,
    epoch: u32,
    capabilities: Capabilities,
    theme_id: &'a str,
    theme_mode: &'static str,
    theme_variants: ThemeVariants<'a>,
    theme: &'a RawValue,
    polling_url: String,
    last_sequence: i64,
    props: &'a Value,
    contract: &'a Contract,
    component: Component<'a>,
    gadget_bundles: Vec<GadgetBundle>,
    #[serde(skip_serializing_if = "Option::is_none")]
    runtime_integrity: Option<String>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Capabilities {
    live_channel: bool,
    polling: bool,
}

#[derive(Serialize)]
struct ThemeVariants<'a> {
    light: Option<&'a RawValue>,
    dark: Option<&'a RawValue>,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct Component<'a> {
    code: &'a RawValue,
    blueprint_id: &'a str,
}

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
) -> Result<Box<RawValue>, serde_json::Error> {
    let (ws_token, expires_at) = state
        .tokens
        .mint(&identity.session_id, &identity.app_id, key_id, state.agent.now());
    // Serialised once per theme (`theme_json`); an unknown theme paints with no variables. The
    // card follows the host's mode once it reports one.
    let theme_mode = themes::first_painted_mode(theme_id);
    let theme = theme_json::css_variables(theme_id, theme_mode).unwrap_or_else(theme_json::no_variables);
    let uri = render_uri(&identity.session_id);
    let (runtime_url, runtime_integrity) = state.runtime();
    let code = state
        .escaped_code
        .of(&identity.blueprint_id, &first_paint.component_code)?;
    let meta = Meta {
        ui: Ui { resource_uri: &uri },
        render: RenderSlice {
            session_id: &identity.session_id,
            app_id: &identity.app_id,
            runtime_url,
            ws_url: &state.urls.ws,
            ws_token,
            expires_at: expires_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true),
            resource_uri: &uri,
            epoch: 1,
            capabilities: Capabilities {
                live_channel: true,
                polling: true,
            },
            theme_id,
            theme_mode: theme_mode.as_str(),
            theme_variants: ThemeVariants {
                light: theme_json::css_variables(theme_id, ThemeMode::Light),
                dark: theme_json::css_variables(theme_id, ThemeMode::Dark),
            },
            theme,
            polling_url: format!("{}/_svc/poll/{}", state.urls.base, identity.session_id),
            last_sequence,
            props: &first_paint.props,
            contract: &first_paint.contract,
            component: Component {
                code: &code,
                blueprint_id: &identity.blueprint_id,
            },
            gadget_bundles: state.agent.gadget_bundles(&first_paint.contract),
            runtime_integrity,
        },
    };
    // Not written into a buffer sized for the code and wrapped with `RawValue::from_string`:
    // that parses the whole text again to check it, far more than the copies of growing here.
    serde_json::value::to_raw_value(&meta)
}
