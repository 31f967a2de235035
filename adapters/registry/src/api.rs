//! The registry routes as poem-openapi operations. Each handler builds its answer itself (see
//! `openapi_glue`), so every refusal has the JSON shape of docs/registry.md.

use std::sync::Arc;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use chrono::{DateTime, SecondsFormat, Utc};
use poem::http::StatusCode;
use poem::web::Data;
use poem::{Request, Response};
use poem_openapi::param::{Path, Query};
use poem_openapi::payload::{Binary, Json, PlainText};
use poem_openapi::{ApiResponse, OpenApi};
use svc_application::ports::registry::Publisher;
use svc_application::services::registry::{
    PublishRequest, PublishSignature, RegistryError, RegistryService, SearchQuery,
};
use svc_domain::artifact::{ArtifactVersion, BundleDigest, MANIFEST_SCHEMA};

use crate::errors::{error_response, failure_body, json_response, plain_error};
use crate::openapi_glue::{BodyError, Described, JsonBody};
use crate::wire::*;

/// What the routes share.
pub struct RegistryState {
    pub service: RegistryService,
    /// Origin written into `bundleUrl` (no trailing slash).
    pub public_base_url: String,
}

pub struct RegistryApi;

macro_rules! answers {
    ($name:ident { $ok_status:literal => $ok:ty $(, $status:literal => $variant:ident)* $(,)? }) => {
        #[derive(ApiResponse)]
        pub enum $name {
            #[oai(status = $ok_status)]
            Ok($ok),
            $(
                #[oai(status = $status)]
                $variant(Json<ErrorBody>),
            )*
        }
    };
}

answers!(HealthAnswer { 200 => Json<Health> });
answers!(WhoAmIAnswer { 200 => Json<WhoAmI>, 401 => Unauthorized });
answers!(SchemaAnswer { 200 => Json<serde_json::Value> });
answers!(AuthorKeyAnswer { 201 => Json<AuthorKeyBody>, 400 => BadRequest, 401 => Unauthorized, 408 => TimedOut, 409 => Conflict, 413 => TooLarge });
answers!(AuthorKeyReadAnswer { 200 => Json<AuthorKeyBody>, 401 => Unauthorized, 404 => NotFound });
answers!(PublishAnswer { 201 => Json<PublishedBody>, 400 => BadRequest, 401 => Unauthorized, 403 => Forbidden, 408 => TimedOut, 409 => Conflict, 413 => TooLarge });
answers!(ConformanceAnswer { 200 => Json<ConformanceBody>, 400 => BadRequest, 401 => Unauthorized, 408 => TimedOut, 413 => TooLarge });
answers!(ListingAnswer { 200 => Json<VersionListing>, 400 => BadRequest, 401 => Unauthorized, 404 => NotFound });
answers!(VersionAnswer { 200 => Json<VersionDetail>, 400 => BadRequest, 401 => Unauthorized, 404 => NotFound, 410 => Gone });
answers!(BundleAnswer { 200 => Binary<Vec<u8>>, 401 => Unauthorized, 404 => NotFound });
answers!(SearchAnswer { 200 => Json<SearchResults>, 400 => BadRequest, 401 => Unauthorized });
answers!(YankAnswer { 200 => Json<YankBody>, 400 => BadRequest, 401 => Unauthorized, 403 => Forbidden, 404 => NotFound, 408 => TimedOut });
answers!(OpenApiAnswer { 200 => PlainText<String> });

type State<'a> = Data<&'a Arc<RegistryState>>;

#[OpenApi]
impl RegistryApi {
    /// Liveness
    #[oai(path = "/health", method = "get")]
    async fn health(&self) -> Described<HealthAnswer> {
        Described::new(json_response(StatusCode::OK, &Health { status: "ok".into() }))
    }

    /// The publisher a bearer token acts for
    #[oai(path = "/whoami", method = "get")]
    async fn whoami(&self, req: &Request, state: State<'_>) -> Described<WhoAmIAnswer> {
        Described::new(match required_caller(req, &state).await {
            Ok(publisher) => json_response(
                StatusCode::OK,
                &WhoAmI {
                    publisher: publisher.name,
                    admin: publisher.admin,
                },
            ),
            Err(error) => error_response(&error),
        })
    }

