//! The agent tools: name, description, and an input schema generated from the argument type the
//! handler deserialises. Arguments are checked against that same schema before dispatch, so an
//! invalid argument is answered with -32602 naming the field and the rule.

use std::sync::{Arc, LazyLock};

use schemars::{JsonSchema, schema_for};
use serde_json::{Value, json};
use svc_protocol::*;

/// Who a host shows a tool to (MCP-Apps `_meta.ui.visibility`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Visibility {
    /// The agent's tools.
    Model,
    /// Runtime tools the mounted card calls; hidden from the model.
    App,
}

pub struct ToolSpec {
    pub name: &'static str,
    pub visibility: Visibility,
    pub description: &'static str,
    pub input_schema: Value,
    pub validator: Arc<jsonschema::Validator>,
}

pub(crate) fn spec<T: JsonSchema>(name: &'static str, description: &'static str) -> ToolSpec {
    spec_for::<T>(name, description, Visibility::Model)
}

fn app_spec<T: JsonSchema>(name: &'static str, description: &'static str) -> ToolSpec {
    spec_for::<T>(name, description, Visibility::App)
}

fn spec_for<T: JsonSchema>(name: &'static str, description: &'static str, visibility: Visibility) -> ToolSpec {
    let mut schema = serde_json::to_value(schema_for!(T)).expect("schemas serialise");
    if let Some(map) = schema.as_object_mut() {
        map.remove("title");
    }
    let validator = jsonschema::validator_for(&schema).expect("generated schemas compile");
    ToolSpec {
        name,
        visibility,
        description,
        input_schema: schema,
        validator: Arc::new(validator),
    }
}

pub static AGENT_TOOLS: LazyLock<Vec<ToolSpec>> = LazyLock::new(|| {
    vec![
        spec::<HandshakeArgs>(
            "svc_handshake",
            "Negotiate a data contract for a UI before rendering. Returns a single-use handshakeId (10 minutes), the suggestion (cache, agent or synth origin) and the enforced props schema hash.",
        ),
        spec::<RenderArgs>(
            "svc_render",
            "Render a UI card from a handshake. Read `outcome` first: rendered (a card and its ui:// resource), failed (generation produced nothing) or refused (nothing ran; follow refusal.fix).",
        ),
        spec::<ConsumeArgs>(
            "svc_consume",
            "Drain the user's gestures on a rendered card. Long-polls up to `timeout` seconds (0 to 25) for the first one; re-call on an empty result until `status` is expired.",
        ),
        spec::<UpdateArgs>(
            "svc_update",
            "Render updated state as a new card in the history (epoch N+1). `replace` takes props; `merge` takes an RFC 7396 patch. Equal props are a no-op.",
        ),
        spec::<UpdateArgs>(
            "svc_amend",
            "Repaint the mounted card in place with new props; no new card, same epoch.",
        ),
        spec::<EmitArgs>(
            "svc_emit",
            "Push a payload on a stream channel declared in the contract's streamSpec.",
        ),
        spec::<SessionIdArgs>(
            "svc_get_session",
            "Read a render's session record; bumps its activity heartbeat.",
        ),
        spec::<SessionIdArgs>(
            "svc_get_render_source",
            "Read the TSX source, contract and live props behind a render.",
        ),
        spec::<ListSessionsArgs>(
            "svc_list_sessions",
            "List the app's renders, newest last, optionally for one host conversation.",
        ),
        spec::<AppScopedArgs>(
            "svc_list_gadgets",
            "List the gadget packages (hooks and components) generated UI may import.",
        ),
        spec::<AppScopedArgs>("svc_list_themes", "List the theme presets a render may use as themeId."),
        spec::<NoArgs>(
            "svc_list_featured_blueprints",
            "List the featured blueprints (manifest UIs and cached components) as starting points.",
        ),
        spec::<SearchBlueprintsArgs>(
            "svc_search_blueprints",
            "Search manifest UIs and cached blueprints by name, description and meaning; best first, score 0 to 1.",
        ),
        spec::<RenderBlueprintArgs>(
            RENDER_BLUEPRINT,
            "Fetch a manifest UI's compiled ES-module bundle by its svc.ui.json id; creates no session.",
        ),
        spec::<super::discover::DiscoverInput>(
            DISCOVER,
            "Hosted deployments: the protocol revision, content, shell and adapter types, component capabilities, and the caller's app settings.",
        ),
        app_spec::<RefreshWsTokenArgs>(
            "svc_runtime_refresh_ws_token",
            "Runtime: mint a fresh wsToken for a mounted card's live channel.",
        ),
        app_spec::<SyncContextArgs>(
            "svc_runtime_sync_context",
            "Runtime: store the card's contextSpec slot values.",
        ),
    ]
});

/// Offered only when the server has a UI registry (Document 1).
pub const RENDER_BLUEPRINT: &str = "svc_render_blueprint";

/// Offered only in hosted deployments (Document 1).
pub const DISCOVER: &str = "svc_discover";

/// Whether `tools/list` shows the tool and `tools/call` accepts it on this server.
pub fn offered(state: &crate::HttpState, tool: &ToolSpec) -> bool {
    match tool.name {
        RENDER_BLUEPRINT => state.agent.has_ui_registry(),
        DISCOVER => state.hosted_apps.is_some(),
        _ => true,
    }
}

pub fn find(name: &str) -> Option<&'static ToolSpec> {
    AGENT_TOOLS.iter().find(|t| t.name == name)
}

/// The `tools/list` entry of a tool.
pub fn declaration(tool: &ToolSpec) -> Value {
    let mut ui = match tool.visibility {
        Visibility::Model => json!({ "visibility": ["model"] }),
        Visibility::App => json!({ "visibility": ["app"] }),
    };
    if tool.name == "svc_render" {
        // Hosts that link a UI to a tool by declaration mount the shell and hand it the result.
        ui["resourceUri"] = json!("ui://svc/render");
    }
    json!({
        "name": tool.name,
        "description": tool.description,
        "inputSchema": tool.input_schema,
        "_meta": { "ui": ui },
    })
}

/// The first schema violation of `arguments`, as `field: rule`.
pub fn check_arguments(tool: &ToolSpec, arguments: &Value) -> Result<(), String> {
    match tool.validator.iter_errors(arguments).next() {
        None => Ok(()),
        Some(e) => {
            let path = e.instance_path().to_string();
            let field = if path.is_empty() {
                "arguments".to_owned()
            } else {
                path.trim_start_matches('/').replace('/', ".")
            };
            // The rule, quoting at most an excerpt of the offending value.
            let quoted = svc_domain::text::excerpt(&e.instance().to_string()).into_owned();
            Err(format!("{field}: {}", e.masked_with(quoted)))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_schema_is_an_object_schema() {
        for tool in AGENT_TOOLS.iter() {
            assert_eq!(tool.input_schema["type"], "object", "{}", tool.name);
        }
    }

    #[test]
    fn violations_name_the_field() {
        let consume = find("svc_consume").unwrap();
        let err = check_arguments(consume, &json!({ "sessionId": "s", "timeout": 30 })).unwrap_err();
        assert!(err.starts_with("timeout: "), "{err}");
        let err = check_arguments(consume, &json!({})).unwrap_err();
        assert!(err.contains("sessionId"), "{err}");
    }
}
