//! Tool calls of the agent plane: arguments in, Document 1's bodies out.

use chrono::{DateTime, Utc};
use serde::de::DeserializeOwned;
use serde_json::{Map, Value, json};
use svc_application::ports::agent::{HostSession, SessionQuery};
use svc_application::services::agent::{
    Caller, HandshakeCommand, HandshakeOutcome, HandshakeReply, PropsChange, RenderCommand, RenderOverride,
    RenderResult,
};
use svc_domain::contract::Finding;
use svc_domain::session::SessionStatus;
use svc_protocol::*;

use super::errors::{ToolFailure, map_agent_error};
use super::jsonrpc::RpcFailure;
use super::render_meta::render_meta;
use super::results::{error_result, ok_result};
use super::tool_table::DISCOVER;
use crate::HttpState;

type Outcome = Result<Value, ToolFailure>;

pub(crate) fn args<T: DeserializeOwned>(arguments: Value) -> Result<T, ToolFailure> {
    serde_json::from_value(arguments)
        .map_err(|e| ToolFailure::Rpc(RpcFailure::new(INVALID_PARAMS, format!("Invalid params: {e}"))))
}

fn ms(t: DateTime<Utc>) -> i64 {
    t.timestamp_millis()
}

pub(crate) fn iso(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(chrono::SecondsFormat::Millis, true)
}

pub fn render_uri(session_id: &str) -> String {
    format!("ui://svc/render/{session_id}")
}

