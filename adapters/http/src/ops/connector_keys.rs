//! The connector-keys domain: `svc_ops_list_connector_keys`, `_issue_connector_key`,
//! `_revoke_connector_key`.
//!
//! A key may be locked only to one of the caller's own apps (another's answers `app_not_found`),
//! and a caller whose own key is locked to an app issues keys locked to that same app, so a
//! locked key can never mint a wider one. A locked caller lists and revokes only its app's keys.

use chrono::{DateTime, Utc};
use serde_json::{Value, json};
use svc_application::services::operator::{IssueConnectorKey, RevokeConnectorKey};
use svc_protocol::NoArgs;
use svc_protocol::ops_tools::{IssueConnectorKeyArgs, RevokeConnectorKeyArgs};

use super::errors::tool_failure;
use super::wire::{ok, record};
use super::{OpsCaller, OpsConnectorKeys};
use crate::mcp::agent_calls::{args, invalid};
use crate::mcp::errors::ToolFailure;

pub async fn call(
    domain: &OpsConnectorKeys,
    caller: &OpsCaller,
    name: &str,
    arguments: Value,
) -> Result<Value, ToolFailure> {
    let user = caller.identity.clone();
    match name {
        "svc_ops_list_connector_keys" => {
            let _: NoArgs = args(arguments)?;
            let keys = domain
                .keys
                .list(&user, caller.locked_app())
                .await
                .map_err(tool_failure)?;
            ok(json!({ "keys": record(&keys)? }))
        }
        "svc_ops_issue_connector_key" => {
            let a: IssueConnectorKeyArgs = args(arguments)?;
            let expires_at = a.expires_at.as_deref().map(expiry).transpose()?;
            let app_id = locked_app(domain, caller, a.app_id).await?;
            let command = IssueConnectorKey {
                caller_user_id: user,
                name: a.name,
                app_id,
                expires_at,
            };
            let issued = domain.keys.issue(command).await.map_err(tool_failure)?;
            let mut body = record(&issued.summary)?;
            body["plaintextKey"] = json!(issued.plaintext_key.expose());
            ok(body)
        }
        "svc_ops_revoke_connector_key" => {
            let a: RevokeConnectorKeyArgs = args(arguments)?;
            let command = RevokeConnectorKey {
                caller_user_id: user,
                caller_locked_app: caller.locked_app().map(str::to_owned),
                key_id: a.key_id,
            };
            ok(record(&domain.keys.revoke(command).await.map_err(tool_failure)?)?)
        }
        other => unreachable!("{other} is not a connector-key tool"),
    }
}

/// `expiresAt`: an RFC 3339 (ISO 8601 with an offset) date-time. A past one is accepted; the key
/// then never authenticates.
fn expiry(raw: &str) -> Result<DateTime<Utc>, ToolFailure> {
    DateTime::parse_from_rfc3339(raw).map(|t| t.to_utc()).map_err(|_| {
        invalid(
            "expiresAt",
            "must be an ISO 8601 date-time with an offset, like 2026-12-31T23:59:59Z",
        )
    })
}

/// The app the new key is locked to, checked to be the caller's own.
async fn locked_app(
    domain: &OpsConnectorKeys,
    caller: &OpsCaller,
    requested: Option<String>,
) -> Result<Option<String>, ToolFailure> {
    let app_id = match requested {
        None if caller.app_locked => caller.caller.app_id.clone(),
        None => return Ok(None),
        Some(id) => {
            caller.ensure_reaches_app(&id).map_err(tool_failure)?;
            id
        }
    };
    let app = domain
        .apps
        .owned(&caller.identity, &app_id)
        .await
        .map_err(tool_failure)?;
    Ok(Some(app.app_id))
}
