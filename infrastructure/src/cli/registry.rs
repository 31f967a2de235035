//! What every registry command shares (which registry, which token, which project), and the small
//! commands: `svc login`, `svc search`, `svc conformance check`.

use std::future::Future;
use std::io::IsTerminal as _;
use std::path::PathBuf;

use clap::Subcommand;

use crate::artifacts::credentials::{CredentialStore, REGISTRY_TOKEN_ENV, StoredToken};
use crate::artifacts::project::Project;
use crate::artifacts::registry_url::{Candidates, REGISTRY_URL_ENV, Resolution, named_by_user, resolve};
use crate::artifacts::token_choice::{ExplicitToken, resolve_token, withheld_reason};
use crate::registry_client::wire::SearchHit;
use crate::registry_client::wire::SearchQuery;
use crate::registry_client::{RegistryClient, escaped_text};

/// Which registry and credential a command uses.
#[derive(Debug, Clone, clap::Args)]
pub struct RegistryArgs {
    /// The registry's base URL (else SVC_REGISTRY_URL and svc.json#registry, in the order
    /// docs/registry.md gives per command).
    #[arg(long)]
    pub registry: Option<String>,
    /// A bearer token (else SVC_REGISTRY_TOKEN, else the one `svc login` stored). Like
    /// SVC_REGISTRY_TOKEN, sent only to a registry named by --registry or SVC_REGISTRY_URL.
    #[arg(long)]
    pub token: Option<String>,
    /// The project directory holding svc.json (default: the current directory).
    #[arg(long, default_value = ".")]
    pub project: PathBuf,
}

/// The registry a command talks to.
pub struct ChosenRegistry {
    pub url: String,
    /// Named by `--registry` or SVC_REGISTRY_URL, not only by svc.json or the default: an
    /// explicit token may go there.
    pub named_by_user: bool,
}

impl RegistryArgs {
    pub fn registry(&self, resolution: Resolution) -> Result<ChosenRegistry, String> {
        let env = env_var(REGISTRY_URL_ENV);
        // svc.json is read only when its answer can matter, so a broken one does not stop
        // `svc login --registry URL`.
        let given = |v: Option<&str>| v.is_some_and(|v| !v.trim().is_empty());
        let decided = given(self.registry.as_deref()) || (resolution == Resolution::Publish && given(env.as_deref()));
        let manifest = if decided {
            None
        } else {
            let project = Project::open(&self.project).map_err(|e| e.to_string())?;
            project.registry().map(str::to_owned)
        };
        let candidates = Candidates {
            flag: self.registry.as_deref(),
            env: env.as_deref(),
            manifest: manifest.as_deref(),
        };
        let url = resolve(resolution, &candidates).map_err(|e| e.to_string())?;
        Ok(ChosenRegistry {
            named_by_user: named_by_user(&url, &candidates),
            url,
        })
    }

    fn explicit_token<'a>(&'a self, env: Option<&'a str>) -> ExplicitToken<'a> {
        ExplicitToken {
            flag: self.token.as_deref(),
            env,
        }
    }
}

fn env_var(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.is_empty())
}

/// A client for the resolved registry; `needs_credential` refuses to go on without a token.
pub fn connect(args: &RegistryArgs, resolution: Resolution, needs_credential: bool) -> Result<RegistryClient, String> {
    let ChosenRegistry { url, named_by_user } = args.registry(resolution)?;
    let store = CredentialStore::for_user().map_err(|e| e.to_string())?;
    let env = env_var(REGISTRY_TOKEN_ENV);
    let chosen =
        resolve_token(args.explicit_token(env.as_deref()), &store, &url, named_by_user).map_err(|e| e.to_string())?;
    if let Some(source) = chosen.withheld
        && chosen.token.is_none()
    {
        // Said out loud: a private read would otherwise fail with a 401 nobody can explain.
        if needs_credential {
            return Err(format!("no credential for {url}: {}", withheld_reason(source, &url)));
        }
        eprintln!("svc: warning: {}", withheld_reason(source, &url));
    }
    if needs_credential && chosen.token.is_none() {
        return Err(format!(
            "no credential for {url}: run `svc login --registry {url}`, or pass --token or set {REGISTRY_TOKEN_ENV}"
        ));
    }
    RegistryClient::new(&url, chosen.token).map_err(|e| e.to_string())
}

/// Runs a registry call on a small runtime of its own.
pub fn block_on<T>(future: impl Future<Output = Result<T, String>>) -> Result<T, String> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .map_err(|e| format!("cannot start the runtime: {e}"))?
        .block_on(future)
}

#[derive(Debug, clap::Args)]
pub struct LoginArgs {
    #[command(flatten)]
    registry: RegistryArgs,
}