pub async fn call(
    state: &HttpState,
    caller: &Caller,
    origin: std::net::IpAddr,
    name: &str,
    arguments: Value,
    request_meta: &Value,
) -> Outcome {
    let agent = &state.agent;
    match name {
        "svc_handshake" => {
            let a: HandshakeArgs = args(arguments)?;
            let cmd = HandshakeCommand {
                intent: a.intent,
                contract: Value::Object(a.blueprint_draft.contract),
                variance: a.blueprint_draft.variance.map(Value::Object),
                generator: a.blueprint_draft.generator,
                force_create: a.force_create,
            };
            match agent.handshake(caller, cmd).await.map_err(map_agent_error)? {
                HandshakeOutcome::Agreed(reply) => Ok(handshake_body(&reply)),
                HandshakeOutcome::Declined { findings } => Ok(declined_body(&findings)),
            }
        }
        "svc_render" => {
            let a: RenderArgs = args(arguments)?;
            let cmd = RenderCommand {
                handshake_id: a.handshake_id,
                props: Value::Object(a.props),
                theme_id: a.theme_id,
                model: a.infra.and_then(|i| i.model),
                override_: a.override_.map(|o| RenderOverride {
                    contract: o.contract.map(Value::Object),
                    variance: o.variance.map(Value::Object),
                }),
                ttl_seconds: a.ttl_seconds,
                host: host_session(request_meta),
                origin: Some(origin),
                progress: super::progress_stream::current_observer(),
            };
            let result = agent.render(caller, cmd).await.map_err(map_agent_error)?;
            Ok(render_body(state, &result, caller.key_id.as_deref()))
        }
        "svc_consume" => {
            let a: ConsumeArgs = args(arguments)?;
            let reply = agent
                .consume(caller, &a.session_id, a.timeout.unwrap_or(0))
                .await
                .map_err(map_agent_error)?;
            let events: Vec<Value> = reply
                .events
                .iter()
                .map(|e| {
                    json!({
                        "type": "action",
                        "sessionId": e.session_id,
                        "intent": e.intent,
                        "actionData": e.action_data,
                        "uiContext": e.ui_context,
                        "actionId": e.action_id,
                        "firedAt": iso(e.fired_at),
                    })
                })
                .collect();
            let mut body = json!({ "events": events, "status": reply.status.as_str() });
            if let Some(client) = reply.client {
                body["client"] = client;
            }
            let text = format!("{} event(s); session {}", events.len(), reply.status.as_str());
            Ok(ok_result(body, &text))
        }
        "svc_update" | "svc_amend" => {
            let amend = name == "svc_amend";
            let a: UpdateArgs = args(arguments)?;
            let change = match a.kind {
                UpdateKind::Replace => PropsChange::Replace(Value::Object(
                    a.props
                        .ok_or_else(|| invalid("props", "is required when kind is `replace`"))?,
                )),
                UpdateKind::Merge => PropsChange::Merge(Value::Object(
                    a.patch
                        .ok_or_else(|| invalid("patch", "is required when kind is `merge`"))?,
                )),
            };
            let reply = agent
                .change_props(caller, &a.session_id, change, amend)
                .await
                .map_err(map_agent_error)?;
            let mut body = json!({ "sessionId": reply.session_id, "updated": reply.updated });
            if amend {
                body["resourceUri"] = json!(render_uri(&reply.session_id));
            } else {
                body["resourceUri"] = json!(format!("{}#{}", render_uri(&reply.session_id), reply.epoch));
                body["epoch"] = json!(reply.epoch);
            }
            if let Some(warning) = reply.warning {
                body["warning"] = json!(warning);
            }
            if let Some((hash, profile)) = reply.props_schema {
                body["propsSchemaHash"] = json!(hash);
                body["propsSchemaProfile"] = json!(profile.as_str());
            }
            let text = if reply.updated {
                format!("{name}: card updated (epoch {})", reply.epoch)
            } else {
                format!("{name}: no change")
            };
            Ok(ok_result(body, &text))
        }
        "svc_emit" => {
            let a: EmitArgs = args(arguments)?;
            let accepted = agent
                .emit(
                    caller,
                    &a.session_id,
                    &a.channel,
                    a.payload,
                    a.complete.unwrap_or(false),
                )
                .await
                .map_err(map_agent_error)?;
            Ok(ok_result(json!({ "accepted": accepted }), "accepted"))
        }
        "svc_get_session" => {
            let a: SessionIdArgs = args(arguments)?;
            let v = agent
                .get_session(caller, &a.session_id)
                .await
                .map_err(map_agent_error)?;
            let mut body = json!({
                "variant": v.variant.as_str(),
                "id": v.session_id,
                "appId": v.app_id,
                "eventSequence": v.event_sequence,
                "createdAt": ms(v.created_at),
                "lastActivityAt": ms(v.last_activity_at),
                "expiresAt": ms(v.expires_at),
            });
            // Only a `render` variant has one (Document 1).
            if let Some(snapshot) = v
                .context_snapshot
                .filter(|c| c.as_object().is_some_and(|m| !m.is_empty()))
            {
                body["contextSnapshot"] = snapshot;
            }
            Ok(ok_result(
                body,
                &format!("session {} ({})", a.session_id, v.status.as_str()),
            ))
        }
        "svc_get_render_source" => {
            let a: SessionIdArgs = args(arguments)?;
            let s = agent
                .get_render_source(caller, &a.session_id)
                .await
                .map_err(map_agent_error)?;
            let body = json!({ "sessionId": s.session_id, "blueprint": { "source": s.source, "contract": s.contract, "fixtureProps": s.fixture_props } });
            Ok(ok_result(body, "render source attached"))
        }
        "svc_list_sessions" => {
            let a: ListSessionsArgs = args(arguments)?;
            let query = SessionQuery {
                host_name: a.host_name,
                host_session_id: a.host_session_id,
                limit: a.limit.unwrap_or(0),
            };
            let rows = agent.list_sessions(caller, query).await.map_err(map_agent_error)?;
            let now = chrono::Utc::now();
            let sessions: Vec<Value> = rows
                .iter()
                .map(|(s, status)| {
                    let mut row = json!({
                        "sessionId": s.session_id,
                        "createdAt": iso(s.created_at),
                        "lastActivityAt": iso(s.head.last_activity_at),
                        "status": status.as_str(),
                    });
                    if let Some(h) = &s.host.host_name {
                        row["hostName"] = json!(h);
                    }
                    if let Some(h) = &s.host.host_session_id {
                        row["hostSessionId"] = json!(h);
                    }
                    // A host re-mounting a card from its history subscribes with this; a session
                    // that can no longer be subscribed to gets none.
                    if *status == SessionStatus::Active {
                        let (token, expires_at) =
                            state
                                .tokens
                                .mint(&s.session_id, &s.app_id, caller.key_id.as_deref(), now);
                        row["wsToken"] = json!(token);
                        row["wsTokenExpiresAt"] = json!(iso(expires_at));
                    }
                    row
                })
                .collect();
            let text = format!("{} session(s)", sessions.len());
            Ok(ok_result(json!({ "sessions": sessions }), &text))
        }
        "svc_list_gadgets" => {
            let a: AppScopedArgs = args(arguments)?;
            let gadgets = agent
                .list_gadgets(caller, a.app_id.as_deref())
                .map_err(map_agent_error)?;
            let gadgets = serde_json::to_value(gadgets)
                .map_err(|e| map_agent_error(svc_application::services::agent::AgentError::Internal(e.into())))?;
            Ok(ok_result(json!({ "gadgets": gadgets }), "gadget catalog attached"))
        }
        "svc_list_themes" => {
            let a: AppScopedArgs = args(arguments)?;
            let themes = agent
                .list_themes(caller, a.app_id.as_deref())
                .map_err(map_agent_error)?;
            let themes = serde_json::to_value(themes)
                .map_err(|e| map_agent_error(svc_application::services::agent::AgentError::Internal(e.into())))?;
            Ok(ok_result(json!({ "themes": themes }), "theme catalog attached"))
        }
        "svc_search_blueprints" => {
            let a: SearchBlueprintsArgs = args(arguments)?;
            let page = agent
                .search_blueprints(caller, &a.query, a.limit)
                .await
                .map_err(map_agent_error)?;
            let results: Vec<Value> = page
                .rows
                .iter()
                .map(|r| {
                    let mut row = blueprint_entry(&r.entry);
                    row["relevance"] = json!("match");
                    row["score"] = json!(r.score);
                    row
                })
                .collect();
            let text = format!(
                "{} of {} blueprint(s) matching \"{}\"",
                results.len(),
                page.total,
                a.query
            );
            Ok(ok_result(
                json!({ "results": results, "total": page.total, "query": a.query }),
                &text,
            ))
        }
        "svc_list_featured_blueprints" => {
            let _: NoArgs = args(arguments)?;
            let rows: Vec<Value> = agent.featured_blueprints(caller).iter().map(blueprint_entry).collect();
            let text = format!("{} featured blueprint(s)", rows.len());
            Ok(ok_result(json!({ "total": rows.len(), "blueprints": rows }), &text))
        }
        DISCOVER => {
            let Some(apps) = &state.hosted_apps else {
                return Err(ToolFailure::Rpc(RpcFailure::new(
                    INVALID_PARAMS,
                    "Invalid params: name: unknown tool `svc_discover`",
                )));
            };
            let output = super::discover::discover(apps, caller, args(arguments)?).await?;
            let text = format!("protocol {}", output.protocol_version);
            Ok(ok_result(
                serde_json::to_value(output).expect("discover output serialises"),
                &text,
            ))
        }
        "svc_render_blueprint" => {
            let a: RenderBlueprintArgs = args(arguments)?;
            match agent.render_blueprint(&a.blueprint_id) {
                Some(b) => Ok(ok_result(
                    json!({ "blueprintId": b.blueprint_id, "blueprintName": b.blueprint_name, "code": b.code, "contentType": b.content_type }),
                    &format!("bundle of {} attached", b.blueprint_id),
                )),
                None => {
                    let message = format!(
                        "unknown blueprint id `{}`; ids come from svc_search_blueprints or svc_list_featured_blueprints rows of manifest UIs",
                        a.blueprint_id
                    );
                    Err(ToolFailure::Result(error_result(
                        json!({ "error": { "code": "blueprint_not_found", "message": message } }),
                        &message,
                    )))
                }
            }
        }
        "svc_runtime_refresh_ws_token" => {
            let a: RefreshWsTokenArgs = args(arguments)?;
            let session = agent
                .unexpired_session_for(caller, &a.session_id)
                .await
                .map_err(map_agent_error)?;
            let (token, expires_at) = state.tokens.mint(
                &session.session_id,
                &session.app_id,
                caller.key_id.as_deref(),
                chrono::Utc::now(),
            );
            Ok(ok_result(
                json!({ "sessionId": session.session_id, "wsToken": token, "expiresAt": iso(expires_at) }),
                "wsToken refreshed",
            ))
        }
        "svc_runtime_sync_context" => {
            let a: SyncContextArgs = args(arguments)?;
            let snapshot = agent
                .sync_context(caller, &a.session_id, Value::Object(a.context))
                .await
                .map_err(map_agent_error)?;
            Ok(ok_result(
                json!({ "accepted": true, "contextSnapshot": snapshot }),
                "context stored",
            ))
        }
        other => Err(ToolFailure::Rpc(RpcFailure::new(
            INVALID_PARAMS,
            format!("Unknown tool: {other}"),
        ))),
    }
}

