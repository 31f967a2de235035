//! Org invites: pending, then accepted, revoked or expired.
//!
//! Issuing an invite for an (org, email) pair that already has a live pending invite reuses it:
//! no new row and no second email. Revoking is a compare-and-set from `pending`; revoking twice
//! is idempotent; an accepted invite cannot be revoked. An invite past its `expiresAt` is expired
//! whatever its stored status says, and can be neither accepted nor revoked.

use chrono::{DateTime, TimeDelta, Utc};
use serde::{Deserialize, Serialize};

use crate::org::{OrgMembership, OrgRole};

/// How long an invite stays acceptable. The seeds leave it open; a week is long enough for a
/// person to notice the email and short enough that a forgotten link goes dead.
pub const INVITE_LIFETIME: TimeDelta = TimeDelta::days(7);

/// Roles an invite can grant. Ownership is never granted by invite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InviteRole {
    Admin,
    Member,
}

impl InviteRole {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Admin => "admin",
            Self::Member => "member",
        }
    }

    pub fn parse(value: &str) -> Result<Self, InviteError> {
        match value {
            "admin" => Ok(Self::Admin),
            "member" => Ok(Self::Member),
            other => Err(InviteError::InvalidRole(other.to_owned())),
        }
    }

    pub fn org_role(self) -> OrgRole {
        match self {
            Self::Admin => OrgRole::Admin,
            Self::Member => OrgRole::Member,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum InviteStatus {
    Pending,
    Accepted,
    Revoked,
    Expired,
}

impl InviteStatus {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Accepted => "accepted",
            Self::Revoked => "revoked",
            Self::Expired => "expired",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "pending" => Some(Self::Pending),
            "accepted" => Some(Self::Accepted),
            "revoked" => Some(Self::Revoked),
            "expired" => Some(Self::Expired),
            _ => None,
        }
    }
}

/// An email address in the accepted subset of RFC 5322 `addr-spec`:
///
/// - `local-part@domain`, at most 254 characters in all, ASCII only;
/// - the local part is a `dot-atom`: 1 to 64 characters of letters, digits and
///   ``!#$%&'*+-/=?^_`{|}~``, with dots between them (none leading, trailing or doubled);
/// - the domain is one or more dot-separated labels of letters, digits and hyphens, each 1 to 63
///   characters and not starting or ending with a hyphen (so `user@localhost` is accepted).
///
/// Not accepted: quoted local parts, comments, folding whitespace, domain literals (`[1.2.3.4]`)
/// and obsolete syntax. Nobody types those into an invite form, and every mail system can
/// deliver to the forms that are accepted. The domain is lowercased because domains are
/// case-insensitive; the local part is kept as given.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct EmailAddress(String);

impl EmailAddress {
    pub const MAX_CHARS: usize = 254;
    const LOCAL_MAX_CHARS: usize = 64;
    const LABEL_MAX_CHARS: usize = 63;

    pub fn parse(raw: &str) -> Result<Self, InviteError> {
        let invalid = || InviteError::InvalidEmail(raw.to_owned());
        if raw.is_empty() || raw.len() > Self::MAX_CHARS || !raw.is_ascii() {
            return Err(invalid());
        }
        let (local, domain) = raw.rsplit_once('@').ok_or_else(invalid)?;
        if !is_dot_atom(local) || local.len() > Self::LOCAL_MAX_CHARS || !is_hostname(domain) {
            return Err(invalid());
        }
        Ok(Self(format!("{local}@{}", domain.to_ascii_lowercase())))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

fn is_atext(c: char) -> bool {
    c.is_ascii_alphanumeric() || "!#$%&'*+-/=?^_`{|}~".contains(c)
}

fn is_dot_atom(value: &str) -> bool {
    value
        .split('.')
        .all(|atom| !atom.is_empty() && atom.chars().all(is_atext))
}

fn is_hostname(value: &str) -> bool {
    value.split('.').all(|label| {
        !label.is_empty()
            && label.len() <= EmailAddress::LABEL_MAX_CHARS
            && !label.starts_with('-')
            && !label.ends_with('-')
            && label.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    })
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Invite {
    pub invite_id: String,
    pub org_id: String,
    pub email: EmailAddress,
    pub role: InviteRole,
    pub inviter_user_id: String,
    /// The stored status; [`Invite::status_at`] also accounts for expiry.
    pub status: InviteStatus,
    pub expires_at: DateTime<Utc>,
    pub created_at: DateTime<Utc>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_at: Option<DateTime<Utc>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub accepted_by_user_id: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub revoked_at: Option<DateTime<Utc>>,
}

/// What the inviter asks for; ids come from the caller.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InviteDraft {
    pub invite_id: String,
    pub org_id: String,
    pub email: EmailAddress,
    pub role: InviteRole,
    pub inviter_user_id: String,
}

/// The result of issuing an invite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InviteIssue {
    /// A live pending invite for the same (org, email) exists: reuse it, send nothing.
    Reused(Invite),
    /// A new pending invite, to be stored and emailed. `superseded` is the old pending invite of
    /// the same pair that had already expired, now marked expired, to be stored with it.
    Created { invite: Invite, superseded: Option<Invite> },
}

impl InviteIssue {
    pub fn invite(&self) -> &Invite {
        match self {
            Self::Reused(invite) | Self::Created { invite, .. } => invite,
        }
    }

