//! poem routes of the service: `/mcp` (JSON-RPC over MCP Streamable HTTP), `/healthz`, `/readyz`.

mod account_api;
mod account_invite;
mod account_pages;
mod body_limit;
mod busy;
mod client_address;
mod component_links;
mod console;
mod content_coding;
mod errors;
mod gadget_types;
mod guard;
mod health;
mod held_requests;
mod if_none_match;
mod layered;
mod live;
mod live_token;
mod mcp;
mod mcp_apps;
mod nul_guard;
mod oauth;
mod observe;
mod per_blueprint;
mod unmounted;
pub use observe::PrometheusTelemetry;
mod openapi;
mod ops;
mod pairing;
mod parsed_json_budget;
mod playground;
mod rate_limited;
mod route_states;
mod runtime_asset;
mod streamed_renders;
mod tools;

use std::sync::Arc;

use poem::{EndpointExt, Route, get, post};
use svc_application::services::agent::AgentService;
use svc_application::services::auth::AuthService;
use svc_application::services::tool_channels::ToolChannelService;

use crate::body_limit::BodyLimit;
use crate::layered::Provide;

pub use account_pages::AccountPages;
pub use guard::HostGuard;
pub use health::{NotReady, Readiness};
pub use held_requests::HeldRequests;
pub use live::http_source::HttpPollableTool;
pub use live::sockets::LiveSockets;
pub use live::timings::LiveTimings;
pub use live_token::{LiveTokenError, LiveTokens, SESSION_TOKEN_TTL_SECONDS, TokenKind, WS_TOKEN_TTL_SECONDS};
pub use mcp_apps::{ExternalRuntime, McpApps};
pub use oauth::{
    CLIENT_DOCUMENT_FETCH_SECONDS, EXTERNAL_SIGN_IN_WINDOW_SECONDS, EXTERNAL_SIGN_INS_PER_WINDOW, OAuth, OAuthOptions,
    REGISTRATION_WINDOW_SECONDS, REGISTRATIONS_PER_WINDOW, ReqwestClientDocumentFetcher, parse_consent_url,
};
pub use openapi::document as openapi_document;
pub use ops::{OpsConnectorKeys, OpsDomains};
pub use pairing::{PAIR_ATTEMPTS_PER_HOUR_IN_ALL, PAIR_ATTEMPTS_PER_MINUTE, Pairing};
pub use parsed_json_budget::ParsedJsonBudget;
pub use streamed_renders::StreamedRenders;

/// Everything the routes need, built once by the binary; `routes` hands each group of routes
/// only its part (`route_states`).
pub struct HttpState {
    pub agent: AgentService,
    pub auth: AuthService,
    pub tokens: LiveTokens,
    pub readiness: Arc<dyn Readiness>,
    /// Present in strict mode: the boot pair code and its exchange.
    pub pairing: Option<Pairing>,
    pub urls: PublicUrls,
    /// The wired domains of the operator route `/ops`.
    pub ops: OpsDomains,
    /// Present with `--oauth`: discovery, registration, authorize and token.
    pub oauth: Option<OAuth>,
    /// Pollable tools of `streamSpec[*].source.tool` channels on `/ws`.
    pub tool_channels: ToolChannelService,
    /// Requests running now, for `notifications/cancelled`.
    pub in_flight: mcp::cancellation::InFlightRequests,
    /// The memory the JSON-RPC messages of `/mcp` and `/ops` may take parsed, all at once.
    pub parsed_json: ParsedJsonBudget,
    /// The database pool's use, read at each metrics scrape.
    pub pool_usage: Option<Arc<dyn svc_application::ports::telemetry::DatabasePoolUsage>>,
    /// Read a tool call's remote address (the public-demo generation limit's key) from the last
    /// `X-Forwarded-For` entry instead of the peer: only behind a proxy that overwrites it.
    pub generations_trust_proxy: bool,
    /// The polling route's gates, per session: the POST's flood rule (the socket holds its
    /// own), the GET's rate and its GETs in flight.
    pub polling_flood_gates: live::polling_gates::PollingGates,
    /// The MCP-Apps option (`[mcp_apps]`); `None`: off.
    pub mcp_apps: Option<McpApps>,
    /// The live channel `/ws` and its polling fallback; off, both answer 404.
    pub live_enabled: bool,
    /// The upgraded `/ws` sockets; the server closes them on shutdown.
    pub live_sockets: live::sockets::LiveSockets,
    /// How long a socket may stay unsubscribed, and how often a bound one checks its key.
    pub live_timings: LiveTimings,
    /// The long-polls held open; the server releases them as its drain begins.
    pub held_requests: HeldRequests,
    /// Renders answered as an event stream, ended at shutdown once the grace period is over.
    pub streamed_renders: StreamedRenders,
    /// Counts `tools/call` on the agent routes when `[tool_calls]` wires a limiter.
    pub tool_call_limit: Option<svc_application::services::tool_call_limit::ToolCallLimiter>,
    /// Present in hosted mode: the apps' hosted settings, read by `svc_discover` (absent, the
    /// tool is not offered).
    pub hosted_apps: Option<svc_application::services::app_settings::AppSettingsService>,
    /// The operator console's sessions (`/console`); `None`: the console answers 404.
    pub console: Option<svc_application::services::console::ConsoleSessions>,
    /// Present in hosted mode: the account pages (email verification, password reset).
    pub accounts: Option<AccountPages>,
    /// Serve the operator's local host page `/_svc/playground` (loopback or dev mode only).
    pub playground: bool,
    /// Reads a component's imports and exports for its card (`component.links`).
    pub module_linker: Arc<dyn svc_application::ports::module_links::ModuleLinker>,
}

