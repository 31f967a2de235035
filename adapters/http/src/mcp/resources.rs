//! `resources/*`: the mount shell `ui://svc/render` and per-render mounts
//! `ui://svc/render/<sessionId>` (optionally `#<epoch>`), as MCP-Apps HTML resources.

use serde_json::{Value, json};
use svc_application::services::agent::{AgentError, Caller};
use svc_protocol::{INVALID_PARAMS, MOUNT_UNAVAILABLE, SESSION_NOT_FOUND};

use super::jsonrpc::RpcFailure;
use crate::HttpState;

const SHELL_URI: &str = "ui://svc/render";
const MIME: &str = "text/html;profile=mcp-app";

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
    value.to_string().replace('<', "\\u003c").replace('>', "\\u003e").replace('&', "\\u0026")
}

fn document(state: &HttpState, bootstrap: &Value) -> String {
    format!(
        "<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>svc render</title>\
<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\"></head>\
<body><div id=\"svc-root\"></div>\
<script type=\"application/json\" id=\"svc-bootstrap\">{}</script>\
<script type=\"module\" src=\"{}/_svc/iframe-runtime.js\"></script></body></html>",
        script_json(bootstrap),
        state.urls.base
    )
}

fn contents(state: &HttpState, uri: &str, bootstrap: Value) -> Value {
    let ws_origin = state.urls.ws.trim_end_matches("/ws").to_owned();
    json!({ "contents": [{
        "uri": uri,
        "mimeType": MIME,
        "text": document(state, &bootstrap),
        "_meta": { "ui": { "csp": { "connectDomains": [ws_origin], "resourceDomains": [state.urls.base] } } },
    }] })
}

pub async fn read(state: &HttpState, caller: &Caller, params: &Value) -> Result<Value, RpcFailure> {
    let Some(uri) = params["uri"].as_str() else {
        return Err(RpcFailure::new(INVALID_PARAMS, "Invalid params: uri: a resource URI is required"));
    };
    if uri == SHELL_URI {
        return Ok(contents(state, uri, json!({ "shell": true })));
    }
    let Some(locator) = uri.strip_prefix("ui://svc/render/") else {
        return Err(not_found());
    };
    let (session_id, epoch) = match locator.split_once('#') {
        Some((id, n)) => (id, Some(n.parse::<u32>().map_err(|_| not_found())?)),
        None => (locator, None),
    };
    let session = state.agent.session_for(caller, session_id).await.map_err(|e| match e {
        AgentError::SessionNotFound => not_found(),
        other => {
            tracing::error!(error = ?other, "resources/read failed");
            RpcFailure::new(svc_protocol::INTERNAL_ERROR, "Internal error")
        }
    })?;
    if session.blueprint_id.is_none() {
        let message = session.failure.map(|f| f.message).unwrap_or_default();
        return Err(RpcFailure::new(MOUNT_UNAVAILABLE, "Mount unavailable").with_data(json!({ "code": "NOT_MOUNTABLE", "message": message })));
    }
    let epoch = epoch.unwrap_or(session.head.epoch);
    let props = state.agent.props_at(caller, session_id, epoch).await.map_err(|_| not_found())?.ok_or_else(not_found)?;
    Ok(contents(state, uri, json!({ "sessionId": session_id, "epoch": epoch, "props": props, "frozen": epoch != session.head.epoch })))
}
