//! The mail delivery worker: when `mail.smtp_url` is set, a background task works through the
//! outbox every `mail.poll_seconds` (docs/hosted.md, "Mail"). Every replica runs one; the
//! outbox's leases keep them from sending a mail twice at once.

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use svc_application::ports::Clock;
use svc_application::services::mail::MailDelivery;
use svc_mail::SmtpTransport;
use svc_sql::operator::SeaOrmMailOutbox;
use tokio_util::sync::CancellationToken;

use crate::settings::Settings;

pub struct MailWorker {
    stop: CancellationToken,
    task: tokio::task::JoinHandle<()>,
}

impl MailWorker {
    /// Stops after the attempt in progress (a mail being sent finishes or stays leased).
    pub async fn stop(self) {
        self.stop.cancel();
        let _ = self.task.await;
    }
}

/// `None` when no SMTP server is configured; an unusable `smtp_url` or `from` stops start-up.
pub fn start(
    settings: &Settings,
    db: &DatabaseConnection,
    clock: Arc<dyn Clock>,
) -> Result<Option<MailWorker>, String> {
    let m = &settings.mail;
    if m.smtp_url.trim().is_empty() {
        tracing::info!("mail.smtp_url is empty: mail stays queued in the outbox");
        return Ok(None);
    }
    let transport = SmtpTransport::new(m.smtp_url.trim(), &m.from).map_err(|e| e.to_string())?;
    let retry_base = chrono::TimeDelta::seconds(i64::try_from(m.retry_base_seconds).unwrap_or(i64::MAX / 1000));
    let delivery = MailDelivery::new(
        Arc::new(SeaOrmMailOutbox::new(db.clone())),
        Arc::new(transport),
        clock,
        retry_base,
    );
    let stop = CancellationToken::new();
    let poll = Duration::from_secs(m.poll_seconds);
    let task = tokio::spawn(run(delivery, poll, stop.clone()));
    Ok(Some(MailWorker { stop, task }))
}

async fn run(delivery: MailDelivery, poll: Duration, stop: CancellationToken) {
    loop {
        if let Err(error) = delivery.pass().await {
            tracing::warn!(error = ?error, "the mail outbox could not be read; retrying");
        }
        tokio::select! {
            () = stop.cancelled() => return,
            () = tokio::time::sleep(poll) => {}
        }
    }
}