/// `svc login`: checks the token with GET /whoami and stores it for this registry.
pub fn login(args: LoginArgs) -> Result<(), String> {
    let ChosenRegistry { url, named_by_user } = args.registry.registry(Resolution::Publish)?;
    let env = env_var(REGISTRY_TOKEN_ENV);
    let token = match args.registry.explicit_token(env.as_deref()).first() {
        Some((_, token)) if named_by_user => token,
        // The same rule as every command: a registry svc.json chose gets no explicit token.
        Some((source, _)) => return Err(withheld_reason(source, &url)),
        None => prompt_token(&url)?,
    };
    let client = RegistryClient::new(&url, Some(token.clone())).map_err(|e| e.to_string())?;
    let who = block_on(async {
        client
            .whoami()
            .await
            .map_err(|e| format!("the token was not accepted: {e}"))
    })?;
    let store = CredentialStore::for_user().map_err(|e| e.to_string())?;
    store
        .put(
            &url,
            StoredToken {
                token,
                publisher: who.publisher.clone(),
            },
        )
        .map_err(|e| e.to_string())?;
    let role = if who.admin { " (admin)" } else { "" };
    println!(
        "logged in to {url} as {}{role}; token stored in {}",
        escaped_text(&who.publisher),
        store.path().display()
    );
    Ok(())
}

fn prompt_token(url: &str) -> Result<String, String> {
    if !std::io::stdin().is_terminal() {
        return Err(format!(
            "no token: pass --token or set {REGISTRY_TOKEN_ENV} (stdin is not a terminal)"
        ));
    }
    eprint!("token for {url}: ");
    let mut line = String::new();
    std::io::stdin()
        .read_line(&mut line)
        .map_err(|e| format!("cannot read the token: {e}"))?;
    let token = line.trim().to_owned();
    if token.is_empty() {
        return Err("no token entered".into());
    }
    Ok(token)
}

#[derive(Debug, clap::Args)]
pub struct SearchArgs {
    /// Free text matched against names and descriptions.
    query: Option<String>,
    /// gadget or blueprint.
    #[arg(long, value_parser = ["gadget", "blueprint"])]
    kind: Option<String>,
    /// A gadget hook name (useChart).
    #[arg(long)]
    hook: Option<String>,
    #[arg(long)]
    tag: Option<String>,
    /// A scope (acme or @acme): its packages, whoever published them.
    #[arg(long)]
    author: Option<String>,
    #[command(flatten)]
    registry: RegistryArgs,
}

/// `svc search`: one line per artifact.
pub fn search(args: SearchArgs) -> Result<(), String> {
    let client = connect(&args.registry, Resolution::Publish, false)?;
    let query = SearchQuery {
        q: args.query,
        kind: args.kind,
        hook: args.hook,
        tag: args.tag,
        author: args.author,
    };
    let found = block_on(async { client.search(&query).await.map_err(|e| e.to_string()) })?;
    if found.results.is_empty() {
        println!("no artifacts found");
    }
    for hit in found.results {
        println!("{}", search_line(&hit));
    }
    Ok(())
}

#[derive(Debug, Subcommand)]
pub enum ConformanceCommand {
    /// Dry-run the registry's conformance gate on a manifest and its bundle.
    Check(super::publish::ArtifactArgs),
}

/// `svc conformance check`: exit 0 when the gate passes, 1 listing each failed rule.
pub fn conformance(command: ConformanceCommand) -> Result<(), String> {
    let ConformanceCommand::Check(args) = command;
    let (manifest, bundle) = args.read()?;
    let client = connect(&args.registry, Resolution::Publish, true)?;
    let encoded = base64::Engine::encode(&base64::engine::general_purpose::STANDARD, &bundle);
    let report = block_on(async {
        client
            .conformance_check(&manifest, Some(&encoded))
            .await
            .map_err(|e| e.to_string())
    })?;
    if report.ok {
        println!("conformance check passed");
        return Ok(());
    }
    for failure in &report.failures {
        let (rule, path, message) = (
            escaped_text(&failure.rule),
            escaped_text(&failure.path),
            escaped_text(&failure.message),
        );
        eprintln!("{rule} at {path}: {message}");
    }
    Err(format!("conformance check failed ({} rule(s))", report.failures.len()))
}

/// One search hit as `svc search` prints it. Every field is the publisher's or the registry's
/// text: each is escaped (`escaped_text`), so a description holding an escape sequence shows as
/// text and cannot drive the terminal or forge another line.
fn search_line(hit: &SearchHit) -> String {
    let tags = if hit.tags.is_empty() {
        String::new()
    } else {
        format!(" [{}]", hit.tags.join(", "))
    };
    let line = [
        format!("{}/{}@{}", hit.scope, hit.name, hit.latest_version),
        hit.kind.clone(),
        format!("{}{tags}", hit.description),
        format!("by {}", hit.author),
    ];
    line.iter()
        .map(|field| escaped_text(field))
        .collect::<Vec<_>>()
        .join("\t")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_search_line_shows_a_publishers_control_characters_escaped() {
        let hit = SearchHit {
            scope: "@acme".into(),
            name: "chart".into(),
            latest_version: "1.0.0".into(),
            kind: "gadget".into(),
            description: "Charts\u{1b}]0;pwned\u{7}\u{1b}[2J\u{9b}31m\nfake line\tx".into(),
            tags: vec!["a\u{1b}b".into()],
            author: "ac\u{85}me".into(),
        };
        let line = search_line(&hit);
        assert!(!line.chars().any(|c| c.is_control() && c != '\t'), "{line:?}");
        assert_eq!(
            line,
            "@acme/chart@1.0.0\tgadget\tCharts\\x1b]0;pwned\\x07\\x1b[2J\\u{9b}31m\\nfake line\\tx [a\\x1bb]\tby ac\\u{85}me"
        );
    }
}
