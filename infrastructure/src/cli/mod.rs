//! The `svc` command line. This contract is fixed: other parts of the system depend on it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

mod apps;
mod author_key;
mod hosted;
mod install;
mod keys;
mod publish;
mod registry;
mod registry_admin;
mod users;
mod verify;

use crate::server::Application;
use crate::settings::Settings;
use crate::telemetry;
use keys::KeysCommand;
use registry_admin::RegistryCommand;

#[derive(Debug, Parser)]
#[command(name = "svc", version, about = "Generative-UI server for AI agents over MCP")]
pub struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Start the server.
    Serve(ServeArgs),
    /// Manage bearer keys in the keys file.
    Keys {
        #[command(subcommand)]
        command: KeysCommand,
    },
    /// Hosted accounts (email and password).
    Users {
        #[command(subcommand)]
        command: users::UsersCommand,
    },
    /// Hosted settings of apps.
    Apps {
        #[command(subcommand)]
        command: apps::AppsCommand,
    },
    /// Operator tooling for coupons.
    Coupons {
        #[command(subcommand)]
        command: CouponsCommand,
    },
    /// Operator tooling for credit wallets (hosted mode).
    Credits {
        #[command(subcommand)]
        command: hosted::CreditsCommand,
    },
    /// Operator tooling of hosted mode.
    Hosted {
        #[command(subcommand)]
        command: hosted::HostedCommand,
    },
    /// Write the deployment's cached blueprints to a pool file (import it with `serve --seed-pool`).
    ExportPool(ExportPoolArgs),
    /// Apply the database migrations and exit (`serve` also applies them at start-up).
    Migrate(DeploymentArgs),
    /// Verify a file against a Sigstore bundle offline (exit 0 verified, 1 not).
    Verify(verify::VerifyArgs),
    /// The Ed25519 key that signs private artifacts.
    AuthorKey {
        #[command(subcommand)]
        command: author_key::AuthorKeyCommand,
    },
    /// Check a registry token (GET /whoami) and store it for that registry.
    Login(registry::LoginArgs),
    /// Sign an artifact and upload it to the registry.
    Publish(publish::PublishArgs),
    /// Search the registry.
    Search(registry::SearchArgs),
    /// Install a gadget or blueprint from the registry into this project (verified first).
    Install(install::InstallArgs),
    /// The registry's conformance gate.
    Conformance {
        #[command(subcommand)]
        command: registry::ConformanceCommand,
    },
    /// The artifact registry server and its host-side tooling (docs/registry.md).
    Registry {
        #[command(subcommand)]
        command: RegistryCommand,
    },
}

/// Which deployment a command works on: the same settings as `serve` (file, `SVC_*`), narrowed.
#[derive(Debug, Clone, clap::Args)]
pub struct DeploymentArgs {
    /// A TOML file layered over config/default.toml.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The server's data directory (its SQLite database); default from the configuration.
    #[arg(long, conflicts_with = "database_url")]
    data_dir: Option<PathBuf>,
    /// sqlite://..., postgres://... or mysql://... (MariaDB); default from the configuration.
    #[arg(long)]
    database_url: Option<String>,
}

impl DeploymentArgs {
    fn settings(&self) -> Result<Settings, String> {
        let mut settings = Settings::load(self.config.as_deref()).map_err(|e| e.to_string())?;
        if let Some(d) = &self.data_dir {
            settings.server.data_dir = d.clone();
        }
        if let Some(u) = &self.database_url {
            settings.server.database_url = u.clone();
        }
        Ok(settings)
    }
}

#[derive(Debug, clap::Args)]
struct ExportPoolArgs {
    /// The pool file to write (JSON, format `svc-blueprint-pool` version 1; docs/blueprints.md).
    #[arg(long)]
    out: PathBuf,
    #[command(flatten)]
    deployment: DeploymentArgs,
}

