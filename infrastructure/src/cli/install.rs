//! `svc install scope/name@version`: fetches a version and its bundle, verifies both legs, then
//! writes it into the project; nothing is written unless everything verified.

use super::registry::{RegistryArgs, block_on, connect};
use super::verify::SigstoreTrustArgs;
use crate::artifacts::install::{Installed, write};
use crate::artifacts::registry_url::Resolution;
use crate::artifacts::verify::{Fetched, Requested, Trust, TrustPolicy, verify};
use crate::registry_client::{RegistryError, escaped_text};

#[derive(Debug, clap::Args)]
pub struct InstallArgs {
    /// The artifact: @scope/name@version.
    spec: Requested,
    /// Refuse (exit 1) a private artifact whose version has no pinned author key.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    trust: SigstoreTrustArgs,
    #[command(flatten)]
    registry: RegistryArgs,
}

pub fn run(args: InstallArgs) -> Result<(), String> {
    let policy = TrustPolicy {
        strict: args.strict,
        trusted_root: args.trust.trusted_root()?,
        identity: args.trust.identity(),
    };
    let client = connect(&args.registry, Resolution::Install, false)?;
    let spec = &args.spec;
    let fetched = block_on(async {
        let version = client
            .package_version(&spec.scope, &spec.name, &spec.version)
            .await
            .map_err(|e| fetch_error(spec, &e))?;
        let bundle = client
            .fetch_bundle(&version.bundle_url)
            .await
            .map_err(|e| escaped_text(&e.to_string()))?;
        Ok(Fetched { version, bundle })
    })?;
    // A refusal quotes what the registry served (a scope, a visibility, a hash): escaped.
    let trust = verify(&fetched, spec, &policy)
        .map_err(|e| format!("{spec} did not verify: {}", escaped_text(&e.to_string())))?;
    if trust == Trust::Unpinned {
        eprintln!(
            "svc: warning: the registry pinned no author key for {spec}; its signature was not checked (--strict refuses this)"
        );
    }
    let written = write(&args.registry.project, &fetched)
        .map_err(|e| format!("cannot install {spec}: {}", escaped_text(&e.to_string())))?;
    match written {
        Installed::Gadget { package } => println!(
            "installed gadget {}@{} into svc.json",
            escaped_text(&package),
            spec.version
        ),
        Installed::Blueprint { dir } => println!("installed blueprint {spec} into {}", dir.display()),
    }
    Ok(())
}

/// A yanked version names itself and the reason; the rest say what the registry said. The
/// registry's words are shown escaped: a reason cannot drive the terminal.
fn fetch_error(spec: &Requested, error: &RegistryError) -> String {
    let yanked = |reason: Option<&str>| {
        let reason = reason.map_or_else(|| "no reason given".to_owned(), escaped_text);
        format!("{spec} was yanked by the registry ({reason}); install another version")
    };
    match error {
        // Document 3: a yanked version answers HTTP 410; the status says so, whatever the body.
        RegistryError::Api { status: 410, body } => yanked(body.reason.as_deref()),
        RegistryError::Unexpected { status: 410, .. } => yanked(None),
        RegistryError::Api { body, .. } if body.error == "not_found" => {
            format!("{spec} does not exist in the registry")
        }
        other => escaped_text(&other.to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::registry_client::wire::ErrorBody;

    fn api(status: u16, error: &str, reason: Option<&str>) -> RegistryError {
        RegistryError::Api {
            status,
            body: Box::new(ErrorBody {
                error: error.into(),
                message: "m".into(),
                path: None,
                rule: None,
                reason: reason.map(str::to_owned),
                manifest: None,
            }),
        }
    }

    /// Document 3: a yanked version answers HTTP 410; the status says so, whatever the body's code.
    #[test]
    fn a_410_is_a_yank_whatever_its_body_says() {
        let spec: Requested = "@acme/old@1.0.0".parse().unwrap();
        let yanked =
            |reason: &str| format!("@acme/old@1.0.0 was yanked by the registry ({reason}); install another version");
        assert_eq!(
            fetch_error(&spec, &api(410, "version_yanked", Some("leaks tokens"))),
            yanked("leaks tokens")
        );
        assert_eq!(fetch_error(&spec, &api(410, "gone", Some("broken"))), yanked("broken"));
        let unparsed = RegistryError::Unexpected {
            status: 410,
            snippet: "<html>Gone</html>".into(),
        };
        assert_eq!(fetch_error(&spec, &unparsed), yanked("no reason given"));
        let not_a_yank = api(400, "version_yanked", None);
        assert_eq!(fetch_error(&spec, &not_a_yank), not_a_yank.to_string());
    }
}
