//! The registry's JSON shapes as the client reads and writes them (docs/registry.md; Document 3
//! fixes the rest). Manifests travel as JSON values: the client signs and stores what the registry
//! sent, byte-for-byte in meaning, and reads only the fields it needs through [`ManifestView`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Every non-2xx body.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ErrorBody {
    pub error: String,
    #[serde(default)]
    pub message: String,
    pub path: Option<String>,
    pub rule: Option<String>,
    /// 410 `version_yanked`.
    pub reason: Option<String>,
    pub manifest: Option<Value>,
}

/// `GET /whoami`.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct WhoAmI {
    pub publisher: String,
    #[serde(default)]
    pub admin: bool,
}

/// `POST /author-keys` answer.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct AuthorKey {
    pub public_key_id: String,
    pub public_key: String,
    pub publisher: String,
    pub created_at: String,
}

/// The signature part of a publish body and of a version read.
#[derive(Debug, Clone, Default, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct WireSignature {
    pub algorithm: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub public_key_id: Option<String>,
    /// base64 Ed25519 signature.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub value: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sigstore_bundle: Option<Value>,
}

/// `POST /publish` body.
#[derive(Debug, Clone, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct PublishRequest {
    pub manifest: Value,
    /// base64 bytes.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bundle_sha384: Option<String>,
    pub signature: WireSignature,
}

/// `POST /publish` answer.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct Published {
    pub scope: String,
    pub name: String,
    pub version: String,
    pub bundle_sri: String,
    pub bundle_url: String,
    pub published_at: String,
}

/// `GET /pkg/{scope}/{name}/{version}`.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct PackageVersion {
    pub manifest: Value,
    pub bundle_url: String,
    pub bundle_sri: String,
    pub signature: WireSignature,
    pub author_public_key: Option<String>,
    #[serde(default)]
    pub published_at: String,
}

/// `GET /pkg/{scope}/{name}`: the version listing.
#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
pub struct VersionListing {
    pub scope: String,
    pub name: String,
    pub versions: Vec<ListedVersion>,
    /// More versions are stored than listed (the registry lists the highest 1000); absent from
    /// registries of earlier releases.
    #[serde(default)]
    pub truncated: bool,
}

#[derive(Debug, Clone, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase")]
pub struct ListedVersion {
    pub version: String,
    #[serde(default)]
    pub published_at: String,
    #[serde(default)]
    pub yanked: bool,
}

/// `GET /search` answer.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct SearchResults {
    pub results: Vec<SearchHit>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct SearchHit {
    pub scope: String,
    pub name: String,
    pub latest_version: String,
    pub kind: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub tags: Vec<String>,
    #[serde(default)]
    pub author: String,
}

/// `GET /search` filters; empty ones are left out of the query.
#[derive(Debug, Clone, Default)]
pub struct SearchQuery {
    pub q: Option<String>,
    pub kind: Option<String>,
    pub hook: Option<String>,
    pub tag: Option<String>,
    pub author: Option<String>,
}

/// `POST /conformance/check` answer.
#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ConformanceReport {
    pub ok: bool,
    #[serde(default)]
    pub failures: Vec<ConformanceFailure>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct ConformanceFailure {
    pub rule: String,
    #[serde(default)]
    pub path: String,
    #[serde(default)]
    pub message: String,
}

/// The manifest fields the client acts on.
#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ManifestView {
    pub kind: String,
    pub scope: String,
    pub name: String,
    pub version: String,
    pub signature: ManifestSignature,
    #[serde(default)]
    pub gadget: Option<GadgetSection>,
    #[serde(default)]
    pub blueprint: Option<BlueprintSection>,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct ManifestSignature {
    pub algorithm: String,
    pub public_key_id: Option<String>,
    pub bundle_sha384: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
pub struct GadgetSection {
    #[serde(default)]
    pub exports: Vec<GadgetExport>,
}

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct GadgetExport {
    pub hook: String,
    #[serde(default)]
    pub description: String,
    #[serde(default)]
    pub usage: String,
    #[serde(default)]
    pub example: String,
}

#[derive(Debug, Clone, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct BlueprintSection {
    #[serde(default)]
    pub contract: Option<Value>,
    #[serde(default = "default_entry_point")]
    pub entry_point: String,
}

fn default_entry_point() -> String {
    "index.tsx".to_owned()
}