    /// The manifest's JSON Schema (draft 2020-12)
    #[oai(path = "/schemas/manifest.json", method = "get")]
    async fn manifest_schema(&self) -> Described<SchemaAnswer> {
        Described::new(
            Response::builder()
                .content_type("application/schema+json")
                .header("cache-control", "public, max-age=300")
                .body(MANIFEST_SCHEMA),
        )
    }

    /// Register a publisher's Ed25519 public key (credential)
    ///
    /// 201 when new; 200 with the same body when this publisher registered the key before.
    #[oai(path = "/author-keys", method = "post")]
    async fn register_author_key(
        &self,
        req: &Request,
        body: JsonBody<AuthorKeyRequest>,
        state: State<'_>,
    ) -> Described<AuthorKeyAnswer> {
        let answer = async {
            let publisher = required_caller(req, &state).await?;
            let body = read_body(body).await?;
            let (key, created) = state.service.register_author_key(&publisher, &body.public_key).await?;
            let status = if created { StatusCode::CREATED } else { StatusCode::OK };
            Ok(json_response(status, &author_key_body(key)))
        };
        Described::new(answer.await.unwrap_or_else(|e: Refusal| e.into_response()))
    }

    /// One registered author key (public)
    #[oai(path = "/author-keys/:public_key_id", method = "get")]
    async fn author_key(
        &self,
        req: &Request,
        public_key_id: Path<String>,
        state: State<'_>,
    ) -> Described<AuthorKeyReadAnswer> {
        let answer = async {
            // Public, but a token that is sent must be valid (docs/registry.md, "Credentials").
            optional_caller(req, &state).await?;
            let key = state.service.author_key(&public_key_id).await?;
            Ok(json_response(StatusCode::OK, &author_key_body(key)))
        };
        Described::new(answer.await.unwrap_or_else(|e: Refusal| e.into_response()))
    }

    /// Publish a version (credential)
    #[oai(path = "/publish", method = "post")]
    async fn publish(
        &self,
        req: &Request,
        body: JsonBody<PublishRequestBody>,
        state: State<'_>,
    ) -> Described<PublishAnswer> {
        let answer = async {
            let publisher = required_caller(req, &state).await?;
            let body = read_body(body).await?;
            let request = PublishRequest {
                manifest: body.manifest,
                bundle: body.bundle.as_deref().map(|b| decode("bundle", b)).transpose()?,
                bundle_sha384: body.bundle_sha384,
                signature: PublishSignature {
                    algorithm: body.signature.algorithm,
                    public_key_id: body.signature.public_key_id,
                    value: body
                        .signature
                        .value
                        .as_deref()
                        .map(|v| decode("signature.value", v))
                        .transpose()?,
                    sigstore_bundle: body.signature.sigstore_bundle,
                },
            };
            let published = state.service.publish(Some(&publisher), request).await?;
            let identity = &published.version.identity;
            let answer = PublishedBody {
                scope: identity.scope.as_str().to_owned(),
                name: identity.name.as_str().to_owned(),
                version: identity.version.as_str().to_owned(),
                bundle_sri: published.digest.sri(),
                bundle_url: bundle_url(&state, &published.digest),
                published_at: timestamp(published.version.published_at),
                sigstore_verification: published.sigstore.map(|s| s.as_str().to_owned()),
            };
            Ok(json_response(StatusCode::CREATED, &answer))
        };
        Described::new(answer.await.unwrap_or_else(|e: Refusal| e.into_response()))
    }

    /// Dry run of the conformance gate (credential)
    #[oai(path = "/conformance/check", method = "post")]
    async fn conformance_check(
        &self,
        req: &Request,
        body: JsonBody<ConformanceRequest>,
        state: State<'_>,
    ) -> Described<ConformanceAnswer> {
        let answer = async {
            required_caller(req, &state).await?;
            let body = read_body(body).await?;
            let bundle = body.bundle.as_deref().map(|b| decode("bundle", b)).transpose()?;
            let failures = state
                .service
                .check_conformance(&body.manifest, bundle.as_deref())
                .await?;
            let answer = ConformanceBody {
                ok: failures.is_empty(),
                failures: (!failures.is_empty()).then(|| failures.iter().map(failure_body).collect()),
            };
            Ok(json_response(StatusCode::OK, &answer))
        };
        Described::new(answer.await.unwrap_or_else(|e: Refusal| e.into_response()))
    }

