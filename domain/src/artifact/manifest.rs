//! The artifact manifest: its published JSON Schema (`docs/schemas/registry-manifest.schema.json`,
//! served at `/schemas/manifest.json`) and the typed view the registry works with.

use std::sync::LazyLock;

use serde::Deserialize;
use serde_json::Value;

use super::digest::BundleDigest;
use super::identity::{ArtifactIdentity, SemanticVersion};
use super::{ArtifactError, ArtifactKind, SignatureAlgorithm, Visibility};

/// The manifest's JSON Schema, as served.
pub const MANIFEST_SCHEMA: &str = include_str!("../../../docs/schemas/registry-manifest.schema.json");

static VALIDATOR: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
    let schema: Value = serde_json::from_str(MANIFEST_SCHEMA).expect("the manifest schema is JSON");
    jsonschema::draft202012::options()
        .build(&schema)
        .expect("the manifest schema compiles")
});

/// One rule of the conformance gate that an artifact breaks, at a JSON pointer into the
/// publish (or check) request body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GateFailure {
    pub rule: &'static str,
    pub path: String,
    pub message: String,
}

impl GateFailure {
    pub fn new(rule: &'static str, path: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            rule,
            path: path.into(),
            message: message.into(),
        }
    }
}

/// Why a manifest is not acceptable before any bundle is looked at.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ManifestError {
    /// The version is not an exact semantic version (`invalid_version`).
    #[error(transparent)]
    Version(ArtifactError),
    /// The manifest breaks its schema (`invalid_manifest`); paths start at `/manifest`.
    #[error("the manifest does not match its schema: {}", .0.first().map_or("", |f| f.message.as_str()))]
    Schema(Vec<GateFailure>),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ManifestSignature {
    pub algorithm: SignatureAlgorithm,
    pub public_key_id: Option<String>,
    pub bundle_sha384: String,
}

#[derive(Debug, Clone, PartialEq)]
pub enum ManifestBody {
    Gadget {
        /// Declared hooks, in manifest order.
        hooks: Vec<String>,
    },
    Blueprint {
        contract: Value,
        entry_point: String,
        fixture_props: Option<Value>,
    },
}

/// A manifest that passed its schema, with the fields the registry reads.
#[derive(Debug, Clone, PartialEq)]
pub struct ArtifactManifest {
    pub identity: ArtifactIdentity,
    pub kind: ArtifactKind,
    pub visibility: Visibility,
    pub description: String,
    pub tags: Vec<String>,
    pub signature: ManifestSignature,
    pub author_public_key: Option<String>,
    pub body: ManifestBody,
    /// The manifest exactly as sent: what is stored, served and (for a blueprint) signed.
    pub raw: Value,
}

/// The serde shape behind the schema; only ever read after the schema passed.
#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct Wire {
    kind: ArtifactKind,
    scope: String,
    name: String,
    version: String,
    visibility: Visibility,
    #[serde(default)]
    description: String,
    #[serde(default)]
    tags: Vec<String>,
    signature: WireSignature,
    /// A gadget's `sha384-<base64>` (Document 3); the schema keeps it off blueprints.
    bundle_sri: Option<String>,
    author_public_key: Option<String>,
    gadget: Option<WireGadget>,
    blueprint: Option<WireBlueprint>,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireSignature {
    algorithm: SignatureAlgorithm,
    public_key_id: Option<String>,
    bundle_sha384: String,
}

#[derive(Deserialize)]
struct WireGadget {
    exports: Vec<WireExport>,
}

#[derive(Deserialize)]
struct WireExport {
    hook: String,
}

#[derive(Deserialize)]
#[serde(rename_all = "camelCase")]
struct WireBlueprint {
    contract: Value,
    entry_point: String,
    fixture_props: Option<Value>,
}

