//! `/mcp`: MCP over Streamable HTTP, stateless. POST carries one JSON-RPC message and is answered
//! with `application/json`; notifications get 202. No `Mcp-Session-Id` is issued or needed.

pub(crate) mod agent_tools;
pub(crate) mod answer_pieces;
pub(crate) mod app_endpoint;
pub(crate) mod cancellation;
pub(crate) mod discover;
pub(crate) mod escaped_code;
pub(crate) mod jsonrpc;
mod later;
mod pieces_body;
mod progress_stream;
pub(crate) mod read_templates;
mod render_meta;
mod resource_uri;
pub(crate) mod resources;
pub(crate) mod results;
mod theme_json;

use std::future::Future;
use std::net::IpAddr;
use std::sync::Arc;

use crate::content_coding::ContentCoding;
use poem::http::StatusCode;
use poem::web::Data;
use poem::{Body, IntoResponse, Request, Response, handler};
use serde_json::{Value, json};
use svc_application::services::agent::Caller;
use svc_application::services::auth::AuthError;
use svc_domain::text as input;
use svc_protocol::{AGENT_SYSTEM_PROMPT, INTERNAL_ERROR, INVALID_PARAMS, MCP_PROTOCOL_VERSIONS, METHOD_NOT_FOUND};

use crate::errors::{self, ToolFailure, auth_failure};
use crate::parsed_json_budget::ParsedJsonReservation;
use crate::route_states::{AgentRoutes, Gate};
use crate::tools::Declared;
use agent_tools::AgentCtx;
use cancellation::CancelScope;
use jsonrpc::{Incoming, Reply, RpcFailure, success};

/// Largest accepted request body.
pub(crate) const MAX_BODY_BYTES: usize = 4 * 1024 * 1024;

pub(crate) fn bearer(req: &Request) -> Option<String> {
    bearer_token(req).map(str::to_owned)
}

fn bearer_token(req: &Request) -> Option<&str> {
    let value = req.header(poem::http::header::AUTHORIZATION)?;
    let (scheme, token) = value.split_once(' ')?;
    scheme.eq_ignore_ascii_case("bearer").then(|| token.trim())
}

async fn authenticate(gate: &Gate, req: &Request) -> Result<Caller, AuthError> {
    gate.auth.authenticate(bearer_token(req)).await
}

/// The answer to a failed authentication of `/mcp`; the body is read only to echo the request's
/// id in a refusal.
async fn denied(gate: &Gate, error: AuthError, body: Body) -> Response {
    if let AuthError::AppDeprovisioned(app_id) = error {
        return app_endpoint::deprovisioned_response(app_id, body).await;
    }
    let mut response = auth_failure(error);
    // With OAuth on, the challenge also names the protected-resource metadata (RFC 9728).
    if response.status() == StatusCode::UNAUTHORIZED
        && let Ok(challenge) = gate.challenges.mcp().parse()
    {
        response.headers_mut().insert("www-authenticate", challenge);
    }
    response
}

/// Reads one JSON-RPC message from a POST body and answers a request with `dispatch(method,
/// params)`, cancellable by the same sender's `notifications/cancelled`; notifications and client
/// responses get 202.
pub(crate) async fn answer<F, Fut>(
    gate: &Gate,
    body: Body,
    scope: CancelScope,
    coding: ContentCoding,
    dispatch: F,
) -> Response
where
    F: FnOnce(String, Value) -> Fut,
    Fut: Future<Output = Result<Reply, RpcFailure>>,
{
    match read_message(gate, body).await {
        Ok((incoming, reserved)) => reserved.held_by(answer_message(incoming, scope, coding, dispatch).await),
        Err(refusal) => refusal,
    }
}

