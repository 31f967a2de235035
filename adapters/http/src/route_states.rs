//! What each route group receives. The binary builds one [`HttpState`]; [`HttpState::split`]
//! hands each group of routes only the services it uses, attached as poem `Data` to that group
//! alone, so a handler cannot reach another plane's services.

use std::sync::Arc;

use svc_application::ports::telemetry::DatabasePoolUsage;
use svc_application::services::agent::AgentService;
use svc_application::services::app_settings::AppSettingsService;
use svc_application::services::auth::AuthService;
use svc_application::services::console::ConsoleSessions;
use svc_application::services::tool_call_limit::ToolCallLimiter;
use svc_application::services::tool_channels::ToolChannelService;

use crate::component_links::ComponentLinks;
use crate::live::polling_gates::PollingGates;
use crate::mcp::cancellation::InFlightRequests;
use crate::mcp::escaped_code::EscapedComponents;
use crate::mcp::read_templates::ReadTemplates;
use crate::oauth::Challenges;
use crate::{AccountPages, HttpState, LiveTokens, McpApps, OAuth, OpsDomains, Pairing, PublicUrls, Readiness};

/// Admitting a caller on the MCP routes (`/mcp`, `/apps/<appId>/mcp`, `/ops`) and running its
/// requests cancellably.
pub(crate) struct Gate {
    pub auth: AuthService,
    /// The `WWW-Authenticate` challenges of unauthenticated requests.
    pub challenges: Challenges,
    /// Requests running now, for `notifications/cancelled` (one table for every MCP route).
    pub in_flight: Arc<InFlightRequests>,
    /// Read a caller's remote address from the last `X-Forwarded-For` entry.
    pub trust_proxy: bool,
    /// The memory the messages of these routes may take parsed (`parsed_json_budget.rs`).
    pub parsed_json: crate::ParsedJsonBudget,
}

/// The agent routes `/mcp` and `/apps/<appId>/mcp`.
pub(crate) struct AgentRoutes {
    pub gate: Arc<Gate>,
    pub agent: AgentService,
    /// `svc_runtime_refresh_ws_token` mints live tokens.
    pub tokens: LiveTokens,
    pub urls: PublicUrls,
    pub mcp_apps: Option<McpApps>,
    /// The live channel `/ws` (and its polling fallback) is served: the seam wsTokens are for.
    pub live_enabled: bool,
    pub tool_call_limit: Option<ToolCallLimiter>,
    pub hosted_apps: Option<AppSettingsService>,
    /// The playground page's address, when it is served (`svc_render`'s text points to it).
    pub playground_url: Option<String>,
    /// `resources/read` answers serialised once per state of a session.
    pub read_templates: ReadTemplates,
    /// Render results' component code, escaped once per blueprint.
    pub escaped_code: EscapedComponents,
    /// The card documents' `component.links`, read once per blueprint.
    pub component_links: Arc<ComponentLinks>,
    /// Released as the server's drain begins: a waiting `svc_consume` then answers at once.
    pub held: crate::HeldRequests,
    /// Renders answered as an event stream, each in its own task.
    pub streamed_renders: crate::StreamedRenders,
}

/// The operator route `/ops` and the invite acceptance route.
pub(crate) struct OpsRoutes {
    pub gate: Arc<Gate>,
    pub ops: OpsDomains,
}

/// The live channel `/ws` and its polling fallback `/_svc/poll/<sessionId>`.
pub(crate) struct LiveRoutes {
    pub agent: AgentService,
    pub auth: AuthService,
    pub tokens: LiveTokens,
    pub tool_channels: ToolChannelService,
    /// The polling route's gates, per session: the POST's flood rule (the socket holds its
    /// own), the GET's rate and its GETs in flight.
    pub polling_flood_gates: PollingGates,
    /// The upgraded sockets, closed (1001) and awaited by the server's shutdown.
    pub sockets: crate::live::sockets::LiveSockets,
    pub timings: crate::live::timings::LiveTimings,
    /// The keys of bound sockets, asked about every `timings.key_recheck`.
    pub key_watch: crate::live::KeyWatch,
    /// Released as the server's drain begins: a polling GET then answers at once.
    pub held: crate::HeldRequests,
    /// The acks' `component.links` (shared with the agent routes' documents).
    pub component_links: Arc<ComponentLinks>,
    /// Replay pieces being read at once, server-wide (`live::replay_budget`).
    pub replay_budget: crate::live::replay_budget::ReplayBudget,
    /// The memory inbound frames (a socket's text frame, a polling POST) may take parsed: the
    /// MCP routes' budget (`parsed_json_budget.rs`, `live::inbound_budget`).
    pub parsed_json: crate::ParsedJsonBudget,
}

/// The REST routes poem-openapi serves: pairing (`/_svc/pair`) and OAuth (`/oauth`,
/// `/.well-known`). The consent form asks for the pair code in strict mode.
pub(crate) struct RestRoutes {
    pub oauth: Option<OAuth>,
    pub pairing: Option<Arc<Pairing>>,
}