impl HttpState {
    /// The playground page's address, when it is served.
    pub fn playground_url(&self) -> Option<String> {
        self.playground.then(|| playground_url(&self.urls.base))
    }
}

/// The playground page's address on `base` (the public base URL).
pub fn playground_url(base: &str) -> String {
    format!("{}{}", base.trim_end_matches('/'), playground::PATH)
}

/// Addresses written into results and bootstraps.
#[derive(Debug, Clone)]
pub struct PublicUrls {
    /// `http://127.0.0.1:6781` or the configured public base URL, without a trailing slash.
    pub base: String,
    /// The live channel, `ws://.../ws`.
    pub ws: String,
}

impl PublicUrls {
    pub fn from_base(base: &str) -> Self {
        let base = base.trim_end_matches('/').to_owned();
        let ws = if let Some(rest) = base.strip_prefix("https://") {
            format!("wss://{rest}/ws")
        } else {
            format!("ws://{}/ws", base.trim_start_matches("http://"))
        };
        Self { base, ws }
    }
}

/// Path prefixes of the routes that read a body from a caller not yet authenticated: the
/// account forms, OAuth (consent, registration, token), the console's sign-in and the pair-code
/// exchange. The server reads their bodies under a budget of their own, so strangers holding it
/// cannot keep `/mcp` from reading its own.
pub const UNAUTHENTICATED_BODY_PATHS: &[&str] = &["/account", "/oauth", "/console/session", "/_svc/pair"];

/// The whole HTTP surface, with the DNS-rebinding guard in front.
pub fn routes(state: HttpState, guard: HostGuard) -> impl poem::Endpoint<Output = poem::Response> {
    let card_routes = guard.host_only();
    let live_enabled = state.live_enabled;
    let oauth_enabled = state.oauth.is_some();
    let playground_served = state.playground;
    let request_ids = state.agent.ids();
    let rest_api = openapi::endpoint();
    // Each group receives its own state (route_states.rs), nothing else.
    let states = state.split();
    Route::new()
        .at(
            "/ops",
            post(ops::post_ops)
                .get(mcp::get_mcp)
                .delete(mcp::delete_mcp)
                .with(guard.clone())
                .with(Provide(states.ops.clone()))
                .with(Provide(states.gate.clone())),
        )
        .at(
            "/_svc/invites/:invite_id/accept",
            post(ops::accept_invite).with(guard.clone()).data(states.ops),
        )
        .nest("/console", console::routes(guard.clone()).data(states.console))
        .at(
            "/mcp",
            post(mcp::post_mcp)
                .get(mcp::get_mcp)
                .delete(mcp::delete_mcp)
                .with(guard.clone())
                .with(Provide(states.agent.clone()))
                .with(Provide(states.gate)),
        )
        .at(
            "/apps/:app_id/mcp",
            post(mcp::app_endpoint::post_app_mcp)
                .get(mcp::app_endpoint::other_app_mcp)
                .delete(mcp::app_endpoint::other_app_mcp)
                .with(guard)
                .with(Provide(states.agent)),
        )
        // Inside /account but outside the OpenAPI service: a form page of its own.
        .at(
            "/account/invite",
            get(account_invite::invite_page_handler)
                .post(account_invite::accept.with(BodyLimit::new(body_limit::SIGN_IN_MAX_BODY_BYTES)))
                .data(states.accounts.clone()),
        )
        .at("/healthz", get(health::healthz))
        .at("/readyz", get(health::readyz).data(states.readiness))
        .at("/_svc/iframe-runtime.js", get(runtime_asset::serve))
        .at("/_svc/gadgets.d.ts", get(gadget_types::serve))
        .nest(
            playground::PATH,
            playground::routes(playground_served).data(states.playground),
        )
        .at(
            "/_svc/poll/:session_id",
            get(live::polling::poll)
                // One client frame, as on /ws.
                .post(live::polling::send.with(BodyLimit::new(live::MAX_FRAME_BYTES)))
                .with(live::polling::cors())
                .with_if(!live_enabled, unmounted::Unmounted)
                .data(states.live.clone()),
        )
        .at(
            "/ws",
            get(live::ws)
                .with_if(!live_enabled, unmounted::Unmounted)
                .data(states.live),
        )
        // poem-openapi routes (and documents, at /openapi.json) the pairing and OAuth paths.
        .at(
            "/_svc/pair",
            rest_api
                .clone()
                .with(BodyLimit::new(body_limit::PAIR_MAX_BODY_BYTES))
                .data(states.rest.clone()),
        )
        .nest_no_strip(
            "/oauth",
            rest_api
                .clone()
                .with_if(!oauth_enabled, unmounted::Unmounted)
                .data(states.rest.clone()),
        )
        .nest_no_strip(
            "/.well-known",
            rest_api
                .clone()
                .with_if(!oauth_enabled, unmounted::Unmounted)
                .data(states.rest),
        )
        .nest_no_strip("/account", rest_api.data(states.accounts))
        .at("/openapi.json", get(openapi::serve_document))
        .at("/metrics", get(observe::serve_metrics).data(states.metrics))
        .with(card_routes)
        // Every route's ceiling; the routes above set tighter ones, and those that take no
        // credential read their bodies under their own limits alone (`body_limit.rs`).
        .with(
            BodyLimit::new(body_limit::MAX_BODY_BYTES)
                .except_under(UNAUTHENTICATED_BODY_PATHS, body_limit::UNAUTHENTICATED_MAX_BODY_BYTES),
        )
        .with(nul_guard::RefuseNulInUrl)
        .with(observe::Observe { ids: request_ids })
}
