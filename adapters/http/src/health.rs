use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem::{IntoResponse, handler};

/// Whether the server's dependencies answer (the database, for readiness probes).
#[async_trait::async_trait]
pub trait Readiness: Send + Sync {
    async fn ready(&self) -> Result<(), NotReady>;
}

/// Why the server is not ready; the reason `/readyz` shows (a dependency's own error is only logged).
#[derive(Debug, thiserror::Error)]
pub enum NotReady {
    #[error("shutting down")]
    ShuttingDown,
    /// The start-up build of the blueprint index is still running.
    #[error("building the blueprint index")]
    BuildingIndex,
    #[error("the database does not answer")]
    Database(String),
}

/// 200 while the process serves requests.
#[handler]
pub async fn healthz() -> impl IntoResponse {
    poem::web::Json(serde_json::json!({ "status": "ok" }))
}

/// 200 when the database answers and the blueprint index is built; 503 with the reason otherwise.
#[handler]
pub async fn readyz(Data(readiness): Data<&Arc<dyn Readiness>>) -> poem::Response {
    match readiness.ready().await {
        Ok(()) => poem::web::Json(serde_json::json!({ "status": "ready" })).into_response(),
        Err(not_ready) => {
            match &not_ready {
                NotReady::Database(error) => tracing::warn!(%error, "readiness check failed"),
                other => tracing::debug!(reason = %other, "not ready"),
            }
            (
                StatusCode::SERVICE_UNAVAILABLE,
                poem::web::Json(serde_json::json!({ "status": "unavailable", "reason": not_ready.to_string() })),
            )
                .into_response()
        }
    }
}
