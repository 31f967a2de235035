//! The agent tools of `/mcp` and `/apps/<appId>/mcp`: one file per tool, one line per tool in
//! [`AGENT_TOOLS`]. `tools/list` (built once per server configuration) and `tools/call` both
//! read this table.

mod amend;
mod consume;
mod discover;
mod emit;
mod featured_blueprints;
mod get_render_source;
mod get_session;
mod handshake;
mod list_gadgets;
mod list_sessions;
mod list_themes;
mod refresh_ws_token;
mod render;
mod render_blueprint;
mod search_blueprints;
mod sync_context;
mod update;

pub use render::Render;

use std::future::Future;
use std::net::IpAddr;
use std::pin::Pin;
use std::sync::{LazyLock, OnceLock};

use serde_json::{Value, json};
use svc_application::services::agent::Caller;

use super::errors::ToolFailure;
use super::jsonrpc::{Reply, RpcFailure};
use crate::route_states::AgentRoutes;
use crate::tools::{Answer, Declared, ToolDefinition, parse_arguments};

/// What an agent tool runs with.
pub struct AgentCtx<'r> {
    pub state: &'r AgentRoutes,
    pub caller: &'r Caller,
    /// The remote address the call is counted against (the public-demo generation limit).
    pub origin: IpAddr,
    /// The request's `_meta` (`ai.svc/host-session`, `progressToken`).
    pub meta: &'r Value,
}

/// An agent tool's handler.
pub trait AgentTool: ToolDefinition {
    fn call(
        ctx: &AgentCtx<'_>,
        input: Self::Input,
    ) -> impl Future<Output = Result<Answer<Self::Output>, ToolFailure>> + Send;
}

/// Who a host shows a tool to (MCP-Apps `_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// The agent's tools.
    Model,
    /// Runtime tools the mounted card calls; hidden from the model.
    App,
}

type Handler = for<'a, 'r> fn(&'a AgentCtx<'r>, Value) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'a>>;
type Outcome = Result<Reply, ToolFailure>;

pub struct AgentToolEntry {
    pub declared: Declared,
    pub visibility: Visibility,
    /// The `ui://` resource a host mounts for the tool's result (MCP-Apps `_meta.ui.resourceUri`).
    resource_uri: Option<&'static str>,
    /// Whether this server offers the tool at all.
    offered_when: fn(&AgentRoutes) -> bool,
    handler: Handler,
}

fn run<'a, 'r, T: AgentTool>(
    ctx: &'a AgentCtx<'r>,
    arguments: Value,
) -> Pin<Box<dyn Future<Output = Outcome> + Send + 'a>> {
    Box::pin(async move {
        let input = parse_arguments::<T::Input>(arguments)?;
        T::call(ctx, input).await?.into_reply()
    })
}

fn model<T: AgentTool>() -> AgentToolEntry {
    handled_by::<T>(run::<T>)
}

/// A model tool whose handler answers a [`Reply`] itself (one that may be [`Reply::Later`]).
fn handled_by<T: ToolDefinition>(handler: Handler) -> AgentToolEntry {
    AgentToolEntry {
        declared: Declared::of::<T>(),
        visibility: Visibility::Model,
        resource_uri: None,
        offered_when: |_| true,
        handler,
    }
}

/// A tool's outcome as a JSON-RPC result: a tool failure is a result with `isError`, a protocol
/// failure the JSON-RPC error.
pub(crate) fn into_rpc(outcome: Outcome) -> Result<Reply, RpcFailure> {
    match outcome {
        Ok(result) => Ok(result),
        Err(ToolFailure::Result(result)) => Ok(Reply::Built(result)),
        Err(ToolFailure::Rpc(failure)) => Err(failure),
    }
}

fn app<T: AgentTool>() -> AgentToolEntry {
    AgentToolEntry {
        visibility: Visibility::App,
        ..model::<T>()
    }
}

impl AgentToolEntry {
    fn mounting(self, resource_uri: &'static str) -> Self {
        Self {
            resource_uri: Some(resource_uri),
            ..self
        }
    }

    fn offered_when(self, offered_when: fn(&AgentRoutes) -> bool) -> Self {
        Self { offered_when, ..self }
    }

