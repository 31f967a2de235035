//! The apps domain: `svc_ops_list_apps`, `_create_app`, `_rename_app`, `_delete_app`,
//! `_set_default_app`, `_update_app_system_prompt`. A key locked to an app sees only rename and
//! system prompt, for its own app.

use serde_json::{Value, json};
use svc_application::services::apps::{AppService, CreateApp, RenameApp, SetAppSystemPrompt};
use svc_protocol::NoArgs;
use svc_protocol::ops_tools::{AppIdArgs, CreateAppArgs, RenameAppArgs, UpdateAppSystemPromptArgs};

use super::OpsCaller;
use super::errors::tool_failure;
use super::wire::{app, ok};
use crate::mcp::agent_calls::args;
use crate::mcp::errors::ToolFailure;

pub async fn call(apps: &AppService, caller: &OpsCaller, name: &str, arguments: Value) -> Result<Value, ToolFailure> {
    let owner = caller.identity.as_str();
    match name {
        "svc_ops_list_apps" => {
            let _: NoArgs = args(arguments)?;
            let listed = apps.list(owner).await.map_err(tool_failure)?;
            ok(json!({ "apps": listed.iter().map(app).collect::<Vec<_>>() }))
        }
        "svc_ops_create_app" => {
            let a: CreateAppArgs = args(arguments)?;
            let command = CreateApp {
                owner_id: owner.to_owned(),
                display_name: a.display_name,
            };
            ok(app(&apps.create(command).await.map_err(tool_failure)?))
        }
        "svc_ops_rename_app" => {
            let a: RenameAppArgs = args(arguments)?;
            caller.ensure_reaches_app(&a.app_id).map_err(tool_failure)?;
            let command = RenameApp {
                owner_id: owner.to_owned(),
                app_id: a.app_id,
                display_name: a.display_name,
            };
            ok(app(&apps.rename(command).await.map_err(tool_failure)?))
        }
        "svc_ops_delete_app" => {
            let a: AppIdArgs = args(arguments)?;
            apps.delete(owner, &a.app_id).await.map_err(tool_failure)?;
            ok(json!({ "deleted": true }))
        }
        "svc_ops_set_default_app" => {
            let a: AppIdArgs = args(arguments)?;
            let default_app_id = apps.set_default(owner, &a.app_id).await.map_err(tool_failure)?;
            ok(json!({ "defaultAppId": default_app_id }))
        }
        "svc_ops_update_app_system_prompt" => {
            let a: UpdateAppSystemPromptArgs = args(arguments)?;
            caller.ensure_reaches_app(&a.app_id).map_err(tool_failure)?;
            let command = SetAppSystemPrompt {
                owner_id: owner.to_owned(),
                app_id: a.app_id,
                system_prompt: a.system_prompt,
            };
            ok(app(&apps.set_system_prompt(command).await.map_err(tool_failure)?))
        }
        other => unreachable!("{other} is not an apps tool"),
    }
}
