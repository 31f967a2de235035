//! `GET /console/blueprints/<blueprintId>/preview`: one of the session's app's blueprints mounted
//! with its fixture props (or, for a registered one that has none, props built from its
//! contract), for the console's sandboxed preview frame (docs/console.md).
//!
//! The document is the per-render card document (`ui://svc/render/<id>`: the mount runtime and
//! the compiled component inline) with no session behind it: the bootstrap says `preview`, so the
//! runtime opens no live channel (the frame's policy allows no connection anyway,
//! `connect-src 'none'`) and shows the card with the props and a "preview" line. A frame
//! navigated here has this policy, not the console's (which forbids inline script); only the
//! console may frame it.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::{Data, Path};
use poem::{IntoResponse, Request, Response, handler};
use serde_json::{Value, json};
use svc_application::ports::blueprints::BlueprintRecord;
use svc_application::services::operator::OpsBlueprintError;
use svc_domain::contract::fixture_props;
use svc_domain::themes;

use super::refusal;
use super::session::live_session;
use crate::mcp::resources::card_document;
use crate::playground::policy;
use crate::route_states::ConsoleRoutes;

/// The theme a preview paints with (a blueprint records none).
const PREVIEW_THEME_ID: &str = "default";

#[handler]
pub async fn serve(
    req: &Request,
    Path(blueprint_id): Path<String>,
    Data(state): Data<&Arc<ConsoleRoutes>>,
) -> Response {
    let session = match live_session(req, state).await {
        Ok(session) => session,
        Err(refused) => return refused.into_response(),
    };
    let Some(blueprints) = state.ops.ops.blueprints.as_ref() else {
        return refusal(
            StatusCode::NOT_FOUND,
            "blueprint_not_found",
            "this server keeps no blueprints",
        );
    };
    let record = match blueprints
        .get(session.caller.caller.app_id.as_str(), &blueprint_id)
        .await
    {
        Ok(record) => record,
        Err(OpsBlueprintError::BlueprintNotFound(_)) => {
            return refusal(
                StatusCode::NOT_FOUND,
                "blueprint_not_found",
                "no blueprint of this app has that id",
            );
        }
        Err(other) => {
            tracing::error!(error = ?other, "reading a blueprint for its preview failed");
            return refusal(StatusCode::INTERNAL_SERVER_ERROR, "internal_error", "internal error");
        }
    };
    if record.code.is_empty() {
        return refusal(
            StatusCode::NOT_FOUND,
            "not_mountable",
            "this blueprint's component did not compile, so it cannot be mounted",
        );
    }
    card_document(&preview_bootstrap(&record))
        .with_content_type("text/html; charset=utf-8")
        .with_header("content-security-policy", policy::from_declared(&Value::Null))
        .with_header("cache-control", "no-store")
        .with_header("x-content-type-options", "nosniff")
        .with_header("referrer-policy", "no-referrer")
        .into_response()
}

/// What the runtime needs to paint the blueprint once, with its fixture props.
fn preview_bootstrap(record: &BlueprintRecord) -> Value {
    let paint = themes::card_paint(PREVIEW_THEME_ID);
    json!({
        "sessionId": format!("preview-{}", record.blueprint_id),
        // A registered component has no stored fixture props: props built from its contract.
        "props": record
            .fixture_props
            .clone()
            .unwrap_or_else(|| fixture_props(&record.contract.props_schema())),
        "frozen": true,
        "component": { "code": record.code, "blueprintId": record.blueprint_id },
        "contract": record.contract.as_value(),
        // No session behind it: the runtime opens no live channel and says it is a preview.
        "preview": true,
        "themeId": PREVIEW_THEME_ID,
        "themeMode": paint.mode.as_str(),
        "theme": paint.theme,
        "themeVariants": paint.variants,
    })
}