/// The operator console `/console`: its sessions, the pair code it may sign in with, and the
/// operator plane its `/console/ops` runs through.
pub(crate) struct ConsoleRoutes {
    pub sessions: Option<ConsoleSessions>,
    pub ops: Arc<OpsRoutes>,
    pub pairing: Option<Arc<Pairing>>,
    /// The session cookie is `Secure` (the public URL is https).
    pub secure: bool,
    /// Account sign-in attempts count against the last `X-Forwarded-For` address (the account
    /// pages' setting, so the console and the consent page share one budget per address).
    pub trust_proxy: bool,
}

/// The hosted account pages (`/account/*`); `None` outside hosted mode.
pub(crate) struct AccountRoutes {
    pub pages: Option<AccountPages>,
}

/// The playground's card frames (a live-channel token, the render's resource) and whether its
/// page signs in (no pair code and any bearer accepted: open).
pub(crate) struct PlaygroundRoutes {
    pub open: bool,
    pub agent: Arc<AgentRoutes>,
    pub live: Arc<LiveRoutes>,
}

/// What `/metrics` reads at each scrape.
pub(crate) struct MetricsSources {
    pub agent: AgentService,
    pub pool_usage: Option<Arc<dyn DatabasePoolUsage>>,
}

/// Every group's state, each shared by the routes of its group.
pub(crate) struct RouteStates {
    pub gate: Arc<Gate>,
    pub agent: Arc<AgentRoutes>,
    pub ops: Arc<OpsRoutes>,
    pub live: Arc<LiveRoutes>,
    pub rest: Arc<RestRoutes>,
    pub console: Arc<ConsoleRoutes>,
    pub accounts: Arc<AccountRoutes>,
    pub playground: Arc<PlaygroundRoutes>,
    pub readiness: Arc<dyn Readiness>,
    pub metrics: Arc<MetricsSources>,
}

impl HttpState {
    pub(crate) fn split(self) -> RouteStates {
        let playground_url = self.playground_url();
        let gate = Arc::new(Gate {
            auth: self.auth.clone(),
            challenges: Challenges::of(self.oauth.as_ref()),
            in_flight: Arc::new(self.in_flight),
            trust_proxy: self.generations_trust_proxy,
            parsed_json: self.parsed_json.clone(),
        });
        let pairing = self.pairing.map(Arc::new);
        let playground_open =
            pairing.is_none() && self.auth.mode() == svc_application::services::auth::AuthMode::DevAllowAll;
        let secure = self.urls.base.starts_with("https://");
        let component_links = Arc::new(ComponentLinks::new(self.module_linker, self.agent.cpu_gate().clone()));
        let accounts_trust_proxy = self.accounts.as_ref().is_some_and(|a| a.trust_proxy);
        let agent = Arc::new(AgentRoutes {
            gate: gate.clone(),
            agent: self.agent.clone(),
            tokens: self.tokens.clone(),
            urls: self.urls,
            mcp_apps: self.mcp_apps,
            live_enabled: self.live_enabled,
            tool_call_limit: self.tool_call_limit,
            hosted_apps: self.hosted_apps,
            playground_url,
            read_templates: ReadTemplates::default(),
            escaped_code: EscapedComponents::default(),
            component_links: component_links.clone(),
            held: self.held_requests.clone(),
            streamed_renders: self.streamed_renders,
        });
        let ops = Arc::new(OpsRoutes {
            gate: gate.clone(),
            ops: self.ops,
        });
        let key_watch = crate::live::key_watch(
            self.auth.clone(),
            self.live_timings.key_recheck,
            self.live_sockets.clone(),
        );
        let live = Arc::new(LiveRoutes {
            agent: self.agent.clone(),
            auth: self.auth,
            key_watch,
            tokens: self.tokens,
            tool_channels: self.tool_channels,
            polling_flood_gates: self.polling_flood_gates,
            sockets: self.live_sockets,
            timings: self.live_timings,
            held: self.held_requests.clone(),
            component_links,
            replay_budget: Default::default(),
            parsed_json: self.parsed_json,
        });
        RouteStates {
            console: Arc::new(ConsoleRoutes {
                sessions: self.console,
                ops: ops.clone(),
                pairing: pairing.clone(),
                secure,
                trust_proxy: accounts_trust_proxy,
            }),
            accounts: Arc::new(AccountRoutes { pages: self.accounts }),
            playground: Arc::new(PlaygroundRoutes {
                open: playground_open,
                agent: agent.clone(),
                live: live.clone(),
            }),
            agent,
            ops,
            live,
            rest: Arc::new(RestRoutes {
                oauth: self.oauth,
                pairing,
            }),
            readiness: self.readiness,
            metrics: Arc::new(MetricsSources {
                agent: self.agent,
                pool_usage: self.pool_usage,
            }),
            gate,
        }
    }
}
