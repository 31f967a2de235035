//! `resources/*`: the mount shell `ui://svc/render` and per-render mounts
//! `ui://svc/render/<sessionId>` (optionally `#<epoch>`), as MCP-Apps HTML resources.
//!
//! Both documents inline the mount runtime (adapters/mount), because some hosts block scripts
//! from any origin but their own sandbox. The per-render document embeds its bootstrap (the
//! render slice plus the pinned epoch's props, the compiled component and a fresh `wsToken`),
//! so it paints even where the host blocks the WebSocket; the shell embeds only a
//! marker and waits for the host's `ui/notifications/tool-result`, whose `_meta['ai.svc/render']`
//! carries the slice.

use std::sync::Arc;

use serde_json::{Value, json};
use svc_application::ports::agent::SessionRecord;
use svc_application::services::agent::{AgentError, Caller, ComponentCode};
use svc_domain::contract::Contract;
use svc_domain::gadgets::GadgetBundle;
use svc_domain::session::SessionVariant;
use svc_domain::themes;
use svc_protocol::{INVALID_PARAMS, MOUNT_UNAVAILABLE, SESSION_NOT_FOUND};

use super::jsonrpc::{Reply, RpcFailure};
use super::read_templates::{BuildRefused, DocumentKey, Hole, ReadTemplate};
use super::resource_uri::{ResourceUri, UriRefusal};
use crate::component_links::ComponentLinks;
use crate::route_states::AgentRoutes;

pub(crate) use super::resource_uri::SHELL_URI;
const MIME: &str = "text/html;profile=mcp-app";
/// Theme of a session that recorded none (a render from before themes were stored).
const FALLBACK_THEME_ID: &str = "default";

pub fn list() -> Value {
    json!({ "resources": [{ "uri": SHELL_URI, "name": "svc render shell", "mimeType": MIME }] })
}

pub fn templates() -> Value {
    json!({ "resourceTemplates": [{ "uriTemplate": "ui://svc/render/{sessionId}", "name": "svc render", "mimeType": MIME }] })
}

fn not_found() -> RpcFailure {
    RpcFailure::new(SESSION_NOT_FOUND, "Session not found").with_data(json!({ "code": "NOT_FOUND" }))
}

/// Escapes JSON for embedding inside a `<script>` element.
fn script_json(value: &Value) -> String {
    value
        .to_string()
        .replace('<', "\\u003c")
        .replace('>', "\\u003e")
        .replace('&', "\\u0026")
}

/// JavaScript source made safe inside a `<script>` element: `</script` (any case) would close
/// it. The runtime build already refuses such bundles; this keeps the document well-formed even
/// if one slips through (`<\/` is `</` inside JS strings, templates and regular expressions).
pub(super) fn script_source(source: &str) -> String {
    let lower = source.to_ascii_lowercase();
    let mut out = String::with_capacity(source.len());
    let mut last = 0;
    for (index, _) in lower.match_indices("</script") {
        out.push_str(&source[last..index]);
        out.push_str("<\\/");
        last = index + 2;
    }
    out.push_str(&source[last..]);
    out
}

/// The whole card document with the runtime (and the module lexer: its component comes without
/// links) inline, for pages that serve it themselves (the console's blueprint preview);
/// `resources/read` fills a cached template instead.
pub(crate) fn card_document(bootstrap: &Value) -> String {
    let lexer = script_source(crate::runtime_asset::MODULE_LEXER_JS);
    document(
        bootstrap,
        &script_source(crate::runtime_asset::RUNTIME_JS),
        Some(&lexer),
    )
}

/// The HTML document; `runtime` and `lexer` are the mount runtime's and the module lexer's
/// sources already made safe by [`script_source`] (or the markers of their holes in a
/// template). The lexer, a classic script, runs before the runtime's module.
fn document(bootstrap: &Value, runtime: &str, lexer: Option<&str>) -> String {
    let lexer = lexer
        .map(|lexer| format!("<script>{lexer}</script>"))
        .unwrap_or_default();
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>svc render</title>\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"></head>\
<body><div id=\"svc-root\"></div>\
<script type=\"application/json\" id=\"svc-bootstrap\">{}</script>\
{lexer}<script type=\"module\">{}</script></body></html>",
        script_json(bootstrap),
        runtime,
    )
}

/// The policy a host applies to a document (`_meta.ui.csp`).
struct DocumentPolicy {
    connect_domains: Vec<String>,
    resource_domains: Vec<String>,
}