    pub fn name(&self) -> &'static str {
        self.declared.name
    }

    /// Whether `tools/list` shows the tool and `tools/call` accepts it on this server.
    pub fn offered(&self, state: &AgentRoutes) -> bool {
        (self.offered_when)(state)
    }

    pub async fn call(&self, ctx: &AgentCtx<'_>, arguments: Value) -> Outcome {
        (self.handler)(ctx, arguments).await
    }

    /// The `tools/list` entry, with `_meta.ui` for MCP-Apps hosts.
    fn declaration(&self, mcp_apps: bool) -> Value {
        let mut declaration = self.declared.declaration();
        if mcp_apps {
            let mut ui = match self.visibility {
                Visibility::Model => json!({ "visibility": ["model"] }),
                Visibility::App => json!({ "visibility": ["app"] }),
            };
            // Hosts that link a UI to a tool by declaration mount the shell and hand it the result.
            if let Some(uri) = self.resource_uri {
                ui["resourceUri"] = json!(uri);
            }
            declaration["_meta"] = json!({ "ui": ui });
        }
        declaration
    }
}

pub static AGENT_TOOLS: LazyLock<Vec<AgentToolEntry>> = LazyLock::new(|| {
    vec![
        model::<handshake::Handshake>(),
        model::<render::Render>().mounting(super::resources::SHELL_URI),
        handled_by::<consume::Consume>(consume::answer_held_apart),
        model::<update::Update>(),
        model::<amend::Amend>(),
        model::<emit::Emit>(),
        model::<get_session::GetSession>(),
        model::<get_render_source::GetRenderSource>(),
        model::<list_sessions::ListSessions>(),
        model::<list_gadgets::ListGadgets>(),
        model::<list_themes::ListThemes>(),
        model::<featured_blueprints::FeaturedBlueprints>(),
        model::<search_blueprints::SearchBlueprints>(),
        model::<render_blueprint::RenderBlueprint>().offered_when(|state| state.agent.has_ui_registry()),
        model::<discover::Discover>().offered_when(|state| state.hosted_apps.is_some()),
        // A wsToken opens the live channel: without it there is nothing to refresh.
        app::<refresh_ws_token::RefreshWsToken>().offered_when(mints_ws_tokens),
        app::<sync_context::SyncContext>(),
    ]
});

/// The tool of that name this server offers.
pub fn find(state: &AgentRoutes, name: &str) -> Option<&'static AgentToolEntry> {
    AGENT_TOOLS.iter().find(|t| t.name() == name && t.offered(state))
}

/// The name of the tool of that name on any server, if there is one (a bounded metrics label).
pub fn known(name: &str) -> Option<&'static str> {
    AGENT_TOOLS
        .iter()
        .map(AgentToolEntry::name)
        .find(|known| *known == name)
}

/// The `tools/list` result, built once per server configuration: the runtime tools a mounted card
/// calls through its MCP-Apps host (`visibility: ["app"]`) are listed only with MCP-Apps on
/// (without it no host bridges them, and the model must not take them for its own), and so is
/// `_meta.ui`.
pub fn list(state: &AgentRoutes) -> bytes::Bytes {
    static LISTS: [OnceLock<bytes::Bytes>; 16] = [const { OnceLock::new() }; 16];
    let mcp_apps = state.mcp_apps_on();
    let registry = state.agent.has_ui_registry();
    let hosted = state.hosted_apps.is_some();
    let live = mints_ws_tokens(state);
    let slot = usize::from(mcp_apps) * 8 + usize::from(registry) * 4 + usize::from(hosted) * 2 + usize::from(live);
    LISTS[slot]
        .get_or_init(|| {
            let tools: Vec<Value> = AGENT_TOOLS
                .iter()
                .filter(|t| t.offered(state) && (mcp_apps || t.visibility == Visibility::Model))
                .map(|t| t.declaration(mcp_apps))
                .collect();
            bytes::Bytes::from(json!({ "tools": tools }).to_string())
        })
        .clone()
}

/// Whether this server supplies the seam that mints wsTokens into tool results (Document 1: "the
/// `wsToken` pair appears only when the deployment supplies a token-minting seam"): the live
/// channel a wsToken opens. `svc_list_sessions`' rows follow it; `svc_render` carries its token
/// in the MCP-Apps `_meta` slice, whose option needs the live channel on.
pub(crate) fn mints_ws_tokens(state: &AgentRoutes) -> bool {
    state.live_enabled
}

/// `ui://svc/render/<sessionId>`: the resource of one render.
pub fn render_uri(session_id: &str) -> String {
    format!("{}/{session_id}", super::resources::SHELL_URI)
}

