//! Mail delivery: works through the outbox, one lease per mail, and ships each message through
//! the transport. The outbox row is the truth: a mail is retried (with a growing wait) until the
//! transport accepts it, across crashes and restarts, and shared by every replica (a lease is a
//! compare-and-set, so two senders never send a mail at the same moment). A mail sent, or given
//! up on because its link expired before it could leave, keeps no link secret; one the transport
//! refused for good keeps its link (until it expires) so it can be queued again.

pub mod compose;
pub mod redact;

use std::sync::Arc;

use chrono::TimeDelta;
use svc_domain::mail::{LEASE, MAX_ATTEMPTS, retry_after};

use crate::ports::mail::{MailQueue, MailSendError, MailTransport, QueuedMail};
use crate::ports::{Clock, RepositoryError};

/// Mails read per pass.
const BATCH: u64 = 20;
/// The error kept on a mail whose link expired before it could be sent.
const LINK_EXPIRED: &str = "its link expired before it could be sent";

/// What one pass did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct DeliveryPass {
    pub sent: usize,
    pub failed: usize,
}

#[derive(Clone)]
pub struct MailDelivery {
    queue: Arc<dyn MailQueue>,
    transport: Arc<dyn MailTransport>,
    clock: Arc<dyn Clock>,
    /// The wait after a first failure (doubling after each further one).
    retry_base: TimeDelta,
}

impl MailDelivery {
    pub fn new(
        queue: Arc<dyn MailQueue>,
        transport: Arc<dyn MailTransport>,
        clock: Arc<dyn Clock>,
        retry_base: TimeDelta,
    ) -> Self {
        Self {
            queue,
            transport,
            clock,
            retry_base,
        }
    }

    /// Sends what is due now; a failed mail is rescheduled, never dropped.
    pub async fn pass(&self) -> Result<DeliveryPass, RepositoryError> {
        let now = self.clock.now();
        let mut done = DeliveryPass::default();
        for mail in self.queue.due(now, MAX_ATTEMPTS, BATCH).await? {
            if !self.queue.lease(&mail, now + LEASE).await? {
                continue; // another sender has it
            }
            if self.attempt(&mail).await? {
                done.sent += 1;
            } else {
                done.failed += 1;
            }
        }
        Ok(done)
    }

    /// One attempt at a leased mail; whether it left.
    async fn attempt(&self, mail: &QueuedMail) -> Result<bool, RepositoryError> {
        let attempts = mail.attempts + 1;
        let kept = redact::without_link_secret(&mail.payload);
        let now = self.clock.now();
        if redact::link_expired(mail, now) {
            self.queue.give_up(&mail.id, now, LINK_EXPIRED, &kept).await?;
            tracing::warn!(mail_id = %mail.id, kind = %mail.kind, attempts, "mail not sent: {LINK_EXPIRED}");
            return Ok(false);
        }
        let outcome = match compose::compose(mail) {
            Ok(message) => self.transport.send(&message).await,
            Err(e) => Err(MailSendError::Permanent(e.to_string())),
        };
        let now = self.clock.now();
        match outcome {
            Ok(()) => {
                self.queue.mark_sent(&mail.id, now, &kept).await?;
                tracing::info!(mail_id = %mail.id, kind = %mail.kind, attempts, "mail sent");
                Ok(true)
            }
            Err(error) => {
                let retry_at = match &error {
                    MailSendError::Temporary(_) => retry_after(attempts, self.retry_base).map(|wait| now + wait),
                    MailSendError::Permanent(_) => None,
                };
                match retry_at {
                    Some(at) => self.queue.mark_failed(&mail.id, at, &error.to_string()).await?,
                    // Refused for good (a wrong SMTP password is a 5xx too): the link is kept
                    // until it expires, so the mail can be queued again once the cause is fixed.
                    None => {
                        self.queue
                            .give_up(&mail.id, now, &error.to_string(), &mail.payload)
                            .await?
                    }
                }
                tracing::warn!(
                    mail_id = %mail.id,
                    kind = %mail.kind,
                    attempts,
                    retry_at = ?retry_at,
                    error = %error,
                    "mail not sent"
                );
                Ok(false)
            }
        }
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests;
