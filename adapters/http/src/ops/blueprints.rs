//! The blueprints domain: `svc_ops_generate_blueprint`, `_register_blueprint`,
//! `_list_blueprints`, `_update_blueprint`, `_delete_blueprint`. Blueprints belong to the caller's
//! app (the key's app, else the identity's default app).

use serde_json::{Value, json};
use svc_application::ports::blueprints::BlueprintRecord;
use svc_application::services::operator::{
    BlueprintOptions, ListBlueprints, OpsBlueprintError, OpsBlueprintService, StoredBlueprint, UpdateBlueprint,
    source_model,
};
use svc_domain::blueprint::SourceKind;
use svc_protocol::ops_tools::{
    BlueprintIdArgs, BlueprintOptionsArgs, GenerateBlueprintArgs, ListBlueprintsArgs, RegisterBlueprintArgs,
    UpdateBlueprintArgs,
};

use super::OpsCaller;
use super::errors::tool_failure;
use super::wire::ok;
use crate::mcp::agent_calls::{args, iso};
use crate::mcp::errors::{ToolFailure, overloaded};

pub async fn call(
    blueprints: &OpsBlueprintService,
    caller: &OpsCaller,
    name: &str,
    arguments: Value,
) -> Result<Value, ToolFailure> {
    let app_id = caller.caller.app_id.as_str();
    match name {
        "svc_ops_generate_blueprint" => {
            let a: GenerateBlueprintArgs = args(arguments)?;
            let stored = blueprints
                .generate(
                    app_id,
                    Value::Object(a.contract),
                    BlueprintOptions {
                        key_owner: Some(svc_application::services::hosted::payer_of(&caller.caller)),
                        ..options(a.options)
                    },
                )
                .await
                .map_err(generation_failure)?;
            ok(generated(&stored))
        }
        "svc_ops_register_blueprint" => {
            let a: RegisterBlueprintArgs = args(arguments)?;
            let stored = blueprints
                .register(app_id, Value::Object(a.contract), a.component_code, options(a.options))
                .await
                .map_err(tool_failure)?;
            ok(json!({
                "blueprintId": stored.record.blueprint_id,
                "codeHash": stored.record.code_hash,
                "source": { "kind": "user" },
            }))
        }
        "svc_ops_list_blueprints" => {
            let a: ListBlueprintsArgs = args(arguments)?;
            let query = ListBlueprints {
                contract_hash: a.contract_hash,
                generator: a.generator,
                persona: a.persona,
                intent_keywords: a.intent_keywords.unwrap_or_default(),
            };
            let rows = blueprints.list(app_id, query).await.map_err(tool_failure)?;
            ok(json!({ "blueprints": rows.iter().map(row).collect::<Vec<_>>() }))
        }
        "svc_ops_update_blueprint" => {
            let a: UpdateBlueprintArgs = args(arguments)?;
            let command = UpdateBlueprint {
                blueprint_id: a.blueprint_id.clone(),
                make_operator_default: a.is_operator_default.is_some(),
                variance: a.variance,
            };
            let updated_at = blueprints.update(app_id, command).await.map_err(tool_failure)?;
            ok(json!({ "blueprintId": a.blueprint_id, "updatedAt": iso(updated_at) }))
        }
        "svc_ops_delete_blueprint" => {
            let a: BlueprintIdArgs = args(arguments)?;
            blueprints.delete(app_id, &a.blueprint_id).await.map_err(tool_failure)?;
            ok(json!({ "deleted": true }))
        }
        other => unreachable!("{other} is not a blueprints tool"),
    }
}

/// A saturated generation queue is -32014 with HTTP 503 and `Retry-After`, as on `/mcp`.
fn generation_failure(error: OpsBlueprintError) -> ToolFailure {
    match error {
        OpsBlueprintError::Overloaded { retry_after_seconds } => ToolFailure::Rpc(overloaded(retry_after_seconds)),
        other => tool_failure(other),
    }
}

fn options(a: BlueprintOptionsArgs) -> BlueprintOptions {
    BlueprintOptions {
        generator: a.generator,
        persona: a.persona,
        aesthetic: a.aesthetic,
        context: a.context,
        seed_prompt: a.seed_prompt,
        set_as_operator_default: a.set_as_operator_default.unwrap_or(false),
        key_owner: None,
    }
}

fn generated(stored: &StoredBlueprint) -> Value {
    let record = &stored.record;
    let mut body = json!({
        "blueprintId": record.blueprint_id,
        "codeHash": record.code_hash,
        "source": source(record),
    });
    if let Some(score) = stored.validator_score {
        body["validatorScore"] = json!(score);
    }
    body
}

/// `{ kind: 'llm', generator, model }` or `{ kind: 'user' }`.
fn source(record: &BlueprintRecord) -> Value {
    match record.source_kind {
        SourceKind::User => json!({ "kind": "user" }),
        SourceKind::Llm => json!({
            "kind": "llm",
            "generator": record.generator,
            "model": source_model(record),
        }),
    }
}

/// A `Blueprint` row of `svc_ops_list_blueprints` (fields: docs/ops.md).
fn row(record: &BlueprintRecord) -> Value {
    let mut body = json!({
        "blueprintId": record.blueprint_id,
        "contractHash": record.contract_hash,
        "variantKey": record.variant_key,
        "codeHash": record.code_hash,
        "generator": record.generator,
        "source": source(record),
        "isOperatorDefault": record.is_operator_default,
        "variance": record.variance,
        "contract": record.contract,
        "createdAt": iso(record.created_at),
        "updatedAt": iso(record.updated_at),
    });
    let optional = [
        ("intent", Some(record.intent.clone()).filter(|i| !i.is_empty())),
        ("description", record.description.clone()),
        ("persona", record.persona.clone()),
        ("aesthetic", record.aesthetic.clone()),
    ];
    for (field, value) in optional {
        if let Some(value) = value {
            body[field] = json!(value);
        }
    }
    body
}