impl AsRef<Declared> for AgentToolEntry {
    fn as_ref(&self) -> &Declared {
        &self.declared
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_an_object_schema_and_names_are_unique() {
        let mut names: Vec<&str> = AGENT_TOOLS.iter().map(|t| t.name()).collect();
        for tool in AGENT_TOOLS.iter() {
            assert_eq!(tool.declared.input_schema["type"], "object", "{}", tool.name());
            assert_eq!(tool.declared.output_schema["type"], "object", "{}", tool.name());
        }
        let count = names.len();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), count, "a tool name is registered twice");
    }

    #[test]
    fn violations_name_the_field() {
        let consume = AGENT_TOOLS.iter().find(|t| t.name() == consume::Consume::NAME).unwrap();
        let err = consume
            .declared
            .check_arguments(&json!({ "sessionId": "s", "timeout": 30 }))
            .unwrap_err();
        assert!(err.starts_with("timeout: "), "{err}");
        let err = consume.declared.check_arguments(&json!({})).unwrap_err();
        assert!(err.contains("sessionId"), "{err}");
    }
}

/// The counts a draft contract and a variance may reach, stated in the published schemas and
/// checked against them (`svc_domain::contract::draft_limits`, `svc_domain::blueprint::variance_patch`).
#[cfg(test)]
mod draft_bounds {
    use serde_json::{Map, Value, json};

    use super::*;

