//! Request and response bodies of the registry routes (docs/registry.md): serde reads and writes
//! them; poem-openapi describes them in `/openapi.json` from the same types.

use poem_openapi::Object;
use serde::{Deserialize, Serialize};
use serde_json::Value;

#[derive(Debug, Deserialize, Object)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[oai(rename_all = "camelCase")]
pub struct AuthorKeyRequest {
    /// Base64 of the raw 32-byte Ed25519 public key.
    pub public_key: String,
}

#[derive(Debug, Serialize, Object)]
#[serde(rename_all = "camelCase")]
#[oai(rename_all = "camelCase")]
pub struct AuthorKeyBody {
    pub public_key_id: String,
    pub public_key: String,
    pub publisher: String,
    pub created_at: String,
}

#[derive(Debug, Deserialize, Object)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[oai(rename_all = "camelCase")]
pub struct SignatureRequest {
    /// `ed25519` or `sigstore`.
    pub algorithm: String,
    pub public_key_id: Option<String>,
    /// Base64 of the 64-byte Ed25519 signature.
    pub value: Option<String>,
    /// The Sigstore bundle JSON.
    pub sigstore_bundle: Option<Value>,
}

#[derive(Debug, Deserialize, Object)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[oai(rename_all = "camelCase")]
pub struct PublishRequestBody {
    /// The manifest (`/schemas/manifest.json`).
    pub manifest: Value,
    /// Base64 of the payload: a gadget's compiled module, a blueprint's TSX source.
    pub bundle: Option<String>,
    /// `sha384-<base64>` of the payload, checked against the registry's own hash.
    pub bundle_sha384: Option<String>,
    pub signature: SignatureRequest,
}

#[derive(Debug, Serialize, Object)]
#[serde(rename_all = "camelCase")]
#[oai(rename_all = "camelCase")]
pub struct PublishedBody {
    pub scope: String,
    pub name: String,
    pub version: String,
    pub bundle_sri: String,
    pub bundle_url: String,
    pub published_at: String,
    /// Sigstore artifacts only: `unverified` until the registry's verifier is wired.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sigstore_verification: Option<String>,
}

#[derive(Debug, Deserialize, Object)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
#[oai(rename_all = "camelCase")]
pub struct ConformanceRequest {
    pub manifest: Value,
    /// Base64 of the payload.
    pub bundle: Option<String>,
}

#[derive(Debug, Clone, Serialize, Object)]
pub struct GateFailureBody {
    pub rule: String,
    pub path: String,
    pub message: String,
}

#[derive(Debug, Serialize, Object)]
pub struct ConformanceBody {
    pub ok: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<Vec<GateFailureBody>>,
}

#[derive(Debug, Serialize, Object)]
#[serde(rename_all = "camelCase")]
#[oai(rename_all = "camelCase")]
pub struct VersionEntry {
    pub version: String,
    pub published_at: String,
    pub yanked: bool,
}

#[derive(Debug, Serialize, Object)]
pub struct VersionListing {
    pub scope: String,
    pub name: String,
    pub versions: Vec<VersionEntry>,
    /// More versions are stored than listed: the listing holds the highest 1000.
    pub truncated: bool,
}

#[derive(Debug, Serialize, Object)]
#[serde(rename_all = "camelCase")]
#[oai(rename_all = "camelCase")]
pub struct SignatureBody {
    pub algorithm: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_key_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sigstore_bundle: Option<Value>,
}

#[derive(Debug, Serialize, Object)]
#[serde(rename_all = "camelCase")]
#[oai(rename_all = "camelCase")]
pub struct VersionDetail {
    pub manifest: Value,
    pub bundle_url: String,
    pub bundle_sri: String,
    pub signature: SignatureBody,
    /// The key this version was signed with (Ed25519 only).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub author_public_key: Option<String>,
    pub published_at: String,
}

#[derive(Debug, Serialize, Object)]
#[serde(rename_all = "camelCase")]
#[oai(rename_all = "camelCase")]
pub struct SearchResult {
    pub scope: String,
    pub name: String,
    pub latest_version: String,
    pub kind: String,
    pub description: String,
    pub tags: Vec<String>,
    /// The publisher name.
    pub author: String,
}

#[derive(Debug, Serialize, Object)]
pub struct SearchResults {
    pub results: Vec<SearchResult>,
}

#[derive(Debug, Deserialize, Object)]
#[serde(deny_unknown_fields)]
pub struct YankRequest {
    pub scope: String,
    pub name: String,
    pub version: String,
    pub reason: String,
}

#[derive(Debug, Serialize, Object)]
#[serde(rename_all = "camelCase")]
#[oai(rename_all = "camelCase")]
pub struct YankBody {
    pub scope: String,
    pub name: String,
    pub version: String,
    pub yanked: bool,
    pub already_yanked: bool,
    pub reason: String,
}

#[derive(Debug, Serialize, Object)]
pub struct WhoAmI {
    pub publisher: String,
    pub admin: bool,
}

#[derive(Debug, Serialize, Object)]
pub struct Health {
    pub status: String,
}

/// Every non-2xx answer.
#[derive(Debug, Default, Serialize, Object)]
pub struct ErrorBody {
    /// snake_case code (docs/registry.md, "Errors").
    pub error: String,
    pub message: String,
    /// JSON pointer into the request body.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub path: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
    /// Every gate failure (`invalid_manifest`, `conformance_failed`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub failures: Option<Vec<GateFailureBody>>,
    /// Why the version was yanked (`version_yanked`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// The yanked version's manifest (`version_yanked`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub manifest: Option<Value>,
}
