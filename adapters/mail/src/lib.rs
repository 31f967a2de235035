//! `SmtpTransport`: the `MailTransport` port over SMTP with lettre (`mail.smtp_url`).
//!
//! The URL is lettre's: `smtp://host:port` (plain, for a relay on loopback or a test sink),
//! `smtp://host:587?tls=required` (STARTTLS, refused if the server does not offer it) or
//! `smtps://host:465` (TLS from the start), with `user:password@` for authentication.
//! Certificates are checked against the Web PKI roots (webpki-roots).

use lettre::message::header::ContentType;
use lettre::message::{Mailbox, Message};
use lettre::transport::smtp::Error as SmtpError;
use lettre::{AsyncSmtpTransport, AsyncTransport, Tokio1Executor};
use svc_application::ports::mail::{MailSendError, MailTransport, OutgoingMail};

pub struct SmtpTransport {
    transport: AsyncSmtpTransport<Tokio1Executor>,
    from: Mailbox,
}

#[derive(Debug, thiserror::Error)]
pub enum SmtpConfigError {
    #[error("mail.smtp_url is not an SMTP URL lettre accepts (smtp://host:port or smtps://host:port): {0}")]
    Url(#[source] SmtpError),
    #[error("mail.from is not a mailbox (`Name <address@example.org>` or `address@example.org`): {0}")]
    From(String),
}

impl SmtpTransport {
    pub fn new(smtp_url: &str, from: &str) -> Result<Self, SmtpConfigError> {
        let transport = AsyncSmtpTransport::<Tokio1Executor>::from_url(smtp_url)
            .map_err(SmtpConfigError::Url)?
            .build();
        Ok(Self {
            transport,
            from: sender(from)?,
        })
    }
}

/// `mail.from` as a mailbox; start-up checks it whether or not an SMTP server is set.
pub fn sender(from: &str) -> Result<Mailbox, SmtpConfigError> {
    from.parse::<Mailbox>()
        .map_err(|e| SmtpConfigError::From(e.to_string()))
}

/// A 4xx answer or a connection that failed is worth retrying; a 5xx answer is not.
fn classify(error: SmtpError) -> MailSendError {
    let text = error.to_string();
    if error.is_permanent() {
        MailSendError::Permanent(text)
    } else {
        MailSendError::Temporary(text)
    }
}

#[async_trait::async_trait]
impl MailTransport for SmtpTransport {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailSendError> {
        let to = mail
            .to
            .parse::<Mailbox>()
            .map_err(|e| MailSendError::Permanent(format!("recipient `{}`: {e}", mail.to)))?;
        let message = Message::builder()
            .from(self.from.clone())
            .to(to)
            .subject(mail.subject.clone())
            .header(ContentType::TEXT_PLAIN)
            .body(mail.text.clone())
            .map_err(|e| MailSendError::Permanent(format!("message: {e}")))?;
        self.transport.send(message).await.map(|_| ()).map_err(classify)
    }
}
