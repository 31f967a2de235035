//! `svc verify FILE --bundle BUNDLE`: verifies any file against a Sigstore bundle offline, with the
//! code path install uses; exit 0 when it verifies, 1 with the reason when not (as
//! `cosign verify-blob`).

use std::path::{Path, PathBuf};

use svc_attest::sigstore::{self, IdentityPin, TrustedRoot};

/// The trust options shared by `verify` and `install`.
#[derive(Debug, Clone, clap::Args)]
pub struct SigstoreTrustArgs {
    /// A Sigstore trusted_root.json (default: the public-good production root).
    #[arg(long)]
    pub trusted_root: Option<PathBuf>,
    /// Require this certificate identity (email or URI); needs --certificate-oidc-issuer.
    #[arg(long, requires = "certificate_oidc_issuer")]
    pub certificate_identity: Option<String>,
    /// Require this OIDC issuer (e.g. https://github.com/login/oauth); needs --certificate-identity.
    #[arg(long, requires = "certificate_identity")]
    pub certificate_oidc_issuer: Option<String>,
}

impl SigstoreTrustArgs {
    pub fn trusted_root(&self) -> Result<TrustedRoot, String> {
        match &self.trusted_root {
            None => Ok(TrustedRoot::production()),
            Some(path) => {
                let json = read_text(path)?;
                TrustedRoot::from_json(&json).map_err(|e| format!("{}: {e}", path.display()))
            }
        }
    }

    pub fn identity(&self) -> Option<IdentityPin> {
        match (&self.certificate_identity, &self.certificate_oidc_issuer) {
            (Some(identity), Some(issuer)) => Some(IdentityPin {
                identity: identity.clone(),
                issuer: issuer.clone(),
            }),
            _ => None,
        }
    }
}

#[derive(Debug, clap::Args)]
pub struct VerifyArgs {
    /// The file that was signed.
    file: PathBuf,
    /// Its Sigstore bundle (v0.1, v0.2 or v0.3 JSON).
    #[arg(long)]
    bundle: PathBuf,
    #[command(flatten)]
    trust: SigstoreTrustArgs,
}

pub fn run(args: VerifyArgs) -> Result<(), String> {
    let payload = std::fs::read(&args.file).map_err(|e| format!("cannot read {}: {e}", args.file.display()))?;
    let bundle = read_text(&args.bundle)?;
    let root = args.trust.trusted_root()?;
    sigstore::verify(&payload, &bundle, &root, args.trust.identity().as_ref())
        .map_err(|e| format!("{}: verification failed: {e}", args.file.display()))?;
    println!("Verified OK: {}", args.file.display());
    Ok(())
}

pub fn read_text(path: &Path) -> Result<String, String> {
    std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))
}
