//! What an outbox row keeps of a link once its mail is done with (sent, or given up on). The
//! token in a verification, reset or invite link is a live secret whose sha256 alone is stored
//! where it is checked; the row needs it only to write the mail. Afterwards the row keeps what
//! an operator reads (kind, recipient, the link up to its token), never the token.

use chrono::{DateTime, Utc};
use serde_json::Value;
use svc_domain::account::token::TokenPurpose;

use super::compose::{ORG_INVITE, RESET_PASSWORD, VERIFY_EMAIL};
use crate::ports::mail::QueuedMail;

/// Stands for the token in a done-with link: `.../account/reset?token=redacted`.
pub const REDACTED: &str = "redacted";

/// `payload` with its link's token replaced by [`REDACTED`] (a link with no `token=` entirely).
pub fn without_link_secret(payload: &Value) -> Value {
    let mut kept = payload.clone();
    if let Some(url) = kept.get_mut("url")
        && let Some(link) = url.as_str()
    {
        *url = Value::String(redacted_link(link));
    }
    kept
}

/// Whether `link` is one [`without_link_secret`] made.
pub fn is_redacted(link: &str) -> bool {
    link == REDACTED || link.contains(&format!("token={REDACTED}"))
}

fn redacted_link(link: &str) -> String {
    let Some((address, after)) = link.split_once("token=") else {
        return REDACTED.to_owned();
    };
    let rest = after.find(['&', '#']).map_or("", |end| &after[end..]);
    format!("{address}token={REDACTED}{rest}")
}

/// Whether `mail` carries a link that no longer works at `now` (its token expired): sending it
/// would only hand out a dead secret, so the sender gives it up and redacts it instead.
pub fn link_expired(mail: &QueuedMail, now: DateTime<Utc>) -> bool {
    if mail.payload.get("url").is_none() {
        return false;
    }
    // A link's token is issued with its mail, so it expires a lifetime after the row's creation.
    let expires_at = match mail.kind.as_str() {
        VERIFY_EMAIL => Some(mail.created_at + TokenPurpose::VerifyEmail.lifetime()),
        RESET_PASSWORD => Some(mail.created_at + TokenPurpose::ResetPassword.lifetime()),
        ORG_INVITE => mail
            .payload
            .get("expiresAt")
            .and_then(Value::as_str)
            .and_then(|at| DateTime::parse_from_rfc3339(at).ok())
            .map(|at| at.to_utc()),
        _ => None,
    };
    expires_at.is_some_and(|at| at <= now)
}

#[cfg(test)]
mod tests {
    use chrono::{TimeDelta, TimeZone};
    use serde_json::json;

    use super::*;

    fn mail(kind: &str, payload: Value) -> QueuedMail {
        QueuedMail {
            id: "m1".into(),
            kind: kind.into(),
            recipient: "ada@example.org".into(),
            payload,
            attempts: 0,
            created_at: Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap(),
        }
    }

    #[test]
    fn a_link_keeps_its_address_and_loses_its_token() {
        let rows = [
            (
                "https://svc.example/account/reset?token=Ab12",
                "https://svc.example/account/reset?token=redacted",
            ),
            (
                "https://svc.example/account/invite?token=Ab12&x=1#top",
                "https://svc.example/account/invite?token=redacted&x=1#top",
            ),
            ("https://svc.example/elsewhere/Ab12", "redacted"),
        ];
        for (link, kept) in rows {
            let payload = json!({ "url": link, "orgId": "o1" });
            assert_eq!(
                without_link_secret(&payload),
                json!({ "url": kept, "orgId": "o1" }),
                "{link}"
            );
        }
        let no_link = json!({ "inviteId": "i1" });
        assert_eq!(without_link_secret(&no_link), no_link);
    }

    #[test]
    fn a_link_expires_with_its_token() {
        let created = Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap();
        let link = json!({ "url": "https://svc.example/account/reset?token=Ab12" });
        let reset = mail(RESET_PASSWORD, link.clone());
        assert!(!link_expired(&reset, created + TimeDelta::minutes(59)));
        assert!(link_expired(&reset, created + TimeDelta::hours(1)));
        let verify = mail(VERIFY_EMAIL, link.clone());
        assert!(!link_expired(&verify, created + TimeDelta::hours(23)));
        assert!(link_expired(&verify, created + TimeDelta::days(1)));
        let invite = mail(
            ORG_INVITE,
            json!({ "url": "https://svc.example/account/invite?token=Ab12", "expiresAt": "2026-01-08T00:00:00Z" }),
        );
        assert!(!link_expired(&invite, created + TimeDelta::days(6)));
        assert!(link_expired(&invite, created + TimeDelta::days(7)));
        let linkless = mail(ORG_INVITE, json!({ "expiresAt": "2026-01-08T00:00:00Z" }));
        assert!(
            !link_expired(&linkless, created + TimeDelta::days(30)),
            "no secret to drop"
        );
    }
}
