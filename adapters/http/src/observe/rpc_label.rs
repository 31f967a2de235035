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

pub(crate) fn rpc_label(method: &str, params: &Value) -> String {
    if method == "tools/call" {
        let name = params["name"].as_str().unwrap_or_default();
        let known = crate::mcp::agent_tools::known(name) || crate::ops::tools::known(name);
        return if known { name.to_owned() } else { "unknown".to_owned() };
    }
    METHODS
        .iter()
        .find(|known| **known == method)
        .map_or_else(|| "unknown".to_owned(), |known| (*known).to_owned())
}
