//! Discovery documents: protected-resource metadata (RFC 9728) and authorization-server metadata
//! (RFC 8414) with Document 2's fixed values. Every URL derives from the one issuer string.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Json;
use poem::{IntoResponse, Response};
use serde_json::{Value, json};
use svc_domain::oauth::{Issuer, ResourceIndicator};

use super::{enabled, not_found};
use crate::route_states::RestRoutes;

/// Where clients read the metadata of the universal resource `{issuer}/mcp`.
pub(super) fn protected_resource_metadata_url(issuer: &Issuer) -> String {
    issuer.url("/.well-known/oauth-protected-resource/mcp")
}

/// Where clients read the metadata of the operator route `{issuer}/ops`, which its 401 names.
pub(super) fn ops_resource_metadata_url(issuer: &Issuer) -> String {
    issuer.url("/.well-known/oauth-protected-resource/ops")
}

/// Where clients read the metadata of one app's endpoint `{issuer}/apps/<appId>/mcp`, which
/// its 401 challenge names.
pub(super) fn app_resource_metadata_url(issuer: &Issuer, app_id: &str) -> String {
    issuer.url(&format!(
        "/.well-known/oauth-protected-resource{}",
        app_resource_path(app_id, true)
    ))
}

/// `/apps/<appId>`, or with `endpoint` the app's MCP endpoint `/apps/<appId>/mcp`.
fn app_resource_path(app_id: &str, endpoint: bool) -> String {
    if endpoint {
        format!("/apps/{app_id}/mcp")
    } else {
        format!("/apps/{app_id}")
    }
}

fn resource_metadata(issuer: &Issuer, resource: String) -> Value {
    json!({
        "resource": resource,
        "authorization_servers": [issuer.as_str()],
        "bearer_methods_supported": ["header"],
        "resource_documentation": issuer.url("/oauth/docs"),
    })
}

/// Metadata is public and read by browser-based clients too.
fn public_json(body: Value) -> Response {
    let mut response = Json(body).into_response();
    response
        .headers_mut()
        .insert("access-control-allow-origin", "*".parse().expect("static header"));
    response
}

/// `/.well-known/oauth-protected-resource` and its `/mcp` form: the universal resource.
pub(super) fn protected_resource(state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    let issuer = oauth.service.issuer();
    public_json(resource_metadata(issuer, issuer.url("/mcp")))
}

/// `/.well-known/oauth-protected-resource/ops`: the operator route, a universal resource of its
/// own (RFC 9728 section 3.3: a client that followed `/ops`'s challenge must find `/ops` there).
pub(super) fn ops_protected_resource(state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    let issuer = oauth.service.issuer();
    public_json(resource_metadata(issuer, issuer.url("/ops")))
}

/// `/.well-known/oauth-protected-resource/apps/<appId>` (`endpoint`: `.../apps/<appId>/mcp`):
/// one app's resource, if it exists. RFC 9728 section 3.3: `resource` is the URL the metadata
/// path was derived from, so a client that followed the app endpoint's challenge finds the
/// endpoint it asked about.
pub(super) async fn app_protected_resource(app_id: &str, endpoint: bool, state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    let issuer = oauth.service.issuer();
    let resource = issuer.url(&app_resource_path(app_id, endpoint));
    let known = match ResourceIndicator::classify(issuer, Some(&resource)) {
        Ok(indicator @ ResourceIndicator::App(_)) => oauth.service.knows_resource(&indicator).await,
        _ => Ok(false),
    };
    match known {
        Ok(true) => public_json(resource_metadata(issuer, resource)),
        Ok(false) => StatusCode::NOT_FOUND.into_response(),
        Err(error) => {
            tracing::error!(error = ?error, "resource lookup failed");
            StatusCode::INTERNAL_SERVER_ERROR.into_response()
        }
    }
}

pub(super) fn authorization_server(state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    let issuer = oauth.service.issuer();
    public_json(json!({
        "issuer": issuer.as_str(),
        "authorization_endpoint": issuer.url("/oauth/authorize"),
        "token_endpoint": issuer.url("/oauth/token"),
        "registration_endpoint": issuer.url("/oauth/register"),
        "response_types_supported": ["code"],
        "grant_types_supported": ["authorization_code"],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
        "scopes_supported": ["mcp"],
        "authorization_response_iss_parameter_supported": true,
        "client_id_metadata_document_supported": true,
    }))
}

/// `resource_documentation`: how to connect, for a person who follows the link.
pub(super) fn documentation(state: &Arc<RestRoutes>) -> Response {
    let Some(oauth) = enabled(state) else {
        return not_found();
    };
    let mcp = super::consent_page::escape(&oauth.service.issuer().url("/mcp"));
    // The consent pages' frame: their headers too (no framing, no sniffing, a strict policy).
    super::consent_page::page(
        StatusCode::OK,
        "MCP server",
        &format!(
            "<h1>MCP server</h1><p>Add <code>{mcp}</code> to an MCP client. The client discovers \
             this server's OAuth endpoints, registers itself and opens a consent page, where you \
             approve it with the pair code printed when the server started or with a key.</p>"
        ),
    )
}