    pub fn reused(&self) -> bool {
        matches!(self, Self::Reused(_))
    }
}

/// How a revoke ended; every variant is a success for the caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InviteRevokeOutcome {
    /// pending -> revoked: the link stops working.
    Revoked,
    /// It was revoked before (`alreadyRevoked: true`).
    AlreadyRevoked,
    /// It had expired: the link already does not work, nothing to revoke.
    AlreadyExpired,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum InviteError {
    #[error("not an email address: {0:?}")]
    InvalidEmail(String),
    #[error("an invite grants admin or member, not {0:?}")]
    InvalidRole(String),
    /// Accepted invites are final; a racing revoke surfaces this as a conflict.
    #[error("the invite was already accepted")]
    AlreadyAccepted,
    #[error("the invite was revoked")]
    Revoked,
    #[error("the invite has expired")]
    Expired,
    /// Missing, or in an org the caller cannot see: the same answer, so existence never leaks.
    #[error("no such invite")]
    NotFound,
}

impl InviteError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidEmail(_) => "invalid_email",
            Self::InvalidRole(_) => "invalid_invite_role",
            Self::AlreadyAccepted => "org_invite_already_accepted",
            Self::Revoked => "org_invite_revoked",
            Self::Expired => "org_invite_expired",
            Self::NotFound => "org_invite_not_found",
        }
    }
}

impl Invite {
    /// Issues an invite, reusing `existing_pending` (the stored pending invite of the same
    /// (org, email), if any) while it is still live.
    pub fn issue(existing_pending: Option<Invite>, draft: InviteDraft, now: DateTime<Utc>) -> InviteIssue {
        let same_pair =
            |e: &Invite| e.org_id == draft.org_id && e.email == draft.email && e.status == InviteStatus::Pending;
        let superseded = match existing_pending.filter(same_pair) {
            Some(existing) if existing.status_at(now) == InviteStatus::Pending => {
                return InviteIssue::Reused(existing);
            }
            Some(expired) => Some(Invite {
                status: InviteStatus::Expired,
                ..expired
            }),
            None => None,
        };
        let invite = Invite {
            invite_id: draft.invite_id,
            org_id: draft.org_id,
            email: draft.email,
            role: draft.role,
            inviter_user_id: draft.inviter_user_id,
            status: InviteStatus::Pending,
            expires_at: now + INVITE_LIFETIME,
            created_at: now,
            accepted_at: None,
            accepted_by_user_id: None,
            revoked_at: None,
        };
        InviteIssue::Created { invite, superseded }
    }

    /// The status at `now`: a pending invite past `expires_at` is expired.
    pub fn status_at(&self, now: DateTime<Utc>) -> InviteStatus {
        match self.status {
            InviteStatus::Pending if now >= self.expires_at => InviteStatus::Expired,
            status => status,
        }
    }

    /// pending -> revoked. The returned invite is what to store, by compare-and-set on the
    /// stored status this one was read with.
    pub fn revoke(&self, now: DateTime<Utc>) -> Result<(Invite, InviteRevokeOutcome), InviteError> {
        match self.status_at(now) {
            InviteStatus::Pending => Ok((
                Invite {
                    status: InviteStatus::Revoked,
                    revoked_at: Some(now),
                    ..self.clone()
                },
                InviteRevokeOutcome::Revoked,
            )),
            InviteStatus::Revoked => Ok((self.clone(), InviteRevokeOutcome::AlreadyRevoked)),
            InviteStatus::Expired => Ok((
                Invite {
                    status: InviteStatus::Expired,
                    ..self.clone()
                },
                InviteRevokeOutcome::AlreadyExpired,
            )),
            InviteStatus::Accepted => Err(InviteError::AlreadyAccepted),
        }
    }