/// The message in a POST body, and its weight parsed reserved from the gate's budget until the
/// reservation is dropped (`parsed_json_budget.rs`). A body over [`MAX_BODY_BYTES`] is answered
/// 413 (one that stopped arriving 408: [`crate::body_limit::Unread`]), one that is not a
/// JSON-RPC message the JSON-RPC refusal, one over what the budget has left 503 and one over the
/// whole budget 413, before anything is parsed.
async fn read_message(gate: &Gate, body: Body) -> Result<(Incoming, ParsedJsonReservation), Response> {
    let bytes = crate::body_limit::read_limited(body, MAX_BODY_BYTES)
        .await
        .map_err(|unread| unread.refusal(MAX_BODY_BYTES))?;
    let refused = |failure: RpcFailure| failure.into_response(Value::Null);
    let weight = svc_protocol::jsonrpc::request_weight(&bytes).map_err(|refusal| refused(jsonrpc::refusal(refusal)))?;
    let reserved = gate
        .parsed_json
        .reserve(weight)
        .map_err(|over| gate.parsed_json.refusal(over))?;
    // The bytes may share hyper's read buffer; they are dropped here, so a held request (a
    // long-poll) does not pin it.
    let incoming = jsonrpc::parse(&bytes).map_err(refused)?;
    Ok((incoming, reserved))
}

/// [`answer`] for a message already read; `coding` is what the client accepts (kept answers are
/// sent compressed when it accepts gzip).
async fn answer_message<F, Fut>(incoming: Incoming, scope: CancelScope, coding: ContentCoding, dispatch: F) -> Response
where
    F: FnOnce(String, Value) -> Fut,
    Fut: Future<Output = Result<Reply, RpcFailure>>,
{
    match incoming {
        Incoming::NoReply => StatusCode::ACCEPTED.into_response(),
        Incoming::Notification { method, params } => {
            if method == "notifications/cancelled" {
                scope.requests.cancel(scope.sender, &params);
            }
            StatusCode::ACCEPTED.into_response()
        }
        Incoming::Request { id, method, params } => {
            let label = crate::observe::rpc_label(&method, &params);
            let mut response = match scope.requests.run(scope.sender, &id, dispatch(method, params)).await {
                // Still cancellable while it waits, after this handler returned.
                Ok(Reply::Later(later)) => success(id.clone(), Reply::Later(later.cancellable(scope, id)), coding),
                Ok(result) => success(id, result, coding),
                Err(failure) => failure.into_response(id),
            };
            response.extensions_mut().insert(crate::observe::RpcLabel(label));
            response
        }
    }
}

/// An authenticated agent's POST to `/mcp` or `/apps/<appId>/mcp`: a `svc_render` with a
/// progress token, from a client that accepts an event stream, streams its progress; any other
/// message is answered with [`reply`].
pub(crate) async fn serve_agent_post(state: &Arc<AgentRoutes>, req: &Request, caller: Caller, body: Body) -> Response {
    let origin = origin(&state.gate, req);
    let (incoming, reserved) = match read_message(&state.gate, body).await {
        Ok(read) => read,
        Err(refusal) => return refusal,
    };
    let scope = cancel_scope(&state.gate, req, "mcp", &caller);
    let incoming = match progress_stream::wanted(req, incoming) {
        progress_stream::Answered::Streamed(request) => {
            // The render's task holds the reservation: it runs on after a client hangs up.
            return progress_stream::answer(Arc::clone(state), caller, origin, scope.sender, request, reserved).await;
        }
        progress_stream::Answered::Plain(incoming) => incoming,
    };
    let answer = answer_message(
        incoming,
        scope,
        ContentCoding::accepted_by(req),
        |method, params| async move { reply(state, &caller, origin, &method, params).await },
    )
    .await;
    reserved.held_by(answer)
}

/// The requests one client sends to one route (`/mcp`, `/ops`). Many clients share a principal
/// (every bearer is `builder` under `--dev-allow-all`, every paired key is the owner) and JSON-RPC
/// ids are small counters, so the sender is the principal in its app plus the credential itself
/// and the client's address: one client cannot cancel another's request. They are kept as a
/// 64-bit hash under a key drawn at start (so no credential is held, and no client can aim at
/// another's hash): cheaper per request than the digest and text it replaced, and two live
/// senders share one by chance with odds of about n² in 2^65.
pub(crate) fn cancel_scope(gate: &Gate, req: &Request, route: &str, caller: &Caller) -> CancelScope {
    use std::hash::{BuildHasher, Hash, Hasher};
    static SENDER_KEY: std::sync::OnceLock<std::collections::hash_map::RandomState> = std::sync::OnceLock::new();
    let mut sender = SENDER_KEY.get_or_init(Default::default).build_hasher();
    (
        route,
        &caller.principal_id,
        &caller.app_id,
        bearer_token(req).unwrap_or_default(),
    )
        .hash(&mut sender);
    crate::client_address::client_ip(req, gate.trust_proxy).hash(&mut sender);
    CancelScope {
        requests: Arc::clone(&gate.in_flight),
        sender: cancellation::Sender(sender.finish()),
    }
}