#[derive(Debug, Subcommand)]
enum CouponsCommand {
    /// Issue a one-time coupon; prints its code (`cpn_` plus 8 characters) as the last line of stdout.
    Issue(IssueCouponArgs),
}

#[derive(Debug, clap::Args)]
struct IssueCouponArgs {
    /// Credit in cents, greater than zero.
    #[arg(long)]
    cents: i64,
    /// RFC 3339 time after which the coupon can no longer be redeemed (e.g. 2026-12-31T23:59:59Z).
    #[arg(long, value_parser = parse_time)]
    expires_at: Option<chrono::DateTime<chrono::Utc>>,
    #[command(flatten)]
    deployment: DeploymentArgs,
}

fn parse_time(raw: &str) -> Result<chrono::DateTime<chrono::Utc>, String> {
    chrono::DateTime::parse_from_rfc3339(raw)
        .map(|t| t.to_utc())
        .map_err(|e| format!("not an RFC 3339 time: {e}"))
}

#[derive(Debug, clap::Args)]
pub struct ServeArgs {
    /// A TOML file layered over config/default.toml.
    #[arg(long)]
    config: Option<PathBuf>,
    /// Address to listen on (default 127.0.0.1; 0.0.0.0 for every interface).
    #[arg(long)]
    host: Option<String>,
    /// Port to listen on (default 6781; 0 picks a free one, printed in the banner).
    #[arg(long)]
    port: Option<u16>,
    /// Where the SQLite database and the keys file live (default ./.svc-data).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// sqlite://..., postgres://... or mysql://... (MariaDB); default SQLite in the data directory.
    #[arg(long)]
    database_url: Option<String>,
    /// Accept any bearer as the `builder` identity. Development only.
    #[arg(long)]
    dev_allow_all: bool,
    /// Acknowledge that --dev-allow-all on a non-loopback --host lets anyone who reaches the
    /// port act as `builder` (refused without it).
    #[arg(long)]
    dev_allow_all_remote: bool,
    /// Public URL written into results, for servers behind a proxy or a tunnel.
    #[arg(long)]
    public_base_url: Option<String>,
    /// `text` or `json`.
    #[arg(long, value_parser = ["text", "json"])]
    log_format: Option<String>,
    /// Serve OAuth 2.1 for MCP hosts (discovery, registration, consent, token).
    #[arg(long)]
    oauth: bool,
    /// The OAuth issuer URL (default: the public base URL).
    #[arg(long)]
    issuer: Option<String>,
    /// The app manifest (default: ./svc.json when it exists).
    #[arg(long)]
    manifest: Option<PathBuf>,
    /// A pool file written by `svc export-pool`, imported at start-up (idempotent).
    #[arg(long)]
    seed_pool: Option<PathBuf>,
    /// Public-demo mode: at most 30 cold generations per 10 minutes per remote address (the
    /// next render is refused with `issuer_rate_limited`; `[public_demo]` in the config).
    #[arg(long)]
    public_demo: bool,
    /// Hosted mode: PostgreSQL required, OAuth on, provider keys and credits (`[hosted]`;
    /// docs/hosted.md).
    #[arg(long)]
    hosted: bool,
}

impl ServeArgs {
    fn settings(&self) -> Result<Settings, String> {
        let mut s = Settings::load(self.config.as_deref()).map_err(|e| e.to_string())?;
        if let Some(h) = &self.host {
            s.server.host = h.clone();
        }
        if let Some(p) = self.port {
            s.server.port = p;
        }
        if let Some(d) = &self.data_dir {
            s.server.data_dir = d.clone();
        }
        if let Some(u) = &self.database_url {
            s.server.database_url = u.clone();
        }
        if self.dev_allow_all {
            s.server.dev_allow_all = true;
        }
        if self.dev_allow_all_remote {
            s.server.dev_allow_all_remote = true;
        }
        if let Some(u) = &self.public_base_url {
            s.server.public_base_url = u.clone();
        }
        match self.log_format.as_deref() {
            Some("json") => s.server.log_format = crate::settings::LogFormat::Json,
            Some(_) => s.server.log_format = crate::settings::LogFormat::Text,
            None => {}
        }
        if self.oauth {
            s.oauth.enabled = true;
        }
        if let Some(issuer) = &self.issuer {
            s.oauth.issuer = issuer.clone();
        }
        if let Some(m) = &self.manifest {
            s.blueprints.manifest = m.display().to_string();
        }
        if let Some(p) = &self.seed_pool {
            s.blueprints.seed_pool = p.display().to_string();
        }
        if self.public_demo {
            s.public_demo.enabled = true;
        }
        if self.hosted {
            s.hosted.enabled = true;
        }
        Ok(s)
    }
}