    /// Every version of a package
    #[oai(path = "/pkg/:scope/:name", method = "get")]
    async fn versions(
        &self,
        req: &Request,
        scope: Path<String>,
        name: Path<String>,
        state: State<'_>,
    ) -> Described<ListingAnswer> {
        let answer = async {
            let caller = optional_caller(req, &state).await?;
            let package = state
                .service
                .versions(caller.as_ref(), &path_scope(&scope), &name)
                .await?;
            let listing = VersionListing {
                scope: package.scope.as_str().to_owned(),
                name: package.name.as_str().to_owned(),
                truncated: package.truncated,
                versions: package
                    .versions
                    .into_iter()
                    .map(|v| VersionEntry {
                        version: v.version.as_str().to_owned(),
                        published_at: timestamp(v.published_at),
                        yanked: v.yanked,
                    })
                    .collect(),
            };
            Ok(json_response(StatusCode::OK, &listing))
        };
        Described::new(answer.await.unwrap_or_else(|e: Refusal| e.into_response()))
    }

    /// One version: manifest, fetchable URLs, signing metadata
    ///
    /// A yanked version answers 410 with its manifest and the reason.
    #[oai(path = "/pkg/:scope/:name/:version", method = "get")]
    async fn version(
        &self,
        req: &Request,
        scope: Path<String>,
        name: Path<String>,
        version: Path<String>,
        state: State<'_>,
    ) -> Described<VersionAnswer> {
        let answer = async {
            let caller = optional_caller(req, &state).await?;
            let found = state
                .service
                .version(caller.as_ref(), &path_scope(&scope), &name, &version)
                .await?;
            Ok(json_response(StatusCode::OK, &version_detail(&state, found)))
        };
        Described::new(answer.await.unwrap_or_else(|e: Refusal| e.into_response()))
    }

    /// A bundle by the hex of its sha384 (immutable)
    #[oai(path = "/bundles/sha384/:hex", method = "get")]
    async fn bundle(&self, req: &Request, hex: Path<String>, state: State<'_>) -> Described<BundleAnswer> {
        let answer = async {
            // Public, but a token that is sent must be valid (docs/registry.md, "Credentials").
            optional_caller(req, &state).await?;
            let (digest, bundle) = state.service.bundle(&hex).await?;
            Ok(Response::builder()
                .content_type(bundle.kind.bundle_media_type())
                .header("cache-control", "public, max-age=31536000, immutable")
                .header("etag", format!("\"sha384-{}\"", digest.hex()))
                .header("access-control-allow-origin", "*")
                .body(bundle.bytes))
        };
        Described::new(answer.await.unwrap_or_else(|e: Refusal| e.into_response()))
    }

    /// Search packages; filters AND-compose
    #[oai(path = "/search", method = "get")]
    #[allow(clippy::too_many_arguments)]
    async fn search(
        &self,
        req: &Request,
        q: Query<Option<String>>,
        kind: Query<Option<String>>,
        hook: Query<Option<String>>,
        tag: Query<Option<String>>,
        author: Query<Option<String>>,
        state: State<'_>,
    ) -> Described<SearchAnswer> {
        let answer = async {
            let caller = optional_caller(req, &state).await?;
            let query = SearchQuery {
                q: q.0,
                kind: kind.0,
                hook: hook.0,
                tag: tag.0,
                author: author.0,
            };
            let hits = state.service.search(caller.as_ref(), query).await?;
            let results = hits
                .into_iter()
                .map(|hit| SearchResult {
                    scope: hit.scope,
                    name: hit.name,
                    latest_version: hit.latest_version,
                    kind: hit.kind.as_str().to_owned(),
                    description: hit.description,
                    tags: hit.tags,
                    author: hit.author,
                })
                .collect();
            Ok(json_response(StatusCode::OK, &SearchResults { results }))
        };
        Described::new(answer.await.unwrap_or_else(|e: Refusal| e.into_response()))
    }

    /// Yank a version (admin credential)
    #[oai(path = "/admin/yank", method = "post")]
    async fn yank(&self, req: &Request, body: JsonBody<YankRequest>, state: State<'_>) -> Described<YankAnswer> {
        let answer = async {
            let caller = required_caller(req, &state).await?;
            let body = read_body(body).await?;
            let yanked = state
                .service
                .yank_as(Some(&caller), &body.scope, &body.name, &body.version, &body.reason)
                .await?;
            let identity = &yanked.version.identity;
            let answer = YankBody {
                scope: identity.scope.as_str().to_owned(),
                name: identity.name.as_str().to_owned(),
                version: identity.version.as_str().to_owned(),
                yanked: true,
                already_yanked: yanked.already_yanked,
                reason: yanked.version.yank_reason.clone().unwrap_or_default(),
            };
            Ok(json_response(StatusCode::OK, &answer))
        };
        Described::new(answer.await.unwrap_or_else(|e: Refusal| e.into_response()))
    }
}