    fn declared(name: &str) -> &'static Declared {
        &AGENT_TOOLS.iter().find(|t| t.name() == name).unwrap().declared
    }

    fn named(count: usize, name: impl Fn(usize) -> String, value: impl Fn(usize) -> Value) -> Map<String, Value> {
        (0..count).map(|i| (name(i), value(i))).collect()
    }

    fn handshake_with(contract: Value, variance: Option<Value>) -> Value {
        let mut draft = json!({ "contract": contract });
        if let Some(v) = variance {
            draft["variance"] = v;
        }
        json!({ "intent": "order card", "blueprintDraft": draft })
    }

    /// A contract whose every counted part is at its cap.
    fn contract_at_the_caps(entries: usize, tools: usize) -> Value {
        let entry = |_| json!({ "schema": {}, "description": "d" });
        let section = named(entries, |i| format!("e{i}"), entry);
        let gadgets = named(64, |i| format!("{}{i:02}", "p".repeat(212)), |_| json!("v".repeat(128)));
        let tool_names: Vec<String> = (0..tools).map(|i| format!("{}{i:02}", "t".repeat(126))).collect();
        let mut contract = json!({
            "propsSpec": { "type": "object" },
            "actionSpec": section,
            "streamSpec": section,
            "contextSpec": section,
            "clientCapabilities": { "gadgets": gadgets },
            "agentCapabilities": { "tools": tool_names },
        });
        for i in 0..10 {
            contract[format!("extra{i}")] = json!(i);
        }
        contract
    }

    #[test]
    fn the_schemas_publish_the_caps() {
        let handshake = &declared(handshake::Handshake::NAME).input_schema;
        let draft = &handshake["properties"]["blueprintDraft"];
        let draft = match draft.get("$ref").and_then(Value::as_str) {
            Some(r) => &handshake["$defs"][r.trim_start_matches("#/$defs/")],
            None => draft,
        };
        let contract = &draft["properties"]["contract"];
        assert_eq!(contract["maxProperties"], 16);
        assert_eq!(contract["properties"]["actionSpec"]["maxProperties"], 64);
        assert_eq!(
            contract["properties"]["agentCapabilities"]["properties"]["tools"]["maxItems"],
            64
        );
        assert_eq!(draft["properties"]["variance"]["maxProperties"], 32);
        assert_eq!(draft["properties"]["generator"]["maxLength"], 64);
        let render = &declared(render::Render::NAME).input_schema;
        let over = &render["properties"]["override"]["properties"];
        assert_eq!(over["variance"]["maxProperties"], 32);
        assert_eq!(over["contract"]["maxProperties"], 16);
    }

    #[test]
    fn a_draft_at_the_caps_is_taken_and_one_past_is_refused() {
        let handshake = declared(handshake::Handshake::NAME);
        let variance = named(32, |i| format!("{}{i:02}", "n".repeat(62)), |_| json!("é".repeat(200)));
        let at_the_caps = handshake_with(contract_at_the_caps(64, 64), Some(Value::Object(variance.clone())));
        assert_eq!(handshake.check_arguments(&at_the_caps), Ok(()));
        let mut generator = handshake_with(json!({}), None);
        generator["blueprintDraft"]["generator"] = json!("g".repeat(64));
        assert_eq!(handshake.check_arguments(&generator), Ok(()));

        let mut too_many_keys = contract_at_the_caps(1, 1);
        too_many_keys["extra10"] = json!(10);
        let mut too_many_fields = variance.clone();
        too_many_fields.insert("one more".into(), json!("x"));
        let mut entry_keys = named(16, |i| format!("k{i}"), |_| json!(1));
        entry_keys.insert("schema".into(), json!({}));
        let refusals = [
            (
                handshake_with(too_many_keys, None),
                "blueprintDraft.contract",
                "has more than 16 properties",
            ),
            (
                handshake_with(contract_at_the_caps(65, 1), None),
                "blueprintDraft.contract.actionSpec",
                "has more than 64 properties",
            ),
            (
                handshake_with(json!({ "streamSpec": { "log": entry_keys } }), None),
                "blueprintDraft.contract.streamSpec.log",
                "has more than 16 properties",
            ),
            (
                handshake_with(contract_at_the_caps(1, 65), None),
                "blueprintDraft.contract.agentCapabilities.tools",
                "has more than 64 items",
            ),
            (
                handshake_with(json!({ "agentCapabilities": { "tools": ["t".repeat(129)] } }), None),
                "blueprintDraft.contract.agentCapabilities.tools.0",
                "is longer than 128 characters",
            ),
            (
                handshake_with(
                    json!({ "clientCapabilities": { "gadgets": { "p".repeat(215): "1" } } }),
                    None,
                ),
                "blueprintDraft.contract.clientCapabilities.gadgets",
                "is longer than 214 characters",
            ),
            (
                handshake_with(
                    json!({ "clientCapabilities": { "gadgets": { "p": "v".repeat(129) } } }),
                    None,
                ),
                "blueprintDraft.contract.clientCapabilities.gadgets.p",
                "is longer than 128 characters",
            ),
            (
                handshake_with(json!({}), Some(Value::Object(too_many_fields))),
                "blueprintDraft.variance",
                "has more than 32 properties",
            ),
            (
                handshake_with(json!({}), Some(json!({ "n".repeat(65): "x" }))),
                "blueprintDraft.variance",
                "is longer than 64 characters",
            ),
            (
                handshake_with(json!({}), Some(json!({ "tone": "é".repeat(201) }))),
                "blueprintDraft.variance.tone",
                "is longer than 200 characters",
            ),
            (
                handshake_with(json!({}), Some(json!({ "layout": { "nested": "document" } }))),
                "blueprintDraft.variance.layout",
                "{\"nested\":\"document\"} is not of types \"boolean\", \"number\", \"string\"",
            ),
        ];
        for (arguments, field, rule) in refusals {
            let err = handshake.check_arguments(&arguments).unwrap_err();
            assert!(
                err.starts_with(&format!("{field}: ")) && err.ends_with(rule),
                "{field}: {err}"
            );
        }
        let mut generator = handshake_with(json!({}), None);
        generator["blueprintDraft"]["generator"] = json!("g".repeat(65));
        assert_eq!(
            handshake.check_arguments(&generator),
            Err(format!(
                "blueprintDraft.generator: \"{}\" is longer than 64 characters",
                "g".repeat(65)
            ))
        );
    }

    #[test]
    fn an_override_at_the_caps_is_taken_and_one_past_is_refused() {
        let render = declared(render::Render::NAME);
        let with = |over: Value| json!({ "handshakeId": "h", "props": {}, "override": over });
        let mut variance = named(31, |i| format!("{}{i:02}", "n".repeat(62)), |_| json!(3));
        variance.insert("dense".into(), Value::Null);
        let at_the_caps = with(json!({ "contract": contract_at_the_caps(64, 64), "variance": variance }));
        assert_eq!(render.check_arguments(&at_the_caps), Ok(()));
        let mut too_many = variance.clone();
        too_many.insert("one more".into(), json!(true));
        for (over, field, rule) in [
            (
                json!({ "variance": too_many }),
                "override.variance",
                "has more than 32 properties",
            ),
            (
                json!({ "variance": { "axes": ["a"] } }),
                "override.variance.axes",
                "[\"a\"] is not of types \"null\", \"boolean\", \"number\", \"string\"",
            ),
            (
                json!({ "contract": contract_at_the_caps(65, 1) }),
                "override.contract.actionSpec",
                "has more than 64 properties",
            ),
        ] {
            let err = render.check_arguments(&with(over)).unwrap_err();
            assert!(
                err.starts_with(&format!("{field}: ")) && err.ends_with(rule),
                "{field}: {err}"
            );
        }
    }
}
