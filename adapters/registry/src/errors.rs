//! One table from the registry's errors to HTTP: status and JSON body (docs/registry.md).

use poem::Response;
use poem::http::{HeaderValue, StatusCode, header};
use svc_application::services::registry::RegistryError;
use svc_domain::artifact::GateFailure;

use crate::wire::{ErrorBody, GateFailureBody};

pub(crate) fn status_of(error: &RegistryError) -> StatusCode {
    match error {
        RegistryError::Unauthorized => StatusCode::UNAUTHORIZED,
        RegistryError::Forbidden(_) | RegistryError::QuotaExceeded(_) => StatusCode::FORBIDDEN,
        RegistryError::NotFound(_) => StatusCode::NOT_FOUND,
        RegistryError::InvalidRequest(_)
        | RegistryError::InvalidVersion(_)
        | RegistryError::InvalidManifest(_)
        | RegistryError::ConformanceFailed(_)
        | RegistryError::BundleMismatch(_)
        | RegistryError::UnknownKey(_)
        | RegistryError::BadSignature(_) => StatusCode::BAD_REQUEST,
        RegistryError::VersionExists(_) | RegistryError::SamePrecedenceExists { .. } | RegistryError::KeyExists => {
            StatusCode::CONFLICT
        }
        RegistryError::Yanked(_) => StatusCode::GONE,
        RegistryError::Busy(_) => StatusCode::SERVICE_UNAVAILABLE,
        RegistryError::Internal(_) => StatusCode::INTERNAL_SERVER_ERROR,
    }
}

pub(crate) fn failure_body(failure: &GateFailure) -> GateFailureBody {
    GateFailureBody {
        rule: failure.rule.to_owned(),
        path: failure.path.clone(),
        message: failure.message.clone(),
    }
}

pub(crate) fn error_response(error: &RegistryError) -> Response {
    if let RegistryError::Internal(cause) = error {
        tracing::error!(error = format!("{cause:#}"), "registry request failed");
    }
    let failures: Vec<GateFailureBody> = error.failures().iter().map(failure_body).collect();
    let mut body = ErrorBody {
        error: error.code().to_owned(),
        message: error.to_string(),
        path: failures.first().map(|f| f.path.clone()),
        rule: failures.first().map(|f| f.rule.clone()),
        failures: (!failures.is_empty()).then_some(failures),
        ..ErrorBody::default()
    };
    if let RegistryError::Yanked(version) = error {
        body.reason = Some(version.yank_reason.clone().unwrap_or_default());
        body.manifest = Some(version.manifest.clone());
    }
    let mut response = json_response(status_of(error), &body);
    if matches!(error, RegistryError::Unauthorized) {
        response.headers_mut().insert(
            "www-authenticate",
            "Bearer realm=\"registry\"".parse().expect("a valid header"),
        );
    }
    if let RegistryError::Busy(busy) = error {
        response
            .headers_mut()
            .insert(header::RETRY_AFTER, HeaderValue::from(busy.retry_after_seconds));
    }
    response
}

/// The answer on a connection past the server's cap (or opened while it drains) to anything but
/// `GET /health`: 503 `overloaded` (docs/registry.md).
pub fn overloaded() -> Response {
    plain_error(
        StatusCode::SERVICE_UNAVAILABLE,
        "overloaded",
        "the registry is at its connection limit or shutting down; only GET /health answers on this connection",
    )
}

/// An error answer built by the routes themselves (a bad body, an unknown route).
pub(crate) fn plain_error(status: StatusCode, code: &str, message: impl Into<String>) -> Response {
    json_response(
        status,
        &ErrorBody {
            error: code.to_owned(),
            message: message.into(),
            ..ErrorBody::default()
        },
    )
}

pub(crate) fn json_response(status: StatusCode, body: &impl serde::Serialize) -> Response {
    Response::builder()
        .status(status)
        .content_type("application/json")
        .body(serde_json::to_vec(body).expect("wire bodies serialize"))
}

#[cfg(test)]
mod tests {
    use svc_application::services::cpu_gate::CpuBusy;
    use svc_domain::artifact::{ArtifactError, GateFailure};

    use super::*;

    /// docs/registry.md, "Errors": every refusal's status and code, and the fields it carries.
    #[test]
    fn every_error_has_its_documented_status_and_code() {
        let failure = || vec![GateFailure::new("gadget_exports", "/bundle", "exports `x`")];
        let version = ArtifactError::InvalidVersion {
            raw: "latest".into(),
            reason: "no".into(),
        };
        let rows: Vec<(RegistryError, u16, &str)> = vec![
            (RegistryError::Unauthorized, 401, "unauthorized"),
            (RegistryError::Forbidden("x".into()), 403, "forbidden"),
            (RegistryError::QuotaExceeded("x".into()), 403, "quota_exceeded"),
            (RegistryError::NotFound("x".into()), 404, "not_found"),
            (RegistryError::InvalidRequest("x".into()), 400, "invalid_request"),
            (RegistryError::InvalidVersion(version), 400, "invalid_version"),
            (RegistryError::InvalidManifest(failure()), 400, "invalid_manifest"),
            (RegistryError::ConformanceFailed(failure()), 400, "conformance_failed"),
            (RegistryError::BundleMismatch("x".into()), 400, "bundle_mismatch"),
            (RegistryError::UnknownKey("x".into()), 400, "unknown_key"),
            (RegistryError::BadSignature("x".into()), 400, "bad_signature"),
            (RegistryError::VersionExists("x".into()), 409, "version_exists"),
            (
                RegistryError::SamePrecedenceExists {
                    publishing: "@acme/chart@1.2.3+fix".into(),
                    existing: "@acme/chart@1.2.3".into(),
                },
                409,
                "version_exists",
            ),
            (RegistryError::KeyExists, 409, "key_exists"),
            (
                RegistryError::Busy(CpuBusy { retry_after_seconds: 5 }),
                503,
                "overloaded",
            ),
            (
                RegistryError::Internal(anyhow::anyhow!("disk on fire")),
                500,
                "internal",
            ),
        ];
        for (error, status, code) in rows {
            assert_eq!((status_of(&error).as_u16(), error.code()), (status, code), "{error:?}");
        }
        let response = error_response(&RegistryError::ConformanceFailed(failure()));
        assert_eq!(response.status(), StatusCode::BAD_REQUEST);
        let busy = error_response(&RegistryError::Busy(CpuBusy { retry_after_seconds: 5 }));
        assert_eq!(busy.status(), StatusCode::SERVICE_UNAVAILABLE);
        assert_eq!(busy.headers()[header::RETRY_AFTER], "5", "told when to retry");
        let internal = RegistryError::Internal(anyhow::anyhow!("disk on fire"));
        assert!(
            !internal.to_string().contains("disk"),
            "an internal cause is never shown"
        );
    }
}
