//! Ports of mail delivery: the outbox rows a sender works through, and the transport that ships
//! a message (SMTP in production).

use chrono::{DateTime, Utc};

use super::RepositoryError;

/// One outbox row not yet sent.
#[derive(Debug, Clone, PartialEq)]
pub struct QueuedMail {
    pub id: String,
    pub kind: String,
    pub recipient: String,
    pub payload: serde_json::Value,
    pub attempts: u32,
    pub created_at: DateTime<Utc>,
}

#[async_trait::async_trait]
pub trait MailQueue: Send + Sync {
    /// Unsent mails not given up on, whose next attempt is due at `now` and that have attempts
    /// left, oldest first.
    async fn due(&self, now: DateTime<Utc>, max_attempts: u32, limit: u64) -> Result<Vec<QueuedMail>, RepositoryError>;
    /// Takes `mail` for one attempt: counts the attempt and holds the row until `until` (a
    /// sender that dies mid-send leaves it due again then). `false` when another sender took it
    /// first (compare-and-set on the attempt count).
    async fn lease(&self, mail: &QueuedMail, until: DateTime<Utc>) -> Result<bool, RepositoryError>;
    /// Records that the mail left; the row keeps `kept` as its payload from now on (its link's
    /// secret removed).
    async fn mark_sent(&self, id: &str, at: DateTime<Utc>, kept: &serde_json::Value) -> Result<(), RepositoryError>;
    /// Records a failed attempt; the mail is due again at `retry_at`.
    async fn mark_failed(&self, id: &str, retry_at: DateTime<Utc>, error: &str) -> Result<(), RepositoryError>;
    /// Records a failure retrying cannot mend: the mail is never attempted again (its row stays,
    /// with `kept` as its payload: its link's secret removed).
    async fn give_up(
        &self,
        id: &str,
        at: DateTime<Utc>,
        error: &str,
        kept: &serde_json::Value,
    ) -> Result<(), RepositoryError>;
}

/// A message ready to ship.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutgoingMail {
    pub to: String,
    pub subject: String,
    pub text: String,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum MailSendError {
    /// Worth retrying: the server was unreachable or answered 4xx.
    #[error("temporary failure: {0}")]
    Temporary(String),
    /// Retrying will not help: the address or message was refused (5xx).
    #[error("permanent failure: {0}")]
    Permanent(String),
}

#[async_trait::async_trait]
pub trait MailTransport: Send + Sync {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailSendError>;
}