impl ArtifactManifest {
    /// The version first (its refusal has its own code and exact message), then the schema.
    pub fn parse(raw: &Value) -> Result<Self, ManifestError> {
        if let Some(version) = raw.get("version").and_then(Value::as_str) {
            SemanticVersion::parse(version).map_err(ManifestError::Version)?;
        }
        let failures: Vec<GateFailure> = VALIDATOR
            .iter_errors(raw)
            .map(|error| {
                let pointer = error.instance_path().to_string();
                GateFailure::new("manifest_schema", format!("/manifest{pointer}"), error.to_string())
            })
            .collect();
        if !failures.is_empty() {
            return Err(ManifestError::Schema(failures));
        }
        let wire: Wire = serde_json::from_value(raw.clone()).map_err(|error| {
            ManifestError::Schema(vec![GateFailure::new(
                "manifest_schema",
                "/manifest",
                error.to_string(),
            )])
        })?;
        // Both name the sha384 of the one bundle, and publish holds `signature.bundleSha384` to the
        // bytes; JSON Schema cannot compare two fields, so this is said here.
        if let Some(sri) = &wire.bundle_sri
            && *sri != wire.signature.bundle_sha384
        {
            return Err(ManifestError::Schema(vec![GateFailure::new(
                "manifest_schema",
                "/manifest/bundleSri",
                format!(
                    "`bundleSri` {sri} differs from `signature.bundleSha384` {}: both are the sha384 of the bundle",
                    wire.signature.bundle_sha384
                ),
            )]));
        }
        let identity = ArtifactIdentity::parse(&wire.scope, &wire.name, &wire.version).map_err(|error| {
            ManifestError::Schema(vec![GateFailure::new(
                "manifest_schema",
                "/manifest",
                error.to_string(),
            )])
        })?;
        let body = match (wire.kind, wire.gadget, wire.blueprint) {
            (ArtifactKind::Gadget, Some(gadget), _) => ManifestBody::Gadget {
                hooks: gadget.exports.into_iter().map(|e| e.hook).collect(),
            },
            (ArtifactKind::Blueprint, _, Some(blueprint)) => ManifestBody::Blueprint {
                contract: blueprint.contract,
                entry_point: blueprint.entry_point,
                fixture_props: blueprint.fixture_props,
            },
            _ => unreachable!("the schema requires the body of the manifest's kind"),
        };
        Ok(Self {
            identity,
            kind: wire.kind,
            visibility: wire.visibility,
            description: wire.description,
            tags: wire.tags,
            signature: ManifestSignature {
                algorithm: wire.signature.algorithm,
                public_key_id: wire.signature.public_key_id,
                bundle_sha384: wire.signature.bundle_sha384,
            },
            author_public_key: wire.author_public_key,
            body,
            raw: raw.clone(),
        })
    }

    /// The bytes an Ed25519 signature covers (Document 3): for a gadget the 48 raw bytes of
    /// sha384(bundle); for a blueprint the RFC 8785 canonical JSON of the manifest.
    pub fn signed_payload(&self, bundle: &BundleDigest) -> Vec<u8> {
        match self.kind {
            ArtifactKind::Gadget => bundle.bytes().to_vec(),
            ArtifactKind::Blueprint => serde_json_canonicalizer::to_vec(&self.raw).expect("JSON values canonicalize"),
        }
    }

    /// Declared hooks of a gadget; empty for a blueprint.
    pub fn hooks(&self) -> &[String] {
        match &self.body {
            ManifestBody::Gadget { hooks } => hooks,
            ManifestBody::Blueprint { .. } => &[],
        }
    }
}