/// A refusal before or from the service.
enum Refusal {
    Service(RegistryError),
    Body(BodyError),
}

impl Refusal {
    fn into_response(self) -> Response {
        match self {
            Self::Service(error) => error_response(&error),
            Self::Body(BodyError::TooLarge) => plain_error(
                StatusCode::PAYLOAD_TOO_LARGE,
                "payload_too_large",
                format!("the body is over {} bytes", crate::openapi_glue::BODY_LIMIT),
            ),
            Self::Body(BodyError::Paused) => plain_error(
                StatusCode::REQUEST_TIMEOUT,
                "request_timeout",
                "the body did not arrive in time",
            ),
            Self::Body(BodyError::Busy) => plain_error(
                StatusCode::SERVICE_UNAVAILABLE,
                "overloaded",
                "the registry is receiving as many bodies as it holds at once; retry shortly",
            ),
            Self::Body(BodyError::Invalid(why)) => plain_error(
                StatusCode::BAD_REQUEST,
                "invalid_request",
                format!("the body is not of the documented shape: {why}"),
            ),
        }
    }
}

impl From<RegistryError> for Refusal {
    fn from(error: RegistryError) -> Self {
        Self::Service(error)
    }
}

async fn read_body<T: serde::de::DeserializeOwned>(body: JsonBody<T>) -> Result<T, Refusal> {
    body.read().await.map_err(Refusal::Body)
}

fn decode(field: &str, encoded: &str) -> Result<Vec<u8>, Refusal> {
    STANDARD
        .decode(encoded)
        .map_err(|_| Refusal::Body(BodyError::Invalid(format!("`{field}` is not standard base64"))))
}

fn bearer(req: &Request) -> Result<Option<&str>, RegistryError> {
    match req.headers().get("authorization") {
        None => Ok(None),
        Some(value) => value
            .to_str()
            .ok()
            .and_then(|v| v.strip_prefix("Bearer ").or_else(|| v.strip_prefix("bearer ")))
            .map(|token| Some(token.trim()))
            .ok_or(RegistryError::Unauthorized),
    }
}

async fn optional_caller(req: &Request, state: &RegistryState) -> Result<Option<Publisher>, RegistryError> {
    state.service.authenticate(bearer(req)?).await
}

async fn required_caller(req: &Request, state: &RegistryState) -> Result<Publisher, RegistryError> {
    optional_caller(req, state).await?.ok_or(RegistryError::Unauthorized)
}

/// `@acme`, also when the client sent it as `%40acme`.
fn path_scope(raw: &str) -> String {
    match raw.strip_prefix("%40") {
        Some(rest) => format!("@{rest}"),
        None => raw.to_owned(),
    }
}

fn timestamp(at: DateTime<Utc>) -> String {
    at.to_rfc3339_opts(SecondsFormat::Millis, true)
}

fn bundle_url(state: &RegistryState, digest: &BundleDigest) -> String {
    format!("{}/bundles/sha384/{}", state.public_base_url, digest.hex())
}

fn author_key_body(key: svc_application::ports::registry::AuthorKey) -> AuthorKeyBody {
    AuthorKeyBody {
        public_key_id: key.public_key_id,
        public_key: key.public_key,
        publisher: key.publisher,
        created_at: timestamp(key.created_at),
    }
}

fn version_detail(state: &RegistryState, version: ArtifactVersion) -> VersionDetail {
    let bundle_url = version
        .digest()
        .map(|digest| bundle_url(state, &digest))
        .unwrap_or_default();
    VersionDetail {
        manifest: version.manifest,
        bundle_url,
        bundle_sri: version.bundle_sri,
        signature: SignatureBody {
            algorithm: version.signature.algorithm.as_str().to_owned(),
            public_key_id: version.signature.public_key_id,
            value: version.signature.value,
            sigstore_bundle: version.signature.sigstore_bundle,
        },
        author_public_key: version.author_public_key,
        published_at: timestamp(version.published_at),
    }
}
