//! `svc registry serve|token mint|yank`: the artifact registry server and its host-side tooling
//! (docs/registry.md). Settings: `[registry]` in the configuration, `SVC_REGISTRY__*`, flags.

use std::path::PathBuf;

use clap::Subcommand;

use crate::bundle_inspection::IsolatedModuleInspector;
use crate::registry_server::{RegistryApplication, connect, registry_service};
use crate::settings::{RegistrySettings, Settings};

#[derive(Debug, Subcommand)]
pub enum RegistryCommand {
    /// Start the artifact registry server.
    Serve(RegistryServeArgs),
    /// Publisher tokens (credentials for publish, author keys and private reads).
    Token {
        #[command(subcommand)]
        command: TokenCommand,
    },
    /// Yank a version (reads answer 410 with the manifest); runs against the registry's database.
    Yank(YankArgs),
    /// The registry server's own: parses a gadget bundle (stdin) in a process of its own and
    /// writes its exports and imports as JSON (`bundle_inspection`).
    #[command(hide = true)]
    InspectBundle,
}

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Mint a token for a publisher; prints the plaintext once, as the last line of stdout.
    Mint(MintArgs),
}

/// Which registry: the same settings as `svc registry serve`.
#[derive(Debug, Clone, clap::Args)]
pub struct RegistryStoreArgs {
    /// A TOML file layered over config/default.toml (its `[registry]` section).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The registry's data directory (its SQLite database and bundles).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// sqlite://..., postgres://... or mysql://... (MariaDB); default SQLite in the data directory.
    #[arg(long)]
    database_url: Option<String>,
}

impl RegistryStoreArgs {
    fn settings(&self) -> Result<RegistrySettings, String> {
        self.load().map(|s| s.registry)
    }

    /// The whole configuration, its `[registry]` section with these flags applied.
    fn load(&self) -> Result<Settings, String> {
        let mut settings = Settings::load(self.config.as_deref()).map_err(|e| e.to_string())?;
        let s = &mut settings.registry;
        if let Some(d) = &self.data_dir {
            s.data_dir = d.clone();
        }
        if let Some(u) = &self.database_url {
            s.database_url = u.clone();
        }
        Ok(settings)
    }
}

#[derive(Debug, clap::Args)]
pub struct RegistryServeArgs {
    /// Address to listen on (default 127.0.0.1).
    #[arg(long)]
    host: Option<String>,
    /// Port to listen on (default 6782; 0 picks a free one, printed at start).
    #[arg(long)]
    port: Option<u16>,
    /// Origin written into `bundleUrl` (default http://<host>:<port>).
    #[arg(long)]
    public_base_url: Option<String>,
    /// `text` or `json` (default: `server.log_format` of the configuration).
    #[arg(long, value_parser = ["text", "json"])]
    log_format: Option<String>,
    #[command(flatten)]
    store: RegistryStoreArgs,
}

#[derive(Debug, clap::Args)]
pub struct MintArgs {
    /// The publisher the token acts for; it owns the scope `@<publisher>`.
    #[arg(long)]
    publisher: String,
    /// May yank, and publish into any scope.
    #[arg(long)]
    admin: bool,
    #[command(flatten)]
    store: RegistryStoreArgs,
}

#[derive(Debug, clap::Args)]
pub struct YankArgs {
    /// `@scope/name@version`, e.g. `@acme/chart@1.2.3`.
    artifact: String,
    /// Why; shown to everyone who reads or installs the version.
    #[arg(long)]
    reason: String,
    #[command(flatten)]
    store: RegistryStoreArgs,
}

