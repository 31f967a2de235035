//! `svc_handshake`: negotiate a contract before rendering.

use serde_json::{Map, Value, json};
use svc_application::services::agent::{HandshakeCommand, HandshakeOutcome, HandshakeReply};
use svc_domain::contract::Finding;
use svc_protocol::HandshakeArgs;
use svc_protocol::agent_results::{
    BlueprintMeta, FindingBody, HandshakeAgreed, HandshakeDeclined, HandshakeResult, NextStep, Suggestion,
    SuggestionCache,
};

use super::render::Render;
use super::{AgentCtx, AgentTool};
use crate::errors::{ToolFailure, map_agent_error};
use crate::tools::{Annotations, Answer, ToolDefinition};

pub struct Handshake;

impl ToolDefinition for Handshake {
    const NAME: &'static str = "svc_handshake";
    const DESCRIPTION: &'static str = "Negotiate a data contract for a UI before rendering. Returns a single-use handshakeId (10 minutes), the suggestion (cache, agent or synth origin) and the enforced props schema hash.";
    const ANNOTATIONS: Annotations = Annotations::CREATE;
    type Input = HandshakeArgs;
    type Output = HandshakeResult;
}

impl AgentTool for Handshake {
    async fn call(ctx: &AgentCtx<'_>, a: HandshakeArgs) -> Result<Answer<HandshakeResult>, ToolFailure> {
        let cmd = HandshakeCommand {
            intent: a.intent,
            contract: Value::Object(a.blueprint_draft.contract.0),
            variance: a.blueprint_draft.variance.map(|v| Value::Object(v.0)),
            generator: a.blueprint_draft.generator,
            force_create: a.force_create,
        };
        match ctx
            .state
            .agent
            .handshake(ctx.caller, cmd)
            .await
            .map_err(map_agent_error)?
        {
            HandshakeOutcome::Agreed(reply) => Ok(agreed(&reply)),
            HandshakeOutcome::Declined { findings } => Ok(declined(&findings)),
        }
    }
}

pub(super) fn finding(f: &Finding) -> FindingBody {
    FindingBody {
        code: f.code.to_owned(),
        path: f.path.clone(),
        message: f.message.clone(),
    }
}

fn agreed(r: &HandshakeReply) -> Answer<HandshakeResult> {
    let suggestion = Suggestion {
        origin: r.origin.as_str().to_owned(),
        blueprint_meta: BlueprintMeta {
            blueprint_id: r.blueprint_id.clone(),
            intent: r.intent.clone(),
            contract_hash: r.contract_hash.clone(),
            variant_key: r.variant_key.clone(),
            generator: r.generator.clone(),
        },
        amendments: (!r.amendments.is_empty()).then(|| r.amendments.iter().map(finding).collect()),
        validation_findings: r
            .cache
            .as_ref()
            .map(|_| r.validation_findings.iter().map(finding).collect()),
        cache: r.cache.as_ref().map(|hit| SuggestionCache {
            similarity: hit.similarity,
            kind: hit.kind.clone(),
            reason: hit.reason.clone(),
        }),
    };
    let body = HandshakeAgreed {
        handshake_id: r.handshake_id.clone(),
        action: r.action.as_str().to_owned(),
        suggestion,
        props_schema_hash: r.props_schema_hash.clone(),
        props_schema_profile: r.props_schema_profile.as_str().to_owned(),
        next_step: NextStep {
            tool: Render::NAME.to_owned(),
            example: json!({ "handshakeId": r.handshake_id, "props": example_props(&r.enforced_schema) }),
        },
        props_schema: r.props_schema.clone(),
    };
    let text = format!(
        "handshake {}: {} ({} origin); call {} within 10 minutes",
        r.handshake_id,
        r.action.as_str(),
        r.origin.as_str(),
        Render::NAME,
    );
    Answer::ok(HandshakeResult::Agreed(Box::new(body)), text)
}

fn declined(findings: &[Finding]) -> Answer<HandshakeResult> {
    let first = findings
        .first()
        .map(|f| format!("{}: {}", f.path, f.message))
        .unwrap_or_default();
    let body = HandshakeDeclined {
        action: "declined".to_owned(),
        findings: findings.iter().map(finding).collect(),
        next_step: NextStep {
            tool: Handshake::NAME.to_owned(),
            example: json!({ "intent": "…", "blueprintDraft": { "contract": { "propsSpec": { "type": "object", "properties": {} } } } }),
        },
    };
    Answer::ok(
        HandshakeResult::Declined(body),
        format!(
            "contract declined: {first}; fix the draft and call {} again",
            Handshake::NAME
        ),
    )
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
