//! `svc apps configure`: an app's hosted settings, written to the deployment's database.

use std::sync::Arc;

use clap::Subcommand;
use svc_application::services::app_settings::AppSettingsService;
use svc_domain::app_settings::{AppSettings, AppSettingsChange};

use super::DeploymentArgs;

#[derive(Debug, Subcommand)]
pub enum AppsCommand {
    /// Set an app's hosted settings; options not given keep their stored value. Prints the
    /// resulting settings.
    Configure(ConfigureArgs),
}

#[derive(Debug, clap::Args)]
pub struct ConfigureArgs {
    /// The app to configure (it must exist).
    #[arg(long)]
    app_id: String,
    /// Renders per minute the app may start (`app_rate_limited` past it), shared by all replicas.
    #[arg(long)]
    rate_limit_per_minute: Option<u32>,
    /// Device adapters the app enables: voice, camera, location, bluetooth (comma-separated;
    /// empty for none).
    #[arg(long, value_delimiter = ',', num_args = 0..)]
    enabled_adapters: Option<Vec<String>>,
    /// Capabilities granted to the app's components (comma-separated; empty for none).
    #[arg(long, value_delimiter = ',', num_args = 0..)]
    granted_capabilities: Option<Vec<String>>,
    /// chat, fullscreen or spatial.
    #[arg(long)]
    default_shell_type: Option<String>,
    /// Who may call /apps/<appId>/mcp: native (keys), federated (the issuer's tokens) or both.
    #[arg(long)]
    auth_mode: Option<String>,
    /// The issuer federated tokens must come from (their `iss`); https, or http on loopback.
    #[arg(long)]
    federation_issuer: Option<String>,
    /// The issuer's key set; default: found by OpenID Connect discovery on the issuer.
    #[arg(long)]
    jwks_url: Option<String>,
    /// A federated subject (`sub`) refused on the app's endpoint; repeat for more.
    #[arg(long = "deny-subject")]
    deny_subjects: Vec<String>,
    /// The org the app belongs to (it must exist): the app's renders are charged to the org's
    /// wallet and use the org's provider keys.
    #[arg(long, conflicts_with = "no_org")]
    org_id: Option<String>,
    /// Take the app out of its org: its renders are charged to the caller again.
    #[arg(long)]
    no_org: bool,
    #[command(flatten)]
    deployment: DeploymentArgs,
}

pub fn run(command: AppsCommand) -> Result<(), String> {
    let AppsCommand::Configure(args) = command;
    let settings = args.deployment.settings()?;
    let runtime = tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))?;
    runtime.block_on(async move {
        let db = svc_sql::connect_and_migrate_with(&settings.database_url(), crate::server::pool_size(&settings))
            .await
            .map_err(|e| e.to_string())?;
        let service = AppSettingsService::new(
            Arc::new(svc_sql::agent::SeaOrmAppRepository::new(db.clone())),
            crate::per_app::app_settings(&db),
            Arc::new(crate::system::SystemClock),
        )
        .checking_orgs(Arc::new(svc_sql::operator::SeaOrmOrgRepository::new(db.clone())));
        let change = AppSettingsChange {
            rate_limit_per_minute: args.rate_limit_per_minute,
            enabled_adapters: args.enabled_adapters.map(non_blank),
            granted_capabilities: args.granted_capabilities.map(non_blank),
            default_shell_type: args.default_shell_type,
            auth_mode: args.auth_mode,
            federation_issuer: args.federation_issuer,
            jwks_url: args.jwks_url,
            deny_subjects: args.deny_subjects,
            org_id: match (args.org_id, args.no_org) {
                (Some(org), _) => Some(Some(org.trim().to_owned())),
                (None, true) => Some(None),
                (None, false) => None,
            },
        };
        let configured = service.configure(&args.app_id, change).await;
        let _ = db.close().await;
        let stored = configured.map_err(|e| format!("cannot configure app {}: {e}", args.app_id))?;
        println!("configured app {}:", args.app_id);
        print_settings(&stored);
        Ok(())
    })
}

/// `--enabled-adapters ""` is the empty list.
fn non_blank(list: Vec<String>) -> Vec<String> {
    list.into_iter()
        .map(|s| s.trim().to_owned())
        .filter(|s| !s.is_empty())
        .collect()
}

fn print_settings(s: &AppSettings) {
    let list = |l: &Option<Vec<String>>| l.as_ref().map_or("(not set)".to_owned(), |l| l.join(","));
    let text = |t: &Option<String>| t.clone().unwrap_or_else(|| "(not set)".to_owned());
    let rate = s
        .rate_limit_per_minute
        .map_or("(not set)".to_owned(), |r| r.to_string());
    println!("  rate_limit_per_minute: {rate}");
    println!("  enabled_adapters: {}", list(&s.enabled_adapters));
    println!("  granted_capabilities: {}", list(&s.granted_capabilities));
    println!("  default_shell_type: {}", text(&s.default_shell_type));
    println!("  auth_mode: {}", s.effective_auth_mode().as_str());
    println!("  federation_issuer: {}", text(&s.federation_issuer));
    println!("  jwks_url: {}", text(&s.jwks_url));
    println!("  denied_subjects: {}", s.denied_subjects.join(","));
    println!("  org_id: {}", text(&s.org_id));
}