    /// pending -> accepted, yielding the new member's membership with the invited role.
    pub fn accept(&self, user_id: &str, now: DateTime<Utc>) -> Result<(Invite, OrgMembership), InviteError> {
        match self.status_at(now) {
            InviteStatus::Pending => {
                let accepted = Invite {
                    status: InviteStatus::Accepted,
                    accepted_at: Some(now),
                    accepted_by_user_id: Some(user_id.to_owned()),
                    ..self.clone()
                };
                let membership = OrgMembership {
                    org_id: self.org_id.clone(),
                    user_id: user_id.to_owned(),
                    role: self.role.org_role(),
                    joined_at: now,
                };
                Ok((accepted, membership))
            }
            InviteStatus::Accepted => Err(InviteError::AlreadyAccepted),
            InviteStatus::Revoked => Err(InviteError::Revoked),
            InviteStatus::Expired => Err(InviteError::Expired),
        }
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn t0() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 3, 1, 12, 0, 0).unwrap()
    }

    fn draft(id: &str) -> InviteDraft {
        InviteDraft {
            invite_id: id.into(),
            org_id: "org1".into(),
            email: EmailAddress::parse("ada@example.com").unwrap(),
            role: InviteRole::Member,
            inviter_user_id: "owner".into(),
        }
    }

    fn pending() -> Invite {
        match Invite::issue(None, draft("inv1"), t0()) {
            InviteIssue::Created { invite, .. } => invite,
            other => panic!("{other:?}"),
        }
    }

    fn with_status(status: InviteStatus) -> Invite {
        Invite { status, ..pending() }
    }

    #[test]
    fn issuing_follows_the_table() {
        let later = t0() + TimeDelta::hours(1);
        // (none) -> pending, email to send.
        let created = Invite::issue(None, draft("inv1"), t0());
        assert!(!created.reused());
        assert_eq!(created.invite().status, InviteStatus::Pending);
        assert_eq!(created.invite().expires_at, t0() + INVITE_LIFETIME);
        assert_eq!(
            created,
            InviteIssue::Created {
                invite: pending(),
                superseded: None
            }
        );
        // pending exists -> same invite, reused: no new row, no email.
        let reused = Invite::issue(Some(pending()), draft("inv2"), later);
        assert_eq!(reused, InviteIssue::Reused(pending()));
        assert!(reused.reused());
        // An expired pending invite is superseded by a fresh one.
        let after_expiry = t0() + INVITE_LIFETIME;
        match Invite::issue(Some(pending()), draft("inv2"), after_expiry) {
            InviteIssue::Created {
                invite,
                superseded: Some(old),
            } => {
                assert_eq!(invite.invite_id, "inv2");
                assert_eq!(invite.expires_at, after_expiry + INVITE_LIFETIME);
                assert_eq!(old.invite_id, "inv1");
                assert_eq!(old.status, InviteStatus::Expired);
            }
            other => panic!("{other:?}"),
        }
        // A pending invite of another pair is not reused.
        let other_email = Invite {
            email: EmailAddress::parse("bob@example.com").unwrap(),
            ..pending()
        };
        assert!(!Invite::issue(Some(other_email), draft("inv2"), later).reused());
    }

    #[test]
    fn revoking_follows_the_table() {
        let now = t0() + TimeDelta::minutes(5);
        type Row = (Invite, Result<(InviteStatus, InviteRevokeOutcome), &'static str>);
        let rows: [Row; 5] = [
            (pending(), Ok((InviteStatus::Revoked, InviteRevokeOutcome::Revoked))),
            (
                with_status(InviteStatus::Revoked),
                Ok((InviteStatus::Revoked, InviteRevokeOutcome::AlreadyRevoked)),
            ),
            (with_status(InviteStatus::Accepted), Err("org_invite_already_accepted")),
            (
                with_status(InviteStatus::Expired),
                Ok((InviteStatus::Expired, InviteRevokeOutcome::AlreadyExpired)),
            ),
            (
                Invite {
                    expires_at: now,
                    ..pending()
                },
                Ok((InviteStatus::Expired, InviteRevokeOutcome::AlreadyExpired)),
            ),
        ];
        for (invite, expected) in rows {
            let result = invite.revoke(now).map(|(next, outcome)| (next.status, outcome));
            assert_eq!(result.map_err(|e| e.code()), expected, "from {:?}", invite.status);
        }
        let (revoked, _) = pending().revoke(now).unwrap();
        assert_eq!(revoked.revoked_at, Some(now));
    }

    #[test]
    fn accepting_follows_the_table() {
        let now = t0() + TimeDelta::days(6);
        let rows: [(Invite, Result<InviteStatus, &'static str>); 5] = [
            (pending(), Ok(InviteStatus::Accepted)),
            (with_status(InviteStatus::Accepted), Err("org_invite_already_accepted")),
            (with_status(InviteStatus::Revoked), Err("org_invite_revoked")),
            (with_status(InviteStatus::Expired), Err("org_invite_expired")),
            (
                Invite {
                    expires_at: now - TimeDelta::seconds(1),
                    ..pending()
                },
                Err("org_invite_expired"),
            ),
        ];
        for (invite, expected) in rows {
            let result = invite.accept("u9", now).map(|(next, _)| next.status);
            assert_eq!(result.map_err(|e| e.code()), expected, "from {:?}", invite.status);
        }
        let admin = Invite {
            role: InviteRole::Admin,
            ..pending()
        };
        let (accepted, membership) = admin.accept("u9", now).unwrap();
        assert_eq!(accepted.accepted_by_user_id.as_deref(), Some("u9"));
        assert_eq!(accepted.accepted_at, Some(now));
        assert_eq!(membership.role, OrgRole::Admin);
        assert_eq!(membership.org_id, "org1");
        assert_eq!(membership.joined_at, now);
    }

    #[test]
    fn an_invite_expires_exactly_at_expires_at() {
        let invite = pending();
        assert_eq!(
            invite.status_at(invite.expires_at - TimeDelta::seconds(1)),
            InviteStatus::Pending
        );
        assert_eq!(invite.status_at(invite.expires_at), InviteStatus::Expired);
        assert_eq!(
            with_status(InviteStatus::Revoked).status_at(invite.expires_at),
            InviteStatus::Revoked
        );
    }

    #[test]
    fn owner_cannot_be_granted_by_invite() {
        assert_eq!(InviteRole::parse("admin"), Ok(InviteRole::Admin));
        assert_eq!(InviteRole::parse("member"), Ok(InviteRole::Member));
        assert_eq!(InviteRole::parse("owner").unwrap_err().code(), "invalid_invite_role");
        assert_eq!(InviteRole::parse("").unwrap_err().code(), "invalid_invite_role");
    }

    #[test]
    fn email_addresses_follow_the_accepted_form() {
        let accepted = [
            ("ada@example.com", "ada@example.com"),
            ("Ada.Lovelace@Example.COM", "Ada.Lovelace@example.com"),
            ("a+tag@sub.example.co", "a+tag@sub.example.co"),
            ("x!#$%&'*+-/=?^_`{|}~@example.com", "x!#$%&'*+-/=?^_`{|}~@example.com"),
            ("user@localhost", "user@localhost"),
            ("u@xn--bcher-kva.example", "u@xn--bcher-kva.example"),
        ];
        for (raw, normalised) in accepted {
            assert_eq!(
                EmailAddress::parse(raw).map(|e| e.as_str().to_owned()),
                Ok(normalised.to_owned()),
                "{raw}"
            );
        }
        let long_local = format!("{}@example.com", "a".repeat(65));
        let long_label = format!("a@{}.com", "b".repeat(64));
        let long_total = format!("a@{}.com", vec!["c".repeat(60); 5].join("."));
        let rejected = [
            "",
            "plain",
            "@example.com",
            "ada@",
            "ada@@example.com",
            ".ada@example.com",
            "ada.@example.com",
            "a..da@example.com",
            "ada@example..com",
            "ada@-example.com",
            "ada@example-.com",
            "ada@exa_mple.com",
            "\"ada\"@example.com",
            "ada lovelace@example.com",
            " ada@example.com",
            "ada@[127.0.0.1]",
            "ada(comment)@example.com",
            "adä@example.com",
            long_local.as_str(),
            long_label.as_str(),
            long_total.as_str(),
        ];
        for raw in rejected {
            let error = EmailAddress::parse(raw).unwrap_err();
            assert_eq!(error.code(), "invalid_email", "{raw}");
        }
    }

    #[test]
    fn invites_serialise_with_camel_case_names() {
        let wire = serde_json::to_value(pending()).unwrap();
        for field in [
            "inviteId",
            "orgId",
            "email",
            "role",
            "inviterUserId",
            "status",
            "expiresAt",
            "createdAt",
        ] {
            assert!(wire.get(field).is_some(), "{field}");
        }
        assert_eq!(wire["status"], "pending");
        assert_eq!(wire["role"], "member");
        assert!(wire.get("revokedAt").is_none());
    }
}
