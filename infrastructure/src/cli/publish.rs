//! `svc publish`: completes the manifest with its signature metadata, signs the payload (Ed25519
//! author key, or a Sigstore bundle made where the OIDC identity lives) and uploads it.

use std::path::PathBuf;

use serde_json::Value;

use super::registry::{RegistryArgs, block_on, connect};
use crate::artifacts::publish::{Signer, keyless_payload, request};
use crate::artifacts::registry_url::Resolution;
use crate::registry_client::escaped_text;

/// The artifact a command reads: its manifest and its bundle.
#[derive(Debug, clap::Args)]
pub struct ArtifactArgs {
    /// The artifact manifest (JSON: kind, scope, name, version, visibility, description, tags,
    /// gadget or blueprint; docs/registry.md).
    #[arg(long)]
    pub manifest: PathBuf,
    /// The bundle: a gadget's compiled ES module, a blueprint's TSX source.
    #[arg(long)]
    pub bundle: PathBuf,
    #[command(flatten)]
    pub registry: RegistryArgs,
}

impl ArtifactArgs {
    pub fn read(&self) -> Result<(Value, Vec<u8>), String> {
        let text = super::verify::read_text(&self.manifest)?;
        let manifest: Value =
            serde_json::from_str(&text).map_err(|e| format!("{} is not JSON: {e}", self.manifest.display()))?;
        let bundle = std::fs::read(&self.bundle).map_err(|e| format!("cannot read {}: {e}", self.bundle.display()))?;
        Ok((manifest, bundle))
    }
}

#[derive(Debug, clap::Args)]
pub struct PublishArgs {
    #[command(flatten)]
    artifact: ArtifactArgs,
    /// The Ed25519 private key file (default: <config dir>/svc/author-key.json).
    #[arg(long, conflicts_with = "sigstore_bundle")]
    key: Option<PathBuf>,
    /// Sign keylessly: a Sigstore bundle over the payload (`--print-payload` writes it; sign it
    /// with `cosign sign-blob --bundle` where the OIDC identity lives).
    #[arg(long)]
    sigstore_bundle: Option<PathBuf>,
    /// Write the exact bytes a keyless signature must cover to this file and exit (sign them
    /// with `cosign sign-blob --bundle`, then publish with `--sigstore-bundle`). Needs no key.
    #[arg(long, conflicts_with_all = ["key", "sigstore_bundle"])]
    print_payload: Option<PathBuf>,
    /// Publish even when the manifest's git work tree has uncommitted changes.
    #[arg(long)]
    allow_dirty: bool,
}

pub fn run(args: PublishArgs) -> Result<(), String> {
    let (manifest, bundle) = args.artifact.read()?;
    refuse_dirty(&args)?;
    if let Some(out) = &args.print_payload {
        let payload = keyless_payload(&manifest, &bundle).map_err(|e| e.to_string())?;
        std::fs::write(out, payload).map_err(|e| format!("cannot write {}: {e}", out.display()))?;
        println!("wrote the payload to sign to {}", out.display());
        return Ok(());
    }
    let sigstore_bundle = match &args.sigstore_bundle {
        Some(path) => Some(
            serde_json::from_str::<Value>(&super::verify::read_text(path)?)
                .map_err(|e| format!("{} is not JSON: {e}", path.display()))?,
        ),
        None => None,
    };
    let key = match &sigstore_bundle {
        Some(_) => None,
        None => {
            let path = match &args.key {
                Some(p) => p.clone(),
                None => default_key_path()?,
            };
            let file = super::author_key::load_key(&path)?;
            Some(file.signing_key().map_err(|e| e.to_string())?)
        }
    };
    let signer = match (&key, sigstore_bundle) {
        (Some(key), _) => Signer::Ed25519(key),
        (None, Some(bundle)) => Signer::Sigstore(bundle),
        (None, None) => unreachable!("one of the two is set above"),
    };
    let body = request(&manifest, &bundle, &signer).map_err(|e| e.to_string())?;
    let client = connect(&args.artifact.registry, Resolution::Publish, true)?;
    let published = block_on(async {
        client
            .publish(&body)
            .await
            .map_err(|e| format!("publish refused: {}", escaped_text(&e.to_string())))
    })?;
    // Every field is the registry's own text: escaped, as everywhere server text is shown.
    println!(
        "published {}/{}@{} ({})",
        escaped_text(&published.scope),
        escaped_text(&published.name),
        escaped_text(&published.version),
        escaped_text(&published.bundle_sri)
    );
    println!("{}", escaped_text(&published.bundle_url));
    Ok(())
}

fn refuse_dirty(args: &PublishArgs) -> Result<(), String> {
    if args.allow_dirty || args.print_payload.is_some() {
        return Ok(());
    }
    let dir = match args.artifact.manifest.parent() {
        Some(p) if !p.as_os_str().is_empty() => p.to_owned(),
        _ => PathBuf::from("."),
    };
    let changes = crate::artifacts::dirty::uncommitted_changes(&dir);
    if changes.is_empty() {
        return Ok(());
    }
    let shown: Vec<&str> = changes.iter().take(5).map(String::as_str).collect();
    Err(format!(
        "refusing to publish a dirty version: {} uncommitted change(s) ({}); commit them or pass --allow-dirty",
        changes.len(),
        shown.join(", ")
    ))
}

fn default_key_path() -> Result<PathBuf, String> {
    let store = crate::artifacts::credentials::CredentialStore::for_user().map_err(|e| e.to_string())?;
    Ok(store.path().with_file_name("author-key.json"))
}
