//! `svc users create`: a hosted account made by the operator (docs/hosted.md, "Accounts").

use std::io::{IsTerminal, Read};
use std::sync::Arc;

use clap::Subcommand;

use super::DeploymentArgs;
use crate::system::{RandomIds, SystemClock};

#[derive(Debug, Subcommand)]
pub enum UsersCommand {
    /// Create an account. The password is read from stdin when it is not a terminal; otherwise
    /// one is generated and printed once, as the last line of stdout.
    Create(CreateArgs),
}

#[derive(Debug, clap::Args)]
pub struct CreateArgs {
    /// The account's email address (its login).
    #[arg(long)]
    email: String,
    /// Queue no verification mail (by default one is queued in the mail outbox, and a running
    /// server delivers it; its link starts with `server.public_base_url`).
    #[arg(long)]
    no_verification_mail: bool,
    /// The address is known to be the person's (the operator vouches for it): the account starts
    /// verified and no mail is queued, so an identity provider that verified the same address
    /// signs in to it at once (an unverified account is never linked to a provider identity).
    #[arg(long, conflicts_with = "no_verification_mail")]
    verified: bool,
    #[command(flatten)]
    deployment: DeploymentArgs,
}

pub fn run(command: UsersCommand) -> Result<(), String> {
    match command {
        UsersCommand::Create(args) => create(args),
    }
}

/// The password piped in (its first line), `None` when stdin is a terminal or empty.
fn password_from_stdin() -> Result<Option<String>, String> {
    let mut stdin = std::io::stdin();
    if stdin.is_terminal() {
        return Ok(None);
    }
    let mut text = String::new();
    stdin
        .read_to_string(&mut text)
        .map_err(|e| format!("cannot read the password from stdin: {e}"))?;
    let line = text.lines().next().unwrap_or("");
    Ok((!line.is_empty()).then(|| line.to_owned()))
}

fn create(args: CreateArgs) -> Result<(), String> {
    let settings = args.deployment.settings()?;
    let password = password_from_stdin()?;
    super::hosted::runtime()?.block_on(async move {
        let db = super::hosted::database(&settings).await?;
        let mut accounts = crate::hosted::account_service(&settings, &db, Arc::new(SystemClock), Arc::new(RandomIds));
        let mails = !args.no_verification_mail && !args.verified;
        if mails {
            let base_url = settings.public_base_url(settings.server.port);
            accounts = accounts.mailing(crate::hosted::account_links(&db, &base_url));
        }
        let created = if args.verified {
            accounts.create_verified(&args.email, password.as_deref()).await
        } else {
            accounts.create(&args.email, password.as_deref()).await
        };
        let _ = db.close().await;
        let created = created.map_err(|e| format!("cannot create the account {}: {e}", args.email.trim()))?;
        if mails {
            // stderr: stdout's last line is the account (or its generated password).
            eprintln!(
                "a verification mail to {} is queued in the mail outbox (a running server delivers it)",
                created.account.email.as_str()
            );
        }
        println!(
            "created account {} for {}",
            created.account.user_id,
            created.account.email.as_str()
        );
        if let Some(password) = created.generated_password {
            println!("its password, shown only once:");
            println!("{password}");
        }
        Ok(())
    })
}
