//! The text of each kind of mail, built at sending time from the outbox row's payload.

use serde_json::Value;

use crate::ports::mail::{OutgoingMail, QueuedMail};

/// Outbox kinds (the `kind` column).
pub const ORG_INVITE: &str = "org_invite";
pub const VERIFY_EMAIL: &str = "verify_email";
pub const RESET_PASSWORD: &str = "reset_password";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("outbox row {id}: {reason}")]
pub struct ComposeError {
    pub id: String,
    pub reason: String,
}

fn field<'a>(mail: &'a QueuedMail, name: &str) -> Result<&'a str, ComposeError> {
    mail.payload
        .get(name)
        .and_then(Value::as_str)
        .ok_or_else(|| ComposeError {
            id: mail.id.clone(),
            reason: format!("payload has no `{name}`"),
        })
}

fn optional<'a>(mail: &'a QueuedMail, name: &str) -> Option<&'a str> {
    mail.payload.get(name).and_then(Value::as_str)
}

/// The message for an outbox row; a row of an unknown kind or without its fields is an error
/// (it is given up on, not retried).
pub fn compose(mail: &QueuedMail) -> Result<OutgoingMail, ComposeError> {
    // A row queued again by hand after its link was redacted would mail a dead link.
    if optional(mail, "url").is_some_and(super::redact::is_redacted) {
        return Err(ComposeError {
            id: mail.id.clone(),
            reason: "its link was redacted once the mail was done with; ask for a new one".into(),
        });
    }
    let (subject, text) = match mail.kind.as_str() {
        VERIFY_EMAIL => (
            "Confirm your email address".to_owned(),
            format!(
                "Someone (hopefully you) created an account with this address.\n\n\
                 Open this link and press the button there to confirm it (it works once, for a \
                 day):\n\n{}\n\n\
                 If it was not you, ignore this message.\n",
                field(mail, "url")?
            ),
        ),
        RESET_PASSWORD => (
            "Reset your password".to_owned(),
            format!(
                "Someone (hopefully you) asked to reset the password of the account with this address.\n\n\
                 Open this link to choose a new password (it works once, for an hour):\n\n{}\n\n\
                 If it was not you, ignore this message: your password stays as it is.\n",
                field(mail, "url")?
            ),
        ),
        ORG_INVITE => (
            "You are invited to an organisation".to_owned(),
            format!(
                "You are invited to join organisation {} as {}.\n\n{}\
                 Invite id: {}\nIt expires at {}.\n",
                field(mail, "orgId")?,
                field(mail, "role")?,
                // Hosted mode: the one-time link that accepts (creating the account if need be).
                optional(mail, "url")
                    .map(|url| format!("Open this link to accept (it works once):\n\n{url}\n\n"))
                    .unwrap_or_default(),
                field(mail, "inviteId")?,
                field(mail, "expiresAt")?
            ),
        ),
        other => {
            return Err(ComposeError {
                id: mail.id.clone(),
                reason: format!("unknown kind `{other}`"),
            });
        }
    };
    Ok(OutgoingMail {
        to: mail.recipient.clone(),
        subject,
        text,
    })
}