pub(crate) fn invalid(field: &str, rule: &str) -> ToolFailure {
    ToolFailure::Rpc(RpcFailure::new(
        INVALID_PARAMS,
        format!("Invalid params: {field}: {rule}"),
    ))
}

/// `_meta['ai.svc/host-session']` of the request, captured for `svc_list_sessions`.
fn host_session(meta: &Value) -> HostSession {
    let pair = &meta["ai.svc/host-session"];
    HostSession {
        host_name: pair["hostName"].as_str().map(str::to_owned),
        host_session_id: pair["hostSessionId"].as_str().map(str::to_owned),
    }
}

/// A BlueprintEntry row of the blueprint tools.
fn blueprint_entry(e: &svc_application::services::blueprints::BlueprintEntry) -> Value {
    json!({
        "id": e.id,
        "name": e.name,
        "description": e.description,
        "category": e.category,
        "props": e.props,
        "callbacks": e.callbacks,
        "featured": e.featured,
    })
}

fn finding_json(f: &Finding) -> Value {
    json!({ "code": f.code, "path": f.path, "message": f.message })
}

/// A value of the right type for each required property: a runnable `nextStep` example.
fn example_props(schema: &Value) -> Value {
    let mut out = Map::new();
    let required: Vec<&str> = schema["required"]
        .as_array()
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if let Some(props) = schema["properties"].as_object() {
        for (name, prop) in props.iter().filter(|(n, _)| required.contains(&n.as_str())) {
            out.insert(name.clone(), example_value(prop));
        }
    }
    Value::Object(out)
}