/// Runs the command line; every failure is one line on stderr and a non-zero exit.
pub fn run() -> ExitCode {
    let cli = match Cli::try_parse() {
        Ok(cli) => cli,
        Err(e) => return usage_error(e),
    };
    let outcome = match cli.command {
        Command::Serve(args) => serve(args),
        Command::Keys { command } => keys::run(command),
        Command::Apps { command } => apps::run(command),
        Command::Users { command } => users::run(command),
        Command::Coupons {
            command: CouponsCommand::Issue(args),
        } => issue_coupon(args),
        Command::Credits {
            command: hosted::CreditsCommand::Grant(args),
        } => hosted::grant(args),
        Command::Hosted {
            command: hosted::HostedCommand::RotateMasterKey(args),
        } => hosted::rotate_master_key(args),
        Command::ExportPool(args) => export_pool(args),
        Command::Migrate(args) => migrate(&args),
        Command::Verify(args) => verify::run(args),
        Command::AuthorKey { command } => author_key::run(command),
        Command::Login(args) => registry::login(args),
        Command::Publish(args) => publish::run(args),
        Command::Search(args) => registry::search(args),
        Command::Install(args) => install::run(args),
        Command::Conformance { command } => registry::conformance(command),
        Command::Registry { command } => registry_admin::run(command),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("svc: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `--help` and `--version` print as clap writes them; a usage error (a bad or missing flag, a
/// missing command) is one line and status 2, as clap and most Unix tools do, so scripts can tell it from a failure
/// of the command itself (status 1).
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    match e.kind() {
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion => {
            let _ = e.print();
            return ExitCode::SUCCESS;
        }
        // clap would print the command's whole help, and exit 2 as here.
        ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => {
            let words = std::env::args_os()
                .skip(1)
                .map(|word| word.to_string_lossy().into_owned());
            eprintln!("svc: {}", missing_subcommand(words));
        }
        _ => eprintln!("svc: {} (see `svc --help`)", one_line(&e.render().to_string())),
    }
    ExitCode::from(USAGE_ERROR)
}

/// `` `svc keys` needs a command: mint, list, revoke (see `svc keys --help`) ``: the command the
/// words name, and what may follow it.
fn missing_subcommand(words: impl Iterator<Item = String>) -> String {
    use clap::CommandFactory;
    let mut command = Cli::command();
    let mut path = vec![command.get_name().to_owned()];
    for word in words {
        let Some(sub) = command.find_subcommand(&word).cloned() else {
            continue;
        };
        path.push(sub.get_name().to_owned());
        command = sub;
    }
    let names: Vec<&str> = command
        .get_subcommands()
        .filter(|sub| !sub.is_hide_set())
        .map(clap::Command::get_name)
        .filter(|name| *name != "help")
        .collect();
    let path = path.join(" ");
    format!("`{path}` needs a command: {} (see `{path} --help`)", names.join(", "))
}

/// Exit status of a usage error.
pub const USAGE_ERROR: u8 = 2;

/// The first paragraph of clap's message on one line: `the following required arguments were
/// not provided: --cents <CENTS>`, with the argument's name that the first line alone drops.
fn one_line(rendered: &str) -> String {
    let paragraph: Vec<&str> = rendered.lines().map(str::trim).take_while(|l| !l.is_empty()).collect();
    let joined = paragraph.join(" ");
    let joined = joined.trim_start_matches("error: ");
    if joined.is_empty() {
        "invalid arguments".to_owned()
    } else {
        joined.to_owned()
    }
}

fn migrate(args: &DeploymentArgs) -> Result<(), String> {
    let settings = args.settings()?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        let url = settings.database_url();
        let db = svc_sql::connect(&url, crate::server::pool_size(&settings))
            .await
            .map_err(|e| e.to_string())?;
        let migrated = svc_sql::migrate(&db, &url).await.map_err(|e| e.to_string());
        let _ = db.close().await;
        let applied = migrated?;
        println!("applied {applied} migration(s); the database is up to date");
        Ok(())
    })
}