/// MCP transport rule: a request whose `MCP-Protocol-Version` header names a revision this
/// server does not speak is answered 400 (no header: the client predates it, and is served).
pub(crate) fn unsupported_protocol_version(req: &Request) -> Option<Response> {
    let version = req.header("mcp-protocol-version")?;
    if MCP_PROTOCOL_VERSIONS.contains(&version) {
        return None;
    }
    let message = format!(
        "Bad Request: unsupported MCP-Protocol-Version {:?} (supported: {})",
        version.chars().take(40).collect::<String>(),
        MCP_PROTOCOL_VERSIONS.join(", ")
    );
    Some(
        RpcFailure::new(svc_protocol::INVALID_REQUEST, message)
            .with_status(StatusCode::BAD_REQUEST)
            .into_response(Value::Null),
    )
}

#[handler]
pub async fn post_mcp(req: &Request, body: Body, Data(state): Data<&Arc<AgentRoutes>>) -> Response {
    let gate = &state.gate;
    // Boxed: a held request (a long-poll) keeps a future sized for its own path, not for
    // authentication's queries or the refusal's (issue 18: memory per long-poll).
    let caller = match Box::pin(authenticate(gate, req)).await {
        Ok(c) => c,
        // A key bound to a deprovisioned app is refused as such before the protocol version is
        // read, as on `/apps/<appId>/mcp`.
        Err(error) => return Box::pin(denied(gate, error, body)).await,
    };
    if let Some(refusal) = unsupported_protocol_version(req) {
        return refusal;
    }
    serve_agent_post(state, req, caller, body).await
}

/// The answer to one request of `/mcp` or `/apps/<appId>/mcp`: `tools/list` is the document
/// serialized once per server configuration, `resources/read` a template serialized once per
/// state of the session, every other method is built by [`dispatch`].
pub(crate) async fn reply(
    state: &AgentRoutes,
    caller: &Caller,
    origin: IpAddr,
    method: &str,
    params: Value,
) -> Result<Reply, RpcFailure> {
    match method {
        "tools/list" => return Ok(Reply::Shared(agent_tools::list(state))),
        "resources/read" => return Box::pin(resources::read(state, caller, &params)).await,
        _ => {}
    }
    dispatch(state, caller, origin, method, params).await
}

/// The remote address a tool call is counted against (the public-demo generation limit).
pub(crate) fn origin(gate: &Gate, req: &Request) -> IpAddr {
    crate::client_address::client_ip(req, gate.trust_proxy)
}

/// Server-initiated streams are not offered (the server is stateless): 401 without
/// credentials, so clients discover auth, else 405.
#[handler]
pub async fn get_mcp(req: &Request, Data(gate): Data<&Arc<Gate>>) -> Response {
    post_only(gate, req).await
}

/// There is no MCP session to end.
#[handler]
pub async fn delete_mcp(req: &Request, Data(gate): Data<&Arc<Gate>>) -> Response {
    post_only(gate, req).await
}

async fn post_only(gate: &Gate, req: &Request) -> Response {
    if let Err(error) = authenticate(gate, req).await {
        let refused = denied(gate, error, Body::empty()).await;
        // `/ops` shares these handlers; its challenge names its own resource.
        return if req.uri().path() == "/ops" {
            gate.challenges.with_ops_challenge(refused)
        } else {
            refused
        };
    }
    let mut response = StatusCode::METHOD_NOT_ALLOWED.into_response();
    response
        .headers_mut()
        .insert("allow", "POST".parse().expect("static header"));
    response
}

/// Every method but `tools/list` and `resources/read` (see [`reply`]).
pub(crate) async fn dispatch(
    state: &AgentRoutes,
    caller: &Caller,
    origin: IpAddr,
    method: &str,
    params: Value,
) -> Result<Reply, RpcFailure> {
    match method {
        "initialize" => Box::pin(initialize(state, caller, &params)).await.map(Reply::Built),
        "ping" => Ok(Reply::Built(json!({}))),
        "tools/call" => call_tool(state, caller, origin, params).await,
        "resources/list" => Ok(Reply::Built(resources::list())),
        "resources/templates/list" => Ok(Reply::Built(resources::templates())),
        _ => Err(RpcFailure::new(METHOD_NOT_FOUND, format!("Method not found: {method}"))),
    }
}

