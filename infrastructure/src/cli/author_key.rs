//! `svc author-key generate|register`: the Ed25519 key that signs private artifacts.

use std::path::{Path, PathBuf};

use clap::Subcommand;
use svc_attest::ed25519::{self, KeyFile};

use super::registry::{RegistryArgs, connect};
use crate::artifacts::credentials::CredentialStore;
use crate::artifacts::registry_url::Resolution;
use crate::private_files::{create_private_dir, write_private};
use crate::registry_client::escaped_text;

#[derive(Debug, Subcommand)]
pub enum AuthorKeyCommand {
    /// Write a new private key file (0600); prints the public key and its id.
    Generate {
        /// Where to write it (default: <config dir>/svc/author-key.json).
        #[arg(long)]
        out: Option<PathBuf>,
        /// Replace an existing key file (the old key is lost; versions it signed stay valid).
        #[arg(long)]
        force: bool,
    },
    /// Register the key's public half with the registry (POST /author-keys).
    Register {
        /// The private key file (default: <config dir>/svc/author-key.json).
        #[arg(long)]
        key: Option<PathBuf>,
        #[command(flatten)]
        registry: RegistryArgs,
    },
}

pub fn run(command: AuthorKeyCommand) -> Result<(), String> {
    match command {
        AuthorKeyCommand::Generate { out, force } => generate(&key_path(out)?, force),
        AuthorKeyCommand::Register { key, registry } => register(&key_path(key)?, &registry),
    }
}

/// The default key file sits beside the credentials file.
fn key_path(explicit: Option<PathBuf>) -> Result<PathBuf, String> {
    if let Some(path) = explicit {
        return Ok(path);
    }
    let store = CredentialStore::for_user().map_err(|e| e.to_string())?;
    Ok(store.path().with_file_name("author-key.json"))
}

fn generate(path: &Path, force: bool) -> Result<(), String> {
    if path.exists() && !force {
        return Err(format!(
            "{} exists; pass --force to replace it (or --out for another file)",
            path.display()
        ));
    }
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty() && !d.exists()) {
        create_private_dir(dir).map_err(|e| format!("cannot create {}: {e}", dir.display()))?;
    }
    let file = KeyFile::from_signing_key(&ed25519::generate());
    let json = serde_json::to_vec_pretty(&file).expect("a key file serializes");
    write_private(path, &json).map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    println!("wrote the private key to {} (keep it secret)", path.display());
    println!("public key id: {}", file.public_key_id);
    println!("public key: {}", file.public_key);
    Ok(())
}

/// Reads and checks a private key file.
pub fn load_key(path: &Path) -> Result<KeyFile, String> {
    let text = super::verify::read_text(path)?;
    let file: KeyFile = serde_json::from_str(&text).map_err(|e| format!("{}: not a key file: {e}", path.display()))?;
    file.signing_key().map_err(|e| format!("{}: {e}", path.display()))?;
    Ok(file)
}

fn register(path: &Path, args: &RegistryArgs) -> Result<(), String> {
    let file = load_key(path)?;
    let client = connect(args, Resolution::Publish, true)?;
    super::registry::block_on(async {
        let key = client
            .register_author_key(&file.public_key)
            .await
            .map_err(|e| e.to_string())?;
        println!(
            "registered key {} for publisher {} at {}",
            escaped_text(&key.public_key_id),
            escaped_text(&key.publisher),
            client.base_url()
        );
        Ok(())
    })
}
