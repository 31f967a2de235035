//! `svc-registry`: the artifact registry's HTTP routes (docs/registry.md) on poem-openapi, the
//! filesystem bundle store. Signatures are verified by `svc-attest` behind the registry's ports.

mod api;
mod bundle_store;
mod errors;
mod openapi_glue;
mod wire;

use std::sync::{Arc, OnceLock};

use poem::http::StatusCode;
use poem::{Endpoint, EndpointExt, IntoEndpoint, Response, Route, handler};
use poem_openapi::OpenApiService;

pub use api::RegistryState;
pub use bundle_store::FsBundleStore;
pub use errors::overloaded;

fn service() -> OpenApiService<api::RegistryApi, ()> {
    OpenApiService::new(api::RegistryApi, "svc: artifact registry", env!("CARGO_PKG_VERSION")).description(
        "The signed artifact registry of gadgets and blueprints (Document 3; docs/registry.md). \
         Credentials are `Authorization: Bearer <token>` minted by `svc registry token mint`. \
         Every non-2xx answer is JSON `{ error, message, path?, rule? }`.",
    )
}

/// The OpenAPI document, generated once.
pub fn document() -> &'static str {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    DOCUMENT.get_or_init(|| service().spec())
}

#[handler]
fn serve_document() -> Response {
    Response::builder().content_type("application/json").body(document())
}

/// Every registry route, with JSON answers for unknown paths and methods too.
pub fn routes(state: RegistryState) -> impl Endpoint {
    Route::new()
        .at("/openapi.json", serve_document)
        .nest_no_strip("/", service().into_endpoint())
        .data(Arc::new(state))
        .catch_all_error(|error: poem::Error| async move {
            let status = error.status();
            let code = match status {
                StatusCode::NOT_FOUND => "not_found",
                StatusCode::METHOD_NOT_ALLOWED => "method_not_allowed",
                StatusCode::PAYLOAD_TOO_LARGE => "payload_too_large",
                status if status.is_server_error() => "internal",
                _ => "invalid_request",
            };
            errors::plain_error(status, code, error.to_string())
        })
}
