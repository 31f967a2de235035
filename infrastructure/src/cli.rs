//! The `svc` command line. This contract is fixed: other parts of the system depend on it.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};

use crate::keys_file::KeysFile;
use crate::server::Application;
use crate::settings::Settings;
use crate::telemetry;

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
    /// Operator tooling for coupons.
    Coupons {
        #[command(subcommand)]
        command: CouponsCommand,
    },
    /// Write the deployment's cached blueprints to a pool file (import it with `serve --seed-pool`).
    ExportPool(ExportPoolArgs),
}

#[derive(Debug, clap::Args)]
struct ExportPoolArgs {
    /// The pool file to write (JSON, format `svc-blueprint-pool` version 1; docs/blueprints.md).
    #[arg(long)]
    out: PathBuf,
    /// A TOML file layered over config/default.toml.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The server's data directory (its SQLite database); default from the configuration.
    #[arg(long, conflicts_with = "database_url")]
    data_dir: Option<PathBuf>,
    /// sqlite://... or postgres://...; default from the configuration.
    #[arg(long)]
    database_url: Option<String>,
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
    /// A TOML file layered over config/default.toml.
    #[arg(long)]
    config: Option<PathBuf>,
    /// The server's data directory (its SQLite database); default from the configuration.
    #[arg(long, conflicts_with = "database_url")]
    data_dir: Option<PathBuf>,
    /// sqlite://... or postgres://...; default from the configuration.
    #[arg(long)]
    database_url: Option<String>,
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
    #[arg(long)]
    host: Option<String>,
    #[arg(long)]
    port: Option<u16>,
    /// Where the SQLite database and the keys file live (default ./.svc-data).
    #[arg(long)]
    data_dir: Option<PathBuf>,
    /// sqlite://... or postgres://...; default SQLite in the data directory.
    #[arg(long)]
    database_url: Option<String>,
    /// Accept any bearer as the `builder` identity. Development only.
    #[arg(long)]
    dev_allow_all: bool,
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
}

#[derive(Debug, Subcommand)]
enum KeysCommand {
    /// Mint a bearer key; prints the plaintext once, as the last line of stdout.
    Mint {
        #[arg(long, default_value = ".svc-data")]
        data_dir: PathBuf,
        #[arg(long)]
        name: Option<String>,
    },
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
        if let Some(u) = &self.public_base_url {
            s.server.public_base_url = u.clone();
        }
        if let Some(f) = &self.log_format {
            s.server.log_format = f.clone();
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
        Command::Keys {
            command: KeysCommand::Mint { data_dir, name },
        } => mint(&data_dir, name),
        Command::Coupons {
            command: CouponsCommand::Issue(args),
        } => issue_coupon(args),
        Command::ExportPool(args) => export_pool(args),
    };
    match outcome {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("svc: {message}");
            ExitCode::FAILURE
        }
    }
}

/// `--help` and `--version` print as clap writes them; a bad flag is one line and status 2.
fn usage_error(e: clap::Error) -> ExitCode {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp | ErrorKind::DisplayVersion | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        let _ = e.print();
        return ExitCode::SUCCESS;
    }
    let rendered = e.render().to_string();
    let first = rendered
        .lines()
        .next()
        .unwrap_or("invalid arguments")
        .trim_start_matches("error: ");
    eprintln!("svc: {first} (see `svc --help`)");
    ExitCode::from(2)
}

fn mint(data_dir: &std::path::Path, name: Option<String>) -> Result<(), String> {
    let file = KeysFile::in_data_dir(data_dir);
    let (entry, plaintext) = file
        .mint(name, chrono::Utc::now())
        .map_err(|e| format!("cannot write {}: {e}", file.path().display()))?;
    println!(
        "minted key {} ({}…) into {}",
        entry.id,
        entry.api_key_prefix,
        file.path().display()
    );
    println!("store it now; it is shown only once:");
    println!("{plaintext}");
    Ok(())
}

fn issue_coupon(args: IssueCouponArgs) -> Result<(), String> {
    let mut settings = Settings::load(args.config.as_deref()).map_err(|e| e.to_string())?;
    if let Some(d) = args.data_dir {
        settings.server.data_dir = d;
    }
    if let Some(u) = args.database_url {
        settings.server.database_url = u;
    }
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        let db = svc_sql::connect_and_migrate(&settings.database_url())
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
    let mut settings = Settings::load(args.config.as_deref()).map_err(|e| e.to_string())?;
    if let Some(d) = args.data_dir {
        settings.server.data_dir = d;
    }
    if let Some(u) = args.database_url {
        settings.server.database_url = u;
    }
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        let db = svc_sql::connect_and_migrate(&settings.database_url())
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
    telemetry::init(&settings.server.log_format);
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
        print_banner(&app, demo_line.as_deref());
        app.run_until(shutdown_signal())
            .await
            .map_err(|e| format!("server error: {e}"))
    });
    // A blocking task still running (a compile, a render check) must not hold the exit past the grace.
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served
}

/// The first line is a contract: `svc <version> listening on <base URL>`. A closed stdout (a
/// supervisor that stopped reading) must not take the server down, so write errors are ignored.
fn print_banner(app: &Application, public_demo: Option<&str>) {
    use std::io::Write;
    let auth = match app.auth_mode {
        svc_application::services::auth::AuthMode::DevAllowAll => {
            "--dev-allow-all (any bearer is accepted as `builder`)"
        }
        svc_application::services::auth::AuthMode::Strict => {
            "strict; mint a bearer with `svc keys mint --data-dir <dir>`"
        }
    };
    let mut banner = format!(
        "svc {} listening on {}\n  MCP endpoint:  {}/mcp\n  auth:          {auth}\n",
        env!("CARGO_PKG_VERSION"),
        app.base_url,
        app.base_url
    );
    if let Some(code) = &app.pair_code {
        banner.push_str(&format!(
            "  pair code:     {code}  (POST {}/_svc/pair {{\"pairCode\":\"{code}\"}} returns a bearer)\n",
            app.base_url
        ));
    }
    if let Some(issuer) = &app.oauth_issuer {
        banner.push_str(&format!(
            "  OAuth issuer:  {issuer}  (consent with the pair code or a key at {issuer}/oauth/authorize)\n"
        ));
    }
    if let Some(line) = public_demo {
        banner.push_str(line);
    }
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(banner.as_bytes()).and_then(|()| out.flush());
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