/// `contract`: the render's, whose importable declared packages the card may load; `None` for
/// the shell, which mounts any render and so allows every declared package.
fn policy(state: &AgentRoutes, contract: Option<&Contract>) -> DocumentPolicy {
    let ws_origin = state.urls.ws.trim_end_matches("/ws").to_owned();
    // The HTTP origin too: the card falls back to `pollingUrl` where the socket is blocked.
    let mut connect_domains = vec![ws_origin, state.urls.base.clone()];
    // Nothing of ours is loaded as a resource: the runtime and the component are inline
    // scripts, styles are inline. Only declared packages' stylesheets come from elsewhere.
    let mut resource_domains: Vec<String> = Vec::new();
    // Declared gadget packages: the mount fetches each bundle and stylesheet, and the package's
    // code reaches its `connect` origins.
    let (gadget_resources, gadget_connects) = state.agent.gadget_csp_origins(contract);
    extend_new(&mut resource_domains, gadget_resources);
    extend_new(&mut connect_domains, gadget_connects);
    DocumentPolicy {
        connect_domains,
        resource_domains,
    }
}

fn contents(uri: &str, text: String, policy: &DocumentPolicy) -> Value {
    json!({ "contents": [{
        "uri": uri,
        "mimeType": MIME,
        "text": text,
        "_meta": { "ui": { "csp": { "connectDomains": policy.connect_domains, "resourceDomains": policy.resource_domains } } },
    }] })
}

fn extend_new(into: &mut Vec<String>, origins: Vec<String>) {
    for origin in origins {
        if !into.contains(&origin) {
            into.push(origin);
        }
    }
}

/// The component as a card loads it: its code, where it imports and exports (`None`: the code
/// does not parse, and the runtime's lexer says so), and the declared packages it may import.
struct Component<'c> {
    code: &'c str,
    links: Option<Value>,
    gadget_bundles: Vec<GadgetBundle>,
}

/// Where a card reaches the server: the runtime, the live channel and its polling fallback.
struct Endpoints {
    runtime_url: String,
    runtime_integrity: Option<String>,
    ws_url: String,
    base_url: String,
}

impl Endpoints {
    fn of(state: &AgentRoutes) -> Self {
        let (runtime_url, runtime_integrity) = state.runtime();
        Self {
            runtime_url,
            runtime_integrity,
            ws_url: state.urls.ws.clone(),
            base_url: state.urls.base.clone(),
        }
    }
}

/// What the runtime needs to subscribe and paint one render at one epoch; the per-request
/// `wsToken` and `expiresAt` are given (holes of a template, see `read_templates`).
fn render_bootstrap(
    endpoints: &Endpoints,
    uri: &str,
    session: &SessionRecord,
    component: Component<'_>,
    epoch: u32,
    props: Value,
    (ws_token, expires_at): (&str, &str),
) -> Value {
    let theme_id = session.theme_id.as_deref().unwrap_or(FALLBACK_THEME_ID);
    let paint = themes::card_paint(theme_id);
    let Endpoints {
        runtime_url,
        runtime_integrity,
        ws_url,
        base_url,
    } = endpoints;
    let mut bootstrap = json!({
        "sessionId": session.session_id,
        "appId": session.app_id,
        "resourceUri": uri,
        "epoch": epoch,
        "props": props,
        "frozen": epoch != session.head.epoch,
        // The compiled component, so the card paints before (and without) the live channel.
        "component": { "code": component.code, "blueprintId": session.blueprint_id, "links": component.links },
        "contract": session.contract,
        "runtimeUrl": runtime_url,
        "wsUrl": ws_url,
        "wsToken": ws_token,
        "expiresAt": expires_at,
        "themeId": theme_id,
        "themeMode": paint.mode.as_str(),
        "theme": paint.theme,
        "themeVariants": paint.variants,
        "pollingUrl": format!("{base_url}/_svc/poll/{}", session.session_id),
        "lastSequence": session.event_sequence,
        // Declared packages the component may import, loaded by the mount before the component.
        "gadgetBundles": component.gadget_bundles,
    });
    if let Some(integrity) = runtime_integrity {
        bootstrap["runtimeIntegrity"] = json!(integrity);
    }
    bootstrap
}

/// The failure of a read that found no template: busy as the CPU gate is, or internal.
fn build_refused(refused: BuildRefused) -> RpcFailure {
    match refused {
        BuildRefused::Busy(busy) => crate::errors::server_busy(busy.retry_after_seconds),
        BuildRefused::Failed(cause) => {
            tracing::error!(%cause, "resources/read failed");
            RpcFailure::new(svc_protocol::INTERNAL_ERROR, "Internal error")
        }
    }
}