fn issue_coupon(args: IssueCouponArgs) -> Result<(), String> {
    let settings = args.deployment.settings()?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        let db = svc_sql::connect_and_migrate_with(&settings.database_url(), crate::server::pool_size(&settings))
            .await
            .map_err(|e| e.to_string())?;
        let coupons = crate::server::coupon_service(
            &db,
            std::sync::Arc::new(crate::system::SystemClock),
            std::sync::Arc::new(crate::system::RandomIds),
        );
        let issued = coupons
            .issue(svc_application::services::operator::IssueCoupon {
                credit_cents: args.cents,
                expires_at: args.expires_at,
            })
            .await
            .map_err(|e| format!("cannot issue the coupon: {e}"));
        let _ = db.close().await;
        let coupon = issued?;
        let expiry = coupon
            .expires_at
            .map_or("never expires".to_owned(), |t| format!("expires {t}"));
        println!(
            "issued a coupon worth {} cents ({expiry}); redeem it once with svc_ops_redeem_coupon:",
            coupon.credit_cents
        );
        println!("{}", coupon.code.as_str());
        Ok(())
    })
}

fn export_pool(args: ExportPoolArgs) -> Result<(), String> {
    let settings = args.deployment.settings()?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        let db = svc_sql::connect_and_migrate_with(&settings.database_url(), crate::server::pool_size(&settings))
            .await
            .map_err(|e| e.to_string())?;
        let exported = crate::blueprints::export_pool_from(&settings, &db, &args.out).await;
        let _ = db.close().await;
        let count = exported?;
        println!("exported {count} blueprint(s) to {}", args.out.display());
        Ok(())
    })
}

fn serve(args: ServeArgs) -> Result<(), String> {
    let settings = args.settings()?;
    let _log = telemetry::init(settings.server.log_format);
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))?;
    let served = runtime.block_on(async move {
        let app = Application::build(&settings).await.map_err(|e| e.to_string())?;
        let demo = &settings.public_demo;
        let demo_line = demo.enabled.then(|| {
            format!(
                "  public demo:   {} generations per {} s per address\n",
                demo.generations_per_window, demo.window_seconds
            )
        });
        crate::banner::print_banner(&app, &settings.server.data_dir, demo_line.as_deref());
        app.run_until(shutdown_signal())
            .await
            .map_err(|e| format!("server error: {e}"))
    });
    // A blocking task still running (a compile, a render check) must not hold the exit past the grace.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    if served.is_ok() {
        // The log's last line: what comes after it was not a clean exit.
        tracing::info!("stopped");
    }
    served
}

/// Resolves on SIGTERM or Ctrl-C.
async fn shutdown_signal() {
    let ctrl_c = async {
        let _ = tokio::signal::ctrl_c().await;
    };
    #[cfg(unix)]
    let terminate = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    #[cfg(not(unix))]
    let terminate = std::future::pending::<()>();
    tokio::select! {
        () = ctrl_c => {},
        () = terminate => {},
    }
    tracing::info!("shutting down: finishing in-flight requests");
}
