//! `svc keys mint|list|revoke`: bearer keys in the keys file of the deployment's data directory
//! (the same settings as `serve`: `--config`, `SVC_SERVER__DATA_DIR`, `--data-dir`).

use std::path::PathBuf;
use std::sync::Arc;

use clap::Subcommand;
use svc_application::ports::{Clock, Ids};
use svc_application::services::operator::{ConnectorKeyService, IssueConnectorKey};
use svc_sql::operator::SeaOrmConnectorKeyRepository;

use crate::keys_file::KeysFile;
use crate::settings::Settings;
use crate::system::{RandomIds, SystemClock};

#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Mint a bearer key; prints the plaintext once, as the last line of stdout. With
    /// `--database-url` and `--user`, the key belongs to that hosted account and lives in the
    /// database (every replica accepts it at once); otherwise it goes into the keys file.
    Mint {
        #[command(flatten)]
        at: KeysFileArgs,
        /// A label shown by `svc keys list` (and in the account's key list).
        #[arg(long)]
        name: Option<String>,
        /// The hosted database (postgres://...) to mint into.
        #[arg(long, requires = "user", conflicts_with = "data_dir")]
        database_url: Option<String>,
        /// The email of the hosted account the key belongs to.
        #[arg(long, requires = "database_url")]
        user: Option<String>,
    },
    /// List the keys (id, name, prefix, creation time); never the keys themselves.
    List {
        #[command(flatten)]
        at: KeysFileArgs,
    },
    /// Revoke a key by its id or its shown prefix; a running server refuses it at once.
    Revoke {
        /// The key's id, or its prefix as `svc keys list` shows it (`svc_user_Ab…`).
        key: String,
        #[command(flatten)]
        at: KeysFileArgs,
    },
}

/// Where the keys file is: `<data_dir>/keys.json`.
#[derive(Debug, Clone, clap::Args)]
pub struct KeysFileArgs {
    /// A TOML file layered over config/default.toml (its `server.data_dir` is used).
    #[arg(long)]
    config: Option<PathBuf>,
    /// The server's data directory; default from the configuration (./.svc-data).
    #[arg(long)]
    data_dir: Option<PathBuf>,
}

impl KeysFileArgs {
    fn keys_file(&self) -> Result<KeysFile, String> {
        let settings = Settings::load(self.config.as_deref()).map_err(|e| e.to_string())?;
        let data_dir = self.data_dir.clone().unwrap_or(settings.server.data_dir);
        Ok(KeysFile::in_data_dir(&data_dir))
    }
}

pub fn run(command: KeysCommand) -> Result<(), String> {
    match command {
        KeysCommand::Mint {
            at,
            name,
            database_url: Some(database_url),
            user: Some(user),
        } => mint_for_account(&at, database_url, &user, name),
        KeysCommand::Mint { at, name, .. } => mint(&at.keys_file()?, name),
        KeysCommand::List { at } => list(&at.keys_file()?),
        KeysCommand::Revoke { key, at } => revoke(&at.keys_file()?, &key),
    }
}

/// `svc keys mint --database-url URL --user EMAIL`: a connector key of the account, in the
/// database the replicas read.
fn mint_for_account(at: &KeysFileArgs, database_url: String, email: &str, name: Option<String>) -> Result<(), String> {
    let mut settings = Settings::load(at.config.as_deref()).map_err(|e| e.to_string())?;
    settings.server.database_url = database_url;
    let (clock, ids): (Arc<dyn Clock>, Arc<dyn Ids>) = (Arc::new(SystemClock), Arc::new(RandomIds));
    super::hosted::runtime()?.block_on(async move {
        let db = super::hosted::database(&settings).await?;
        let minted = async {
            let accounts = crate::hosted::account_service(&settings, &db, clock.clone(), ids.clone());
            let account = accounts
                .find_by_email(email)
                .await
                .map_err(|e| e.to_string())?
                .ok_or_else(|| format!("no account with email {}", email.trim()))?;
            let keys = ConnectorKeyService::new(Arc::new(SeaOrmConnectorKeyRepository::new(db.clone())), clock, ids);
            keys.issue(IssueConnectorKey {
                caller_user_id: account.user_id.clone(),
                name,
                app_id: None,
                expires_at: None,
            })
            .await
            .map(|issued| (account, issued))
            .map_err(|e| e.to_string())
        }
        .await;
        let _ = db.close().await;
        let (account, issued) = minted.map_err(|e| format!("cannot mint a key: {e}"))?;
        println!(
            "minted key {} (svc_user_{}…) for {} ({})",
            issued.summary.id,
            issued.summary.api_key_prefix,
            account.email.as_str(),
            account.user_id
        );
        println!("store it now; it is shown only once:");
        println!("{}", issued.plaintext_key.expose());
        Ok(())
    })
}

fn mint(file: &KeysFile, name: Option<String>) -> Result<(), String> {
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

fn list(file: &KeysFile) -> Result<(), String> {
    let keys = file
        .list()
        .map_err(|e| format!("cannot read {}: {e}", file.path().display()))?;
    if keys.is_empty() {
        println!("no keys in {}", file.path().display());
        return Ok(());
    }
    println!("ID\tNAME\tPREFIX\tCREATED");
    for key in keys {
        println!(
            "{}\t{}\t{}…\t{}",
            key.id,
            key.name.as_deref().unwrap_or("-"),
            key.api_key_prefix,
            key.created_at.to_rfc3339_opts(chrono::SecondsFormat::Secs, true)
        );
    }
    Ok(())
}

fn revoke(file: &KeysFile, key: &str) -> Result<(), String> {
    // A prefix copied from `list` carries its ellipsis.
    let key = key.trim_end_matches('…');
    let removed = file
        .revoke(key)
        .map_err(|e| format!("cannot revoke `{key}` in {}: {e}", file.path().display()))?;
    println!(
        "revoked key {} ({}, {}…)",
        removed.id,
        removed.name.as_deref().unwrap_or("unnamed"),
        removed.api_key_prefix
    );
    Ok(())
}
