//! Two small adapters between our handlers and poem-openapi, so the handlers keep the exact
//! wire of docs/registry.md (JSON errors for every refusal, including a body that does not
//! parse) while poem-openapi still routes and describes them:
//! - [`Described<R>`]: a handler's own `poem::Response`, documented as the `ApiResponse` `R`;
//! - [`JsonBody<T>`]: the body, read (at most [`BODY_LIMIT`]) and parsed with serde when the
//!   handler asks, after it has authenticated the caller; documented as `Json<T>`; a parse
//!   failure is the handler's to answer.

use std::marker::PhantomData;

use futures_util::FutureExt;
use poem::{IntoResponse, Request, Response};
use poem_openapi::payload::{Json, Payload};
use poem_openapi::registry::{MetaMediaType, MetaRequest, MetaResponses, Registry};
use poem_openapi::types::{ParseFromJSON, ToJSON};
use poem_openapi::{ApiExtractor, ApiExtractorType, ApiResponse, ExtractParamOptions};
use serde::de::DeserializeOwned;

/// Largest request body: a 6 MiB bundle in base64 plus its manifest.
pub const BODY_LIMIT: usize = 8 << 20;

pub struct Described<R>(Response, PhantomData<fn() -> R>);

impl<R> Described<R> {
    pub fn new(response: Response) -> Self {
        Self(response, PhantomData)
    }
}

impl<R> IntoResponse for Described<R> {
    fn into_response(self) -> Response {
        self.0
    }
}

impl<R: ApiResponse> ApiResponse for Described<R> {
    fn meta() -> MetaResponses {
        R::meta()
    }

    fn register(registry: &mut Registry) {
        R::register(registry);
    }
}

/// Why a body could not be read.
pub enum BodyError {
    TooLarge,
    /// It did not arrive in time: the server's connection layer cuts off a body that pauses for
    /// the idle timeout or takes longer than the body read timeout (an `io::ErrorKind::TimedOut`).
    Paused,
    /// The bodies arriving at once hold the server's budget for them (`io::ErrorKind::OutOfMemory`).
    Busy,
    Invalid(String),
}

/// The request's JSON body, not yet read: a handler authenticates first and then reads it, so a
/// caller without a credential never has up to [`BODY_LIMIT`] bytes read and parsed for it.
pub struct JsonBody<T>(Option<poem::Body>, PhantomData<fn() -> T>);

impl<T: DeserializeOwned> JsonBody<T> {
    /// The body read (at most [`BODY_LIMIT`]) and parsed.
    pub async fn read(self) -> Result<T, BodyError> {
        let Some(body) = self.0 else {
            return Err(BodyError::Invalid("the body was already read".into()));
        };
        let bytes = match body.into_bytes_limit(BODY_LIMIT).boxed().await {
            Ok(bytes) => bytes,
            Err(poem::error::ReadBodyError::PayloadTooLarge) => return Err(BodyError::TooLarge),
            Err(poem::error::ReadBodyError::Io(error)) if error.kind() == std::io::ErrorKind::TimedOut => {
                return Err(BodyError::Paused);
            }
            Err(poem::error::ReadBodyError::Io(error)) if error.kind() == std::io::ErrorKind::OutOfMemory => {
                return Err(BodyError::Busy);
            }
            Err(error) => return Err(BodyError::Invalid(error.to_string())),
        };
        // A manifest is parsed into a `Value`: serde_json's raw-value marker is refused first
        // (`svc_domain::json_marker`: nested markers take that parse past any stack).
        svc_domain::json_marker::refuse_raw_value_marker(&bytes)
            .and_then(|()| serde_json::from_slice(&bytes))
            .map_err(|error| BodyError::Invalid(error.to_string()))
    }
}

impl<'a, T: DeserializeOwned + ParseFromJSON + ToJSON + Send + Sync + 'static> ApiExtractor<'a> for JsonBody<T> {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];

    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        <Json<T> as Payload>::register(registry);
    }

    fn request_meta() -> Option<MetaRequest> {
        Some(MetaRequest {
            description: None,
            content: vec![MetaMediaType {
                content_type: <Json<T> as Payload>::CONTENT_TYPE,
                schema: <Json<T> as Payload>::schema_ref(),
            }],
            required: true,
        })
    }

    async fn from_request(
        _request: &'a Request,
        body: &mut poem::RequestBody,
        _options: ExtractParamOptions<()>,
    ) -> poem::Result<Self> {
        Ok(Self(body.take().ok(), PhantomData))
    }
}
