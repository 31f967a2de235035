use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem::{IntoResponse, handler};

/// Whether the server's dependencies answer (the database, for readiness probes).
#[async_trait::async_trait]
pub trait Readiness: Send + Sync {
    async fn ready(&self) -> Result<(), String>;
}

/// 200 while the process serves requests.
#[handler]
pub async fn healthz() -> impl IntoResponse {
    poem::web::Json(serde_json::json!({ "status": "ok" }))
}

/// 200 when the database answers, 503 otherwise.
#[handler]
pub async fn readyz(Data(readiness): Data<&Arc<dyn Readiness>>) -> poem::Response {
    match readiness.ready().await {
        Ok(()) => poem::web::Json(serde_json::json!({ "status": "ready" })).into_response(),
        Err(reason) => {
            tracing::warn!(%reason, "readiness check failed");
            (
                StatusCode::SERVICE_UNAVAILABLE,
                poem::web::Json(serde_json::json!({ "status": "unavailable" })),
            )
                .into_response()
        }
    }
}