pub fn run(command: RegistryCommand) -> Result<(), String> {
    let runtime = || tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"));
    match command {
        RegistryCommand::Serve(args) => {
            let runtime = runtime()?;
            let loaded = args.store.load()?;
            let _log = crate::telemetry::init(match args.log_format.as_deref() {
                Some("json") => crate::settings::LogFormat::Json,
                Some(_) => crate::settings::LogFormat::Text,
                None => loaded.server.log_format,
            });
            let served = runtime.block_on(serve(args, loaded));
            runtime.shutdown_timeout(std::time::Duration::from_secs(1));
            served
        }
        RegistryCommand::Token {
            command: TokenCommand::Mint(args),
        } => runtime()?.block_on(mint(args)),
        RegistryCommand::Yank(args) => runtime()?.block_on(yank(args)),
        RegistryCommand::InspectBundle => crate::bundle_inspection::inspect_bundle_command(),
    }
}

async fn serve(args: RegistryServeArgs, loaded: Settings) -> Result<(), String> {
    let mut settings = loaded.registry;
    if let Some(h) = args.host {
        settings.host = h;
    }
    if let Some(p) = args.port {
        settings.port = p;
    }
    if let Some(u) = args.public_base_url {
        settings.public_base_url = u;
    }
    let app = RegistryApplication::build(
        &settings,
        &loaded.connections,
        IsolatedModuleInspector::of_this_program()?,
    )
    .await?;
    println!("svc registry listening on http://{}", app.local_addr());
    println!("  bundle URLs:   {}/bundles/sha384/<hex>", app.base_url());
    println!("  data:          {}", settings.data_dir.display());
    app.run_until(super::shutdown_signal())
        .await
        .map_err(|e| format!("server error: {e}"))
}

async fn mint(args: MintArgs) -> Result<(), String> {
    let settings = args.store.settings()?;
    let db = connect(&settings).await?;
    let minted = registry_service(&settings, &db, IsolatedModuleInspector::of_this_program()?)?
        .mint_token(&args.publisher, args.admin)
        .await
        .map_err(|e| format!("cannot mint the token: {e}"));
    let _ = db.close().await;
    let token = minted?;
    let role = if args.admin { "admin token" } else { "token" };
    println!(
        "minted a {role} for publisher `{}` (scope @{}); store it now, it is shown only once:",
        args.publisher, args.publisher
    );
    println!("{token}");
    Ok(())
}

/// `@scope/name@version`: the version follows the last `@`, the scope keeps its leading one.
fn parse_artifact(raw: &str) -> Result<(String, String, String), String> {
    let bad = || format!("`{raw}` is not `@scope/name@version`");
    let (package, version) = raw.rsplit_once('@').filter(|(p, _)| !p.is_empty()).ok_or_else(bad)?;
    let (scope, name) = package.split_once('/').ok_or_else(bad)?;
    Ok((scope.to_owned(), name.to_owned(), version.to_owned()))
}

async fn yank(args: YankArgs) -> Result<(), String> {
    let (scope, name, version) = parse_artifact(&args.artifact)?;
    let settings = args.store.settings()?;
    let db = connect(&settings).await?;
    let yanked = registry_service(&settings, &db, IsolatedModuleInspector::of_this_program()?)?
        .yank(&scope, &name, &version, &args.reason)
        .await
        .map_err(|e| format!("cannot yank {}: {e}", args.artifact));
    let _ = db.close().await;
    let yanked = yanked?;
    if yanked.already_yanked {
        println!(
            "{} was already yanked: {}",
            yanked.version.identity,
            yanked.version.yank_reason.unwrap_or_default()
        );
    } else {
        println!("yanked {}: {}", yanked.version.identity, args.reason.trim());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::parse_artifact;

    #[test]
    fn artifacts_are_scope_name_at_version() {
        let parts = |s: &str, n: &str, v: &str| Ok((s.to_owned(), n.to_owned(), v.to_owned()));
        assert_eq!(parse_artifact("@acme/chart@1.2.3"), parts("@acme", "chart", "1.2.3"));
        assert_eq!(
            parse_artifact("@acme/chart@1.0.0-rc.1+b.2"),
            parts("@acme", "chart", "1.0.0-rc.1+b.2")
        );
        assert!(parse_artifact("@acme/chart").is_err());
        assert!(parse_artifact("chart@1.0.0").is_err());
    }
}
