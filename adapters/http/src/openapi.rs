//! The OpenAPI document of the REST-shaped routes: the OAuth surface with its discovery documents
//! (`oauth::api`), the pairing route (`pairing::PairingApi`) and the hosted account pages
//! (`account_api`). poem-openapi routes them (the
//! `#[OpenApi]` impls) and generates the document from the same impls; it is served at
//! `GET /openapi.json` (always: it is static, and it says which answers depend on `--oauth` or
//! strict mode).
//!
//! These routes speak OAuth, not poem-openapi's conventions: a parameter sent twice is an error,
//! bodies are read whatever their `Content-Type`, errors are RFC 6749 JSON or HTML pages, and
//! every answer has exact headers. Letting poem-openapi parse the parameters or render the
//! answers would change that wire behaviour (its own 400 and 415 answers, its serialisation), so
//! the handlers keep reading the request and building the `poem::Response` themselves, and the
//! types here let poem-openapi *describe* what they read and answer without touching either:
//!
//! - [`Described<R>`]: the handler's response, documented as the `#[derive(ApiResponse)]` type `R`;
//! - [`RequestBody<E, P>`]: the body taken by poem's extractor `E` exactly as before, documented
//!   as the payload `P` (for example `Form<TokenForm>`);
//! - [`QueryParam<T, REQUIRED>`]: documents one query parameter of type `T`; reads nothing.
//!
//! The schemathesis run (`tests/tests/blackbox/openapi_fuzz.rs`) checks the real answers against this
//! document (status codes, content types, headers and body schemas).

use std::marker::PhantomData;
use std::sync::OnceLock;

use futures_util::FutureExt;

use poem::{FromRequest, IntoResponse, Request, Response, handler};
use poem_openapi::payload::Payload;
use poem_openapi::registry::{MetaMediaType, MetaParamIn, MetaRequest, MetaResponses, MetaSchemaRef, Registry};
use poem_openapi::types::Type;
use poem_openapi::{ApiExtractor, ApiExtractorType, ApiResponse, ExtractParamOptions, Object, OpenApiService};

use crate::account_api::AccountApi;
use crate::oauth::OAuthApi;
use crate::pairing::PairingApi;

/// The routed APIs: poem-openapi's service, as an endpoint shared by the route prefixes it serves.
pub(crate) type ApiEndpoint = std::sync::Arc<poem::endpoint::BoxEndpoint<'static>>;

fn service() -> OpenApiService<(OAuthApi, PairingApi, AccountApi), ()> {
    OpenApiService::new(
        (OAuthApi, PairingApi, AccountApi),
        "svc: OAuth, pairing and account pages",
        env!("CARGO_PKG_VERSION"),
    )
    .description(
        "The OAuth 2.1 surface for MCP hosts (Document 2; `docs/oauth.md`) and the pair-code \
         exchange. Every `/oauth/*` and `/.well-known/*` path answers 404 unless the server runs \
         with `--oauth`; `/_svc/pair` answers 404 in `--dev-allow-all` mode; the `/account/*` pages (email \
         verification, password reset) answer 404 unless the server runs `--hosted`. Paths are relative \
         to the server's public base URL.",
    )
}

/// The endpoint that routes every documented path (nested without stripping its prefix).
pub(crate) fn endpoint() -> ApiEndpoint {
    std::sync::Arc::new(poem::IntoEndpoint::into_endpoint(service()))
}

/// The document, generated once.
pub fn document() -> &'static str {
    static DOCUMENT: OnceLock<String> = OnceLock::new();
    DOCUMENT.get_or_init(|| service().spec())
}

/// `GET /openapi.json`.
#[handler]
pub(crate) fn serve_document() -> Response {
    Response::builder()
        .content_type("application/json")
        .header("access-control-allow-origin", "*")
        .body(document())
}

/// A handler's own response, documented as the responses of `R`.
pub(crate) struct Described<R>(Response, PhantomData<fn() -> R>);

impl<R> Described<R> {
    pub(crate) fn new(response: Response) -> Self {
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

/// The request body as poem's extractor `E` takes it (no content-type check, no parsing beyond
/// `E`'s own), documented as the payload `P`.
pub(crate) struct RequestBody<E, P>(pub E, PhantomData<fn() -> P>);

impl<'a, E: FromRequest<'a>, P: Payload> ApiExtractor<'a> for RequestBody<E, P> {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::RequestObject];

    type ParamType = ();
    type ParamRawType = ();

    fn register(registry: &mut Registry) {
        P::register(registry);
    }

    fn request_meta() -> Option<MetaRequest> {
        Some(MetaRequest {
            description: None,
            content: vec![MetaMediaType {
                content_type: P::CONTENT_TYPE,
                schema: P::schema_ref(),
            }],
            required: true,
        })
    }

    async fn from_request(
        request: &'a Request,
        body: &mut poem::RequestBody,
        _options: ExtractParamOptions<()>,
    ) -> poem::Result<Self> {
        // Boxed like poem-openapi's own poem-extractor impl (rust-lang/rust#100013).
        Ok(Self(E::from_request(request, body).boxed().await?, PhantomData))
    }
}

/// One query parameter, documented; the handler reads the query string itself (a parameter sent
/// twice is an error there, which a typed extractor would hide).
pub(crate) struct QueryParam<T, const REQUIRED: bool>(PhantomData<fn() -> T>);

impl<'a, T: Type, const REQUIRED: bool> ApiExtractor<'a> for QueryParam<T, REQUIRED> {
    const TYPES: &'static [ApiExtractorType] = &[ApiExtractorType::Parameter];
    const PARAM_IS_REQUIRED: bool = REQUIRED;

    type ParamType = T;
    type ParamRawType = T::RawValueType;

    fn register(registry: &mut Registry) {
        T::register(registry);
    }

    fn param_in() -> Option<MetaParamIn> {
        Some(MetaParamIn::Query)
    }

    fn param_schema_ref() -> Option<MetaSchemaRef> {
        Some(T::schema_ref())
    }

    async fn from_request(
        _request: &'a Request,
        _body: &mut poem::RequestBody,
        _options: ExtractParamOptions<T>,
    ) -> poem::Result<Self> {
        Ok(Self(PhantomData))
    }
}

/// The body of a 429 answer of the pairing and OAuth routes (Document 2, Errors); described, never built
/// (the limiters write it).
#[derive(Object)]
#[allow(dead_code)]
pub(crate) struct RateLimited {
    error: RateLimitedDetail,
}

#[derive(Object)]
#[allow(dead_code)]
pub(crate) struct RateLimitedDetail {
    /// `"rate_limited"`
    code: String,
    message: String,
    /// Seconds, as in the `Retry-After` header.
    #[oai(rename = "retryAfter")]
    retry_after: u64,
}