/// `resources/read`. Our documents are answered from a template built once per state of the
/// session, off the async workers (see `read_templates`); only the live token is fresh per
/// request.
pub async fn read(state: &AgentRoutes, caller: &Caller, params: &Value) -> Result<Reply, RpcFailure> {
    let Some(uri) = params["uri"].as_str() else {
        return Err(RpcFailure::new(
            INVALID_PARAMS,
            "Invalid params: uri: a resource URI is required",
        ));
    };
    let (session_id, epoch) = match ResourceUri::parse(uri) {
        Ok(ResourceUri::Shell) => return read_shell(state).await,
        Ok(ResourceUri::Render { session_id, epoch }) => (session_id, epoch),
        // Not a render locator at all: MCP's own "resource not found" (same code, -32002).
        Err(UriRefusal::NotOurs) => {
            return Err(RpcFailure::new(SESSION_NOT_FOUND, "Resource not found").with_data(json!({ "uri": uri })));
        }
        Err(UriRefusal::Malformed) => return Err(not_found()),
    };
    let snapshot = state
        .agent
        .mount_snapshot(caller, session_id)
        .await
        .map_err(|e| match e {
            AgentError::SessionNotFound => not_found(),
            other => {
                tracing::error!(error = ?other, "resources/read failed");
                RpcFailure::new(svc_protocol::INTERNAL_ERROR, "Internal error")
            }
        })?;
    let session = snapshot.session;
    // A store that compares ids loosely (MariaDB's collations pad with spaces) may find the session
    // under another spelling of its id: only its own names the document.
    if session.session_id != session_id {
        return Err(not_found());
    }
    if !snapshot.variant.mounts_without_mcp_apps() && !state.mcp_apps_on() {
        return Err(
            RpcFailure::new(MOUNT_UNAVAILABLE, "Mount unavailable").with_data(json!({
                "code": "NOT_SUPPORTED",
                "message": format!(
                    "this {} render is an MCP-Apps document and this server has the MCP-Apps option off",
                    snapshot.variant.as_str()
                ),
            })),
        );
    }
    if session.blueprint_id.is_none() {
        let message = session.failure.as_ref().map(|f| f.message.clone()).unwrap_or_default();
        return Err(RpcFailure::new(MOUNT_UNAVAILABLE, "Mount unavailable")
            .with_data(json!({ "code": "NOT_MOUNTABLE", "message": message })));
    }
    let Some(code) = snapshot.component_code else {
        return Err(RpcFailure::new(MOUNT_UNAVAILABLE, "Mount unavailable").with_data(
            json!({ "code": "BLUEPRINT_UNRESOLVABLE", "message": "the render's component is no longer stored" }),
        ));
    };
    if snapshot.variant == SessionVariant::McpApps {
        return Ok(Reply::Built(mcp_apps_document(
            state,
            uri,
            code.to_string(),
            &session.contract,
        )));
    }
    let epoch = epoch.unwrap_or(session.head.epoch);
    let key = DocumentKey {
        uri: uri.to_owned(),
        revision: session.revision,
        event_sequence: session.event_sequence,
        epoch,
    };
    let template = match state.read_templates.get(&key) {
        Some(kept) => kept,
        None => {
            // The head's props are in the session just read; only a frozen epoch needs its own read.
            let frozen_props = if epoch == session.head.epoch {
                None
            } else {
                let props = state
                    .agent
                    .props_at(caller, session_id, epoch)
                    .await
                    .map_err(|_| not_found())?
                    .ok_or_else(not_found)?;
                Some(props)
            };
            let card = CardDocument {
                uri: uri.to_owned(),
                component_links: Arc::clone(&state.component_links),
                gadget_bundles: state.agent.gadget_bundles(&session.contract),
                policy: policy(state, Some(&session.contract)),
                endpoints: Endpoints::of(state),
                session: Arc::clone(&session),
                code,
                epoch,
                frozen_props,
            };
            state
                .read_templates
                .get_or_build(key, state.agent.cpu_gate(), move || card.template())
                .await
                .map_err(build_refused)?
        }
    };
    let (ws_token, expires_at) = state.tokens.mint(
        &session.session_id,
        &session.app_id,
        caller.key_id.as_deref(),
        state.agent.now(),
    );
    let expires_at = expires_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true);
    Ok(Reply::Pieces(template.fill(&ws_token, &expires_at)))
}

