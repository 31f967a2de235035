//! The JSON-RPC label of a request for logs and metrics: a known tool's name for `tools/call`,
//! a known method otherwise. Anything a client made up is `unknown`, so a client cannot grow
//! the metrics without bound.

use serde_json::Value;

const METHODS: &[&str] = &[
    "initialize",
    "ping",
    "tools/list",
    "tools/call",
    "resources/list",
    "resources/templates/list",
    "resources/read",
    "prompts/list",
    "logging/setLevel",
];

pub(crate) fn rpc_label(method: &str, params: &Value) -> &'static str {
    if method == "tools/call" {
        let name = params["name"].as_str().unwrap_or_default();
        return crate::mcp::agent_tools::known(name)
            .or_else(|| crate::ops::tools::known(name))
            .unwrap_or("unknown");
    }
    METHODS
        .iter()
        .find(|known| **known == method)
        .copied()
        .unwrap_or("unknown")
}