/// The rule of the gate that compares a gadget bundle's named exports with its declared hooks:
/// every declared hook is exported, and nothing else is.
pub fn compare_exports(declared: &[String], exported: &[String]) -> Vec<GateFailure> {
    let mut failures: Vec<GateFailure> = declared
        .iter()
        .enumerate()
        .filter(|(_, hook)| !exported.contains(hook))
        .map(|(index, hook)| {
            GateFailure::new(
                "gadget_exports",
                format!("/manifest/gadget/exports/{index}/hook"),
                format!("the bundle does not export the declared hook `{hook}`"),
            )
        })
        .collect();
    failures.extend(
        exported
            .iter()
            .filter(|name| name.as_str() != "default" && !declared.contains(name))
            .map(|name| {
                GateFailure::new(
                    "gadget_exports",
                    "/bundle",
                    format!("the bundle exports `{name}`, which no declared hook lists"),
                )
            }),
    );
    failures
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    pub(crate) fn gadget() -> Value {
        json!({
            "kind": "gadget", "scope": "@acme", "name": "chart", "version": "1.2.3",
            "visibility": "private", "description": "Charts", "tags": ["chart"],
            "signature": {
                "algorithm": "ed25519", "publicKeyId": "abcdefghijklmnop",
                "bundleSha384": "sha384-OLBgp1GsljhM2TJ+sbHjaiH9txEUvgdDTAzHv2P24donTt6/529l+9Ua0vFImLlb"
            },
            "authorPublicKey": "A".repeat(43) + "=",
            "gadget": { "exports": [{ "hook": "useChart", "description": "d", "usage": "u", "example": "e" }] }
        })
    }

    fn failure_paths(manifest: &Value) -> Vec<String> {
        match ArtifactManifest::parse(manifest) {
            Err(ManifestError::Schema(failures)) => failures.into_iter().map(|f| f.path).collect(),
            other => panic!("expected schema failures, got {other:?}"),
        }
    }

    #[test]
    fn a_valid_gadget_manifest_parses() {
        let manifest = ArtifactManifest::parse(&gadget()).unwrap();
        assert_eq!(manifest.identity.to_string(), "@acme/chart@1.2.3");
        assert_eq!(manifest.hooks(), ["useChart".to_owned()]);
        assert_eq!(manifest.signature.algorithm, SignatureAlgorithm::Ed25519);
    }

    #[test]
    fn schema_failures_name_their_path() {
        let mut bad_tag = gadget();
        bad_tag["tags"] = json!(["Not Valid"]);
        assert_eq!(failure_paths(&bad_tag), ["/manifest/tags/0"]);
        let mut no_body = gadget();
        no_body.as_object_mut().unwrap().remove("gadget");
        assert_eq!(failure_paths(&no_body), ["/manifest"]);
        let mut unknown = gadget();
        unknown["extra"] = json!(1);
        assert_eq!(failure_paths(&unknown), ["/manifest"]);
        let mut bad_hook = gadget();
        bad_hook["gadget"]["exports"][0]["hook"] = json!("not a hook");
        assert_eq!(failure_paths(&bad_hook), ["/manifest/gadget/exports/0/hook"]);
    }

    #[test]
    fn a_gadget_may_state_its_bundle_sri_equal_to_the_signed_digest() {
        let mut stated = gadget();
        stated["bundleSri"] = stated["signature"]["bundleSha384"].clone();
        assert!(ArtifactManifest::parse(&stated).is_ok());

        let mut other = gadget();
        other["bundleSri"] = json!(format!("sha384-{}", "A".repeat(64)));
        let Err(ManifestError::Schema(failures)) = ArtifactManifest::parse(&other) else {
            panic!("a bundleSri that is not the signed digest is refused");
        };
        assert_eq!(failures[0].path, "/manifest/bundleSri");
        assert!(
            failures[0].message.contains("differs from `signature.bundleSha384`"),
            "{}",
            failures[0].message
        );

        let mut malformed = gadget();
        malformed["bundleSri"] = json!("sha256-abc");
        assert_eq!(failure_paths(&malformed), ["/manifest/bundleSri"]);
    }

    #[test]
    fn a_blueprint_states_no_bundle_sri() {
        let mut blueprint = gadget();
        let object = blueprint.as_object_mut().unwrap();
        object.remove("gadget");
        object.insert("kind".into(), json!("blueprint"));
        object.insert("blueprint".into(), json!({ "contract": {}, "entryPoint": "index.tsx" }));
        assert!(ArtifactManifest::parse(&blueprint).is_ok());
        blueprint["bundleSri"] = blueprint["signature"]["bundleSha384"].clone();
        assert_eq!(failure_paths(&blueprint), ["/manifest/bundleSri"]);
    }

    #[test]
    fn the_version_is_checked_first() {
        let mut manifest = gadget();
        manifest["version"] = json!("latest");
        manifest["extra"] = json!(1);
        assert!(matches!(
            ArtifactManifest::parse(&manifest),
            Err(ManifestError::Version(ArtifactError::InvalidVersion { .. }))
        ));
    }

    #[test]
    fn exports_must_match_the_declared_hooks() {
        let declared = ["useA".to_owned(), "useB".to_owned()];
        assert!(compare_exports(&declared, &["useB".into(), "useA".into(), "default".into()]).is_empty());
        let failures = compare_exports(&declared, &["useA".into(), "useC".into()]);
        let seen: Vec<(&str, &str)> = failures.iter().map(|f| (f.rule, f.path.as_str())).collect();
        assert_eq!(
            seen,
            [
                ("gadget_exports", "/manifest/gadget/exports/1/hook"),
                ("gadget_exports", "/bundle")
            ]
        );
    }
}