fn example_value(schema: &Value) -> Value {
    if let Some(first) = schema["enum"].as_array().and_then(|e| e.first()) {
        return first.clone();
    }
    match schema["type"].as_str() {
        Some("string") => json!("…"),
        Some("integer") | Some("number") => json!(0),
        Some("boolean") => json!(false),
        Some("array") => json!([]),
        Some("object") => example_props(schema),
        _ => Value::Null,
    }
}

fn handshake_body(r: &HandshakeReply) -> Value {
    let mut blueprint_meta = json!({
        "blueprintId": r.blueprint_id,
        "intent": r.intent,
        "contractHash": r.contract_hash,
        "variantKey": r.variant_key,
    });
    if let Some(g) = &r.generator {
        blueprint_meta["generator"] = json!(g);
    }
    let mut suggestion = json!({ "origin": r.origin.as_str(), "blueprintMeta": blueprint_meta });
    if !r.amendments.is_empty() {
        suggestion["amendments"] = r.amendments.iter().map(finding_json).collect();
    }
    if let Some(hit) = &r.cache {
        suggestion["validationFindings"] = r.validation_findings.iter().map(finding_json).collect();
        suggestion["cache"] = json!({ "similarity": hit.similarity, "kind": hit.kind, "reason": hit.reason });
    }
    let mut body = json!({
        "handshakeId": r.handshake_id,
        "action": r.action.as_str(),
        "suggestion": suggestion,
        "propsSchemaHash": r.props_schema_hash,
        "propsSchemaProfile": r.props_schema_profile.as_str(),
        "nextStep": { "tool": "svc_render", "example": { "handshakeId": r.handshake_id, "props": example_props(&r.enforced_schema) } },
    });
    if let Some(schema) = &r.props_schema {
        body["propsSchema"] = schema.clone();
    }
    let text = format!(
        "handshake {}: {} ({} origin); call svc_render within 10 minutes",
        r.handshake_id,
        r.action.as_str(),
        r.origin.as_str()
    );
    ok_result(body, &text)
}

