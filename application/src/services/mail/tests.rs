//! Delivery on in-memory fakes: a mail is sent once, a temporary failure waits its turn, a
//! permanent one is given up, and so is a mail whose attempts are spent, or whose link expired
//! unsent; a mail done with keeps no link token.

use std::sync::{Arc, Mutex};

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::json;

use super::*;
use crate::ports::mail::{OutgoingMail, QueuedMail};
use crate::testing::ManualClock;

#[derive(Debug, Clone)]
struct Row {
    mail: QueuedMail,
    next_attempt_at: Option<DateTime<Utc>>,
    sent: bool,
    given_up: bool,
}

#[derive(Default)]
struct Queue(Mutex<Vec<Row>>);

#[async_trait::async_trait]
impl MailQueue for Queue {
    async fn due(&self, now: DateTime<Utc>, max: u32, _limit: u64) -> Result<Vec<QueuedMail>, RepositoryError> {
        Ok(self
            .0
            .lock()
            .unwrap()
            .iter()
            .filter(|r| !r.sent && !r.given_up && r.mail.attempts < max && r.next_attempt_at.is_none_or(|t| t <= now))
            .map(|r| r.mail.clone())
            .collect())
    }
    async fn lease(&self, mail: &QueuedMail, until: DateTime<Utc>) -> Result<bool, RepositoryError> {
        let mut rows = self.0.lock().unwrap();
        let row = rows.iter_mut().find(|r| r.mail.id == mail.id).unwrap();
        if row.mail.attempts != mail.attempts {
            return Ok(false);
        }
        row.mail.attempts += 1;
        row.next_attempt_at = Some(until);
        Ok(true)
    }
    async fn mark_sent(&self, id: &str, _at: DateTime<Utc>, kept: &serde_json::Value) -> Result<(), RepositoryError> {
        let mut rows = self.0.lock().unwrap();
        let row = rows.iter_mut().find(|r| r.mail.id == id).unwrap();
        row.sent = true;
        row.mail.payload = kept.clone();
        Ok(())
    }
    async fn mark_failed(&self, id: &str, retry_at: DateTime<Utc>, _error: &str) -> Result<(), RepositoryError> {
        self.0
            .lock()
            .unwrap()
            .iter_mut()
            .find(|r| r.mail.id == id)
            .unwrap()
            .next_attempt_at = Some(retry_at);
        Ok(())
    }
    async fn give_up(
        &self,
        id: &str,
        _at: DateTime<Utc>,
        _error: &str,
        kept: &serde_json::Value,
    ) -> Result<(), RepositoryError> {
        let mut rows = self.0.lock().unwrap();
        let row = rows.iter_mut().find(|r| r.mail.id == id).unwrap();
        row.given_up = true;
        row.mail.payload = kept.clone();
        Ok(())
    }
}

/// Answers each send with the next scripted outcome (then success), and keeps what it sent.
#[derive(Default)]
struct Transport {
    script: Mutex<Vec<Result<(), MailSendError>>>,
    sent: Mutex<Vec<OutgoingMail>>,
}

#[async_trait::async_trait]
impl MailTransport for Transport {
    async fn send(&self, mail: &OutgoingMail) -> Result<(), MailSendError> {
        let outcome = {
            let mut script = self.script.lock().unwrap();
            if script.is_empty() { Ok(()) } else { script.remove(0) }
        };
        if outcome.is_ok() {
            self.sent.lock().unwrap().push(mail.clone());
        }
        outcome
    }
}

fn queued(id: &str, kind: &str) -> Row {
    Row {
        mail: QueuedMail {
            id: id.into(),
            kind: kind.into(),
            recipient: "ada@example.org".into(),
            payload: json!({ "url": "https://svc.example/account/verify?token=t" }),
            attempts: 0,
            created_at: DateTime::from_timestamp(1_800_000_000, 0).unwrap(),
        },
        next_attempt_at: None,
        sent: false,
        given_up: false,
    }
}

fn setup(
    rows: Vec<Row>,
    script: Vec<Result<(), MailSendError>>,
) -> (MailDelivery, Arc<Queue>, Arc<Transport>, Arc<ManualClock>) {
    let queue = Arc::new(Queue(Mutex::new(rows)));
    let transport = Arc::new(Transport {
        script: Mutex::new(script),
        ..Transport::default()
    });
    let clock = Arc::new(ManualClock::default());
    let delivery = MailDelivery::new(queue.clone(), transport.clone(), clock.clone(), TimeDelta::seconds(30));
    (delivery, queue, transport, clock)
}

