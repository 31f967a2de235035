//! `svc_ops_issue_connector_key`.
//!
//! A key may be locked only to one of the caller's own apps (another's answers `app_not_found`),
//! and a caller whose own key is locked to an app issues keys locked to that same app, so a
//! locked key can never mint a wider one.

use chrono::{DateTime, Utc};
use svc_application::services::operator::IssueConnectorKey as IssueConnectorKeyCommand;
use svc_protocol::ops_results::IssuedKeyBody;
use svc_protocol::ops_tools::IssueConnectorKeyArgs;

use super::{OpsCtx, OpsTool, bodies};
use crate::errors::{OpsError, ToolFailure};
use crate::tools::{Annotations, Answer, ToolDefinition, invalid};

pub struct IssueConnectorKey;

impl ToolDefinition for IssueConnectorKey {
    const NAME: &'static str = "svc_ops_issue_connector_key";
    const DESCRIPTION: &'static str =
        "Issue a svc_user_ bearer key. plaintextKey is shown only in this result; store it now.";
    const ANNOTATIONS: Annotations = Annotations::CREATE;
    type Input = IssueConnectorKeyArgs;
    type Output = IssuedKeyBody;
}

impl OpsTool for IssueConnectorKey {
    async fn call(ctx: &OpsCtx<'_>, a: IssueConnectorKeyArgs) -> Result<Answer<IssuedKeyBody>, ToolFailure> {
        let expires_at = a.expires_at.as_deref().map(expiry).transpose()?;
        let app_id = locked_app(ctx, a.app_id).await?;
        let command = IssueConnectorKeyCommand {
            caller_user_id: ctx.owner().to_owned(),
            name: a.name,
            app_id,
            expires_at,
        };
        let issued = ctx
            .connector_keys()?
            .keys
            .issue(command)
            .await
            .map_err(|e| e.failure())?;
        Answer::json(IssuedKeyBody {
            key: bodies::connector_key(&issued.summary),
            plaintext_key: issued.plaintext_key.expose().to_owned(),
        })
    }
}

/// `expiresAt`: ISO 8601 (Document 3), in its extended forms: a date-time with an offset (RFC
/// 3339), a date-time without one (taken as UTC), or a calendar date (its first instant, UTC). A
/// past one is accepted; the key then never authenticates.
fn expiry(raw: &str) -> Result<DateTime<Utc>, ToolFailure> {
    let with_offset = || DateTime::parse_from_rfc3339(raw).ok().map(|t| t.to_utc());
    let without_offset = || {
        chrono::NaiveDateTime::parse_from_str(raw, "%Y-%m-%dT%H:%M:%S%.f")
            .ok()
            .map(|t| t.and_utc())
    };
    let date = || {
        chrono::NaiveDate::parse_from_str(raw, "%Y-%m-%d")
            .ok()
            .map(|d| d.and_time(chrono::NaiveTime::MIN).and_utc())
    };
    with_offset().or_else(without_offset).or_else(date).ok_or_else(|| {
        invalid(
            "expiresAt",
            "must be an ISO 8601 date or date-time, like 2026-12-31 or 2026-12-31T23:59:59Z (UTC without an offset)",
        )
    })
}

/// The app the new key is locked to, checked to be the caller's own.
async fn locked_app(ctx: &OpsCtx<'_>, requested: Option<String>) -> Result<Option<String>, ToolFailure> {
    let caller = ctx.caller;
    let app_id = match requested {
        None if caller.app_locked => caller.caller.app_id.clone(),
        None => return Ok(None),
        Some(id) => {
            caller.ensure_reaches_app(&id).map_err(|e| e.failure())?;
            id
        }
    };
    let app = ctx
        .connector_keys()?
        .apps
        .owned(&caller.identity, &app_id)
        .await
        .map_err(|e| e.failure())?;
    Ok(Some(app.app_id))
}