/// The MCP revision `initialize` answers: the client's when we speak it, else our newest.
pub(crate) fn protocol_version(params: &Value) -> &'static str {
    let requested = params["protocolVersion"].as_str().unwrap_or_default();
    MCP_PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(MCP_PROTOCOL_VERSIONS[0])
}

async fn initialize(state: &AgentRoutes, caller: &Caller, params: &Value) -> Result<Value, RpcFailure> {
    let version = protocol_version(params);
    let app_prompt = state
        .agent
        .app_system_prompt(caller)
        .await
        .map_err(|e| match errors::map_agent_error(e) {
            ToolFailure::Rpc(failure) => failure,
            ToolFailure::Result(_) => RpcFailure::new(INTERNAL_ERROR, "Internal error"),
        })?;
    let instructions = match app_prompt {
        Some(extra) => format!("{AGENT_SYSTEM_PROMPT}\n\n{extra}"),
        None => AGENT_SYSTEM_PROMPT.to_owned(),
    };
    let mut capabilities = json!({
        "tools": { "listChanged": true },
        "resources": { "subscribe": false, "listChanged": false },
    });
    if state.mcp_apps_on() {
        capabilities["experimental"] = json!({ "io.modelcontextprotocol/ui": {} });
    }
    Ok(json!({
        "protocolVersion": version,
        "capabilities": capabilities,
        "serverInfo": { "name": "svc", "title": "svc generative UI server", "version": env!("CARGO_PKG_VERSION") },
        "instructions": instructions,
    }))
}

/// A `tools/call` taken apart: the tool it names, its arguments (checked) and its `_meta`.
pub(crate) struct ToolCall<'t, T> {
    pub tool: &'t T,
    pub arguments: Value,
    pub meta: Value,
}

/// The tool a `tools/call` names (looked up with `find`) and its arguments, checked against the
/// tool's schema: -32602 naming the field and the rule otherwise. The arguments and `_meta` are
/// moved out of `params`, not copied.
pub(crate) fn tool_call<'t, T: AsRef<Declared>>(
    params: Value,
    find: impl FnOnce(&str) -> Option<&'t T>,
) -> Result<ToolCall<'t, T>, RpcFailure> {
    let mut params = match params {
        Value::Object(members) => members,
        _ => serde_json::Map::new(),
    };
    let Some(name) = params.get("name").and_then(Value::as_str) else {
        return Err(RpcFailure::new(
            INVALID_PARAMS,
            "Invalid params: name: a tool name is required",
        ));
    };
    let Some(tool) = find(name) else {
        return Err(RpcFailure::new(
            INVALID_PARAMS,
            format!("Invalid params: name: unknown tool `{}`", input::excerpt(name)),
        ));
    };
    let arguments = match params.remove("arguments") {
        None | Some(Value::Null) => json!({}),
        Some(a) => a,
    };
    let invalid = |rule: String| RpcFailure::new(INVALID_PARAMS, format!("Invalid params: {rule}"));
    tool.as_ref().check_arguments(&arguments).map_err(invalid)?;
    // Text no store can hold, in the arguments or in `_meta` (the host session is stored).
    if let Some(path) = input::nul_path(&arguments) {
        let field = if path.is_empty() { "arguments".to_owned() } else { path };
        return Err(invalid(format!("{field}: {}", input::NUL_RULE)));
    }
    let meta = params.remove("_meta").unwrap_or(Value::Null);
    if let Some(path) = input::nul_path(&meta) {
        return Err(invalid(format!("_meta.{path}: {}", input::NUL_RULE)));
    }
    Ok(ToolCall { tool, arguments, meta })
}

async fn call_tool(state: &AgentRoutes, caller: &Caller, origin: IpAddr, params: Value) -> Result<Reply, RpcFailure> {
    let ToolCall { tool, arguments, meta } = tool_call(params, |name| agent_tools::find(state, name))?;
    if let Some(limit) = &state.tool_call_limit
        && let Err(limited) = limit.admit(caller)
    {
        return Ok(Reply::Built(errors::rate_limited(&limited)));
    }
    let ctx = AgentCtx {
        state,
        caller,
        origin,
        meta: &meta,
    };
    agent_tools::into_rpc(tool.call(&ctx, arguments).await)
}