/// The mount shell: one template per process, built like a render's.
async fn read_shell(state: &AgentRoutes) -> Result<Reply, RpcFailure> {
    let key = DocumentKey {
        uri: SHELL_URI.to_owned(),
        revision: 0,
        event_sequence: 0,
        epoch: 0,
    };
    if let Some(kept) = state.read_templates.get(&key) {
        return Ok(Reply::Pieces(kept.fill("", "")));
    }
    let policy = policy(state, None);
    let template = state
        .read_templates
        .get_or_build(key, state.agent.cpu_gate(), move || {
            // The shell's component comes in a tool result, without links.
            let shell = document(
                &json!({ "shell": true }),
                &Hole::Runtime.marker(),
                Some(&Hole::ModuleLexer.marker()),
            );
            ReadTemplate::of(&contents(SHELL_URI, shell, &policy))
        })
        .await
        .map_err(build_refused)?;
    Ok(Reply::Pieces(template.fill("", "")))
}

/// Everything a render's card document is built from, gathered on the worker so that the
/// building (the props serialised twice over, the whole document deflated) can run elsewhere.
struct CardDocument {
    uri: String,
    session: Arc<SessionRecord>,
    code: ComponentCode,
    /// Where the component imports and exports, read once per blueprint.
    component_links: Arc<ComponentLinks>,
    gadget_bundles: Vec<GadgetBundle>,
    policy: DocumentPolicy,
    endpoints: Endpoints,
    epoch: u32,
    /// The props of a frozen epoch; the head's are the session's.
    frozen_props: Option<Value>,
}

impl CardDocument {
    fn template(self) -> ReadTemplate {
        let holes = (Hole::WsToken.marker(), Hole::ExpiresAt.marker());
        let links = self
            .session
            .blueprint_id
            .as_deref()
            .and_then(|blueprint_id| self.component_links.of(blueprint_id, &self.code));
        // The lexer (a fifth of the runtime's bytes) goes only where code may come without
        // links: a component that does not parse, or gadget bundles.
        let lexer = (links.is_none() || !self.gadget_bundles.is_empty()).then(|| Hole::ModuleLexer.marker());
        let component = Component {
            code: &self.code,
            links,
            gadget_bundles: self.gadget_bundles,
        };
        let props = self.frozen_props.unwrap_or_else(|| self.session.head.props.clone());
        let bootstrap = render_bootstrap(
            &self.endpoints,
            &self.uri,
            &self.session,
            component,
            self.epoch,
            props,
            (&holes.0, &holes.1),
        );
        let html = document(&bootstrap, &Hole::Runtime.marker(), lexer.as_deref());
        ReadTemplate::of(&contents(&self.uri, html, &self.policy))
    }
}

/// An `mcpApps` session's mount: its declared MCP-Apps document, served as is (whatever the
/// pinned epoch: the document has no history of its own), under the same policy as our documents.
fn mcp_apps_document(state: &AgentRoutes, uri: &str, html: String, contract: &Contract) -> Value {
    contents(uri, html, &policy(state, Some(contract)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn script_source_never_closes_the_element() {
        let escaped = script_source("a='</script>';b='</SCRIPT >';c=`</sCrIpT`");
        assert!(!escaped.to_ascii_lowercase().contains("</script"), "{escaped}");
        assert_eq!(escaped, "a='<\\/script>';b='<\\/SCRIPT >';c=`<\\/sCrIpT`");
        assert_eq!(script_source("x<y"), "x<y");
    }

    #[test]
    fn the_document_inlines_the_runtime_and_escapes_the_bootstrap() {
        let runtime = script_source(crate::runtime_asset::RUNTIME_JS);
        let html = document(&json!({ "props": { "title": "</script><b>x" } }), &runtime, None);
        assert!(html.starts_with("<!doctype html>"));
        assert!(!html.contains("</script><b>"));
        assert!(html.contains("<script type=\"module\">"));
        assert!(
            !html.contains("<script type=\"module\" src="),
            "the runtime is inlined, not fetched"
        );
        // One bootstrap element, one runtime element, each closed once.
        assert_eq!(html.matches("</script>").count(), 2);
    }

    #[test]
    fn the_module_lexer_runs_before_the_runtime_where_a_document_needs_it() {
        let html = document(&json!({}), "RUNTIME()", Some("LEXER()"));
        let lexer = html.find("<script>LEXER()</script>").expect("a classic script");
        let runtime = html.find("<script type=\"module\">RUNTIME()</script>").unwrap();
        assert!(lexer < runtime, "{html}");
    }
}