#[tokio::test]
async fn a_temporary_failure_waits_its_turn_then_the_mail_is_sent_once() {
    let (delivery, queue, transport, clock) = setup(
        vec![queued("m1", compose::VERIFY_EMAIL)],
        vec![Err(MailSendError::Temporary("451".into()))],
    );
    assert_eq!(delivery.pass().await.unwrap(), DeliveryPass { sent: 0, failed: 1 });
    clock.advance(TimeDelta::seconds(29));
    assert_eq!(delivery.pass().await.unwrap(), DeliveryPass::default(), "not due yet");
    clock.advance(TimeDelta::seconds(1));
    assert_eq!(delivery.pass().await.unwrap(), DeliveryPass { sent: 1, failed: 0 });
    assert_eq!(delivery.pass().await.unwrap(), DeliveryPass::default(), "sent once");
    let sent = transport.sent.lock().unwrap().clone();
    assert_eq!(sent.len(), 1);
    assert_eq!(sent[0].subject, "Confirm your email address");
    assert!(sent[0].text.contains("https://svc.example/account/verify?token=t"));
    assert_eq!(queue.0.lock().unwrap()[0].mail.attempts, 2);
}

#[tokio::test]
async fn a_permanent_failure_or_an_unknown_kind_is_given_up() {
    let (delivery, queue, _, clock) = setup(
        vec![queued("m1", compose::RESET_PASSWORD), queued("m2", "newsletter")],
        vec![Err(MailSendError::Permanent("550 no such user".into()))],
    );
    assert_eq!(delivery.pass().await.unwrap(), DeliveryPass { sent: 0, failed: 2 });
    clock.advance(TimeDelta::days(1));
    assert_eq!(delivery.pass().await.unwrap(), DeliveryPass::default());
    assert!(queue.0.lock().unwrap().iter().all(|r| r.given_up && !r.sent));
}

#[tokio::test]
async fn the_tenth_temporary_failure_gives_up() {
    let failures = (0..svc_domain::mail::MAX_ATTEMPTS)
        .map(|_| Err(MailSendError::Temporary("421".into())))
        .collect();
    let (delivery, queue, transport, clock) = setup(vec![queued("m1", compose::VERIFY_EMAIL)], failures);
    for _ in 0..svc_domain::mail::MAX_ATTEMPTS {
        assert_eq!(delivery.pass().await.unwrap(), DeliveryPass { sent: 0, failed: 1 });
        clock.advance(svc_domain::mail::MAX_BACKOFF);
    }
    assert_eq!(delivery.pass().await.unwrap(), DeliveryPass::default());
    let row = queue.0.lock().unwrap()[0].clone();
    assert!(row.given_up && !row.sent);
    assert!(transport.sent.lock().unwrap().is_empty());
}

/// The token of a link is a live secret: once the mail is sent (or given up), its row keeps the
/// link without it. A mail whose link expired before it could leave is given up, unsent.
#[tokio::test]
async fn a_sent_mail_keeps_no_token_a_refused_one_keeps_its_link_and_an_expired_link_is_not_sent() {
    let token = "T0kenT0kenT0ken";
    let with_token = |id: &str, kind: &str, path: &str| {
        let mut row = queued(id, kind);
        row.mail.payload = json!({ "url": format!("https://svc.example{path}?token={token}") });
        row
    };
    let mut stale = with_token("m3", compose::RESET_PASSWORD, "/account/reset");
    stale.mail.created_at = DateTime::from_timestamp(1_700_000_000, 0).unwrap();
    let (delivery, queue, transport, _) = setup(
        vec![
            with_token("m1", compose::RESET_PASSWORD, "/account/reset"),
            with_token("m2", compose::VERIFY_EMAIL, "/account/verify"),
            stale,
        ],
        vec![Ok(()), Err(MailSendError::Permanent("550 no such user".into()))],
    );
    assert_eq!(delivery.pass().await.unwrap(), DeliveryPass { sent: 1, failed: 2 });
    let rows = queue.0.lock().unwrap().clone();
    let kept: Vec<(bool, bool, serde_json::Value)> = rows
        .iter()
        .map(|r| (r.sent, r.given_up, r.mail.payload.clone()))
        .collect();
    assert_eq!(
        kept,
        [
            (
                true,
                false,
                json!({ "url": "https://svc.example/account/reset?token=redacted" })
            ),
            (
                false,
                true,
                json!({ "url": format!("https://svc.example/account/verify?token={token}") })
            ),
            (
                false,
                true,
                json!({ "url": "https://svc.example/account/reset?token=redacted" })
            ),
        ]
    );
    let sent = transport.sent.lock().unwrap().clone();
    assert_eq!(sent.len(), 1, "the expired link was not sent");
    assert!(sent[0].text.contains(token), "the mail itself carries the link");

    // A redacted row queued again by hand is refused, not mailed with a dead link.
    let mut again = rows[0].mail.clone();
    again.id = "m1-again".into();
    let refused = compose::compose(&again).unwrap_err();
    assert!(refused.reason.contains("redacted"), "{refused}");
}
