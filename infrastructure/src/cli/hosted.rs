//! Operator commands of the hosted plane: `svc credits grant` and `svc hosted rotate-master-key`.

use std::sync::Arc;

use clap::Subcommand;
use svc_application::services::operator::{GrantCredit, GrantKind};
use svc_domain::wallet::{Principal, WalletError};

use self::grant_owner::grant_owner;
use super::DeploymentArgs;
use crate::system::{RandomIds, SystemClock};

mod grant_owner;

#[derive(Debug, Subcommand)]
pub enum CreditsCommand {
    /// Top up a user's or an org's wallet (a `topup` ledger row); prints the new balance.
    Grant(GrantArgs),
}

#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("owner").required(true).args(["user", "org"])))]
pub struct GrantArgs {
    /// The user: an account's email, or a user id (`usr_...`, a key's owner, or an app id).
    #[arg(long)]
    user: Option<String>,
    /// The org's id.
    #[arg(long)]
    org: Option<String>,
    /// Credit in cents, greater than zero.
    #[arg(long)]
    cents: i64,
    /// Why, written on the ledger row.
    #[arg(long)]
    reason: String,
    #[command(flatten)]
    deployment: DeploymentArgs,
}

#[derive(Debug, Subcommand)]
pub enum HostedCommand {
    /// Re-seal every stored provider key under the first of hosted.master_keys.
    RotateMasterKey(RotateArgs),
}

#[derive(Debug, clap::Args)]
pub struct RotateArgs {
    #[command(flatten)]
    deployment: DeploymentArgs,
}

pub(super) fn runtime() -> Result<tokio::runtime::Runtime, String> {
    tokio::runtime::Runtime::new().map_err(|e| format!("cannot start the runtime: {e}"))
}

pub(super) async fn database(settings: &crate::settings::Settings) -> Result<sea_orm::DatabaseConnection, String> {
    svc_sql::connect_and_migrate_with(&settings.database_url(), crate::server::pool_size(settings))
        .await
        .map_err(|e| e.to_string())
}

pub fn grant(args: GrantArgs) -> Result<(), String> {
    let settings = args.deployment.settings()?;
    let principal = match (args.user, args.org) {
        (Some(user), None) => Principal::user(user),
        (None, Some(org)) => Principal::org(org),
        _ => return Err("give exactly one of --user and --org".into()),
    };
    if args.reason.trim().is_empty() {
        return Err("--reason must not be empty".into());
    }
    // The amount's rule before the owner's look-up: a bad amount is told whoever it is for.
    if args.cents <= 0 {
        return Err(format!(
            "cannot grant the credit: {}",
            WalletError::NonPositiveAmount(args.cents)
        ));
    }
    runtime()?.block_on(async move {
        let db = database(&settings).await?;
        let principal = match grant_owner(&settings, &db, &principal).await {
            Ok(principal) => principal,
            Err(e) => {
                let _ = db.close().await;
                return Err(e);
            }
        };
        let credits = crate::hosted::credit_service(&settings, &db, Arc::new(SystemClock), Arc::new(RandomIds));
        let granted = credits
            .grant(GrantCredit {
                principal: principal.clone(),
                kind: GrantKind::Topup,
                amount_cents: args.cents,
                reason: args.reason.trim().to_owned(),
            })
            .await
            .map_err(|e| format!("cannot grant the credit: {e}"));
        let _ = db.close().await;
        let entry = granted?;
        println!(
            "granted {} cents to {} {}; balance {} cents (transaction {})",
            entry.delta_cents,
            principal.principal_type.as_str(),
            principal.principal_id,
            entry.balance_after_cents,
            entry.transaction_id
        );
        Ok(())
    })
}

pub fn rotate_master_key(args: RotateArgs) -> Result<(), String> {
    let settings = args.deployment.settings()?;
    runtime()?.block_on(async move {
        let db = database(&settings).await?;
        let rotated = match crate::hosted::provider_key_service(
            &settings,
            &db,
            Arc::new(SystemClock),
            Arc::new(RandomIds),
        ) {
            Ok(keys) => keys.rotate().await.map_err(|e| format!("rotation stopped: {e}")),
            Err(e) => Err(e),
        };
        let _ = db.close().await;
        let rotation = rotated?;
        let current = crate::hosted::keyring(&settings)?.current_id().to_owned();
        println!(
            "re-sealed {} provider key(s) under master key `{current}` ({} set again meanwhile); older master keys can now be removed",
            rotation.resealed, rotation.raced
        );
        Ok(())
    })
}