fn declined_body(findings: &[Finding]) -> Value {
    let listed: Vec<Value> = findings.iter().map(finding_json).collect();
    let first = findings
        .first()
        .map(|f| format!("{}: {}", f.path, f.message))
        .unwrap_or_default();
    let body = json!({
        "action": "declined",
        "findings": listed,
        "nextStep": { "tool": "svc_handshake", "example": { "intent": "…", "blueprintDraft": { "contract": { "propsSpec": { "type": "object", "properties": {} } } } } },
    });
    ok_result(
        body,
        &format!("contract declined: {first}; fix the draft and call svc_handshake again"),
    )
}

fn render_body(state: &HttpState, result: &RenderResult, key_id: Option<&str>) -> Value {
    count_render(result);
    match result {
        RenderResult::Rendered {
            identity,
            has_actions,
            theme_id,
            last_sequence,
            first_paint,
            ..
        } => {
            let uri = render_uri(&identity.session_id);
            let mut body = identity_body("rendered", identity);
            body["resourceUri"] = json!(uri);
            if *has_actions {
                body["nextStep"] =
                    json!({ "tool": "svc_consume", "example": { "sessionId": identity.session_id, "timeout": 10 } });
            }
            let mut result = ok_result(body, &format!("rendered: {uri}"));
            // The mount bootstrap is MCP-Apps metadata: without the option there is none.
            if state.mcp_apps_on() {
                result["_meta"] = render_meta(state, identity, theme_id, *last_sequence, first_paint, key_id);
            }
            result
        }
        RenderResult::Failed {
            identity,
            code,
            message,
        } => {
            let mut body = identity_body("failed", identity);
            body["error"] = json!({ "code": code, "message": message });
            error_result(body, &format!("render failed ({code}): {message}"))
        }
        RenderResult::Refused(refusal) => {
            let mut r = json!({
                "code": refusal.entry.code,
                "message": refusal.message,
                "fix": refusal.entry.fix,
                "retry": refusal.entry.retry.as_str(),
                "handshake": "intact",
            });
            if let Some(balance) = refusal.balance_cents_at_check {
                r["balanceCentsAtCheck"] = json!(balance);
            }
            error_result(
                json!({ "outcome": "refused", "refusal": r }),
                &format!("render refused ({}): {}", refusal.entry.code, refusal.entry.fix),
            )
        }
    }
}

fn identity_body(outcome: &str, identity: &svc_application::services::agent::RenderIdentity) -> Value {
    let c = &identity.cache;
    let mut cache = json!({ "hit": c.hit, "llmCallsAvoided": c.llm_calls_avoided });
    if let Some(s) = c.similarity {
        cache["similarity"] = json!(s);
    }
    if let Some(id) = &c.cached_blueprint_id {
        cache["cachedBlueprintId"] = json!(id);
    }
    if let Some(k) = &c.kind {
        cache["kind"] = json!(k);
    }
    if let Some(r) = &c.reason {
        cache["reason"] = json!(r);
    }
    json!({
        "outcome": outcome,
        "sessionId": identity.session_id,
        "action": identity.action.as_str(),
        "contractHash": identity.contract_hash,
        "blueprintId": identity.blueprint_id,
        "variantKey": identity.variant_key,
        "cache": cache,
    })
}

/// `svc_renders_total{outcome, cache}`: how renders end, and how many a cached blueprint served.
fn count_render(result: &RenderResult) {
    let (outcome, cache) = match result {
        RenderResult::Rendered { identity, .. } => ("rendered", if identity.cache.hit { "hit" } else { "miss" }),
        RenderResult::Failed { .. } => ("failed", "miss"),
        RenderResult::Refused(_) => ("refused", "none"),
    };
    crate::observe::METRICS
        .renders
        .with_label_values(&[outcome, cache])
        .inc();
}
