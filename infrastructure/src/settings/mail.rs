//! `[mail]`: the SMTP server the mail outbox is delivered through (docs/hosted.md, "Mail").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(default)]
pub struct MailSettings {
    /// `smtp://host:port`, `smtp://host:587?tls=required` (STARTTLS) or `smtps://host:465`, with
    /// `user:password@` for authentication. Empty: mail stays queued in the outbox, unsent.
    pub smtp_url: String,
    /// The sender: `Name <address@example.org>` or `address@example.org`.
    pub from: String,
    /// How often the outbox is checked for due mail.
    #[schemars(range(min = 1, max = 86_400))]
    pub poll_seconds: u64,
    /// The wait after a mail's first failed attempt, doubling after each further one (at most an
    /// hour; ten attempts in all).
    #[schemars(range(min = 1, max = 86_400))]
    pub retry_base_seconds: u64,
}

impl Default for MailSettings {
    fn default() -> Self {
        Self {
            smtp_url: String::new(),
            from: "svc <noreply@localhost>".into(),
            poll_seconds: 5,
            retry_base_seconds: 30,
        }
    }
}
