//! Orgs and their memberships.
//!
//! Creating an org yields three rows as one value (the org, the owner's membership and a
//! zero-balance wallet) so an adapter writes all of them or none. Only an owner or an admin
//! administers an org (invites and revokes).

use chrono::{DateTime, Utc};
use serde::{Deserialize, Serialize};

use crate::wallet::{Principal, Wallet};

/// Longest org name, in characters.
pub const ORG_NAME_MAX_CHARS: usize = 120;

/// Roles within an org.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum OrgRole {
    Owner,
    Admin,
    Member,
}

impl OrgRole {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Owner => "owner",
            Self::Admin => "admin",
            Self::Member => "member",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        match value {
            "owner" => Some(Self::Owner),
            "admin" => Some(Self::Admin),
            "member" => Some(Self::Member),
            _ => None,
        }
    }

    /// Owners and admins may invite people and revoke invites.
    pub fn administers(self) -> bool {
        matches!(self, Self::Owner | Self::Admin)
    }
}

/// An org name: 1 to 120 characters once surrounding whitespace is trimmed, no control characters.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct OrgName(String);

impl OrgName {
    pub fn parse(raw: &str) -> Result<Self, OrgError> {
        crate::name::parse_name(raw, ORG_NAME_MAX_CHARS)
            .map(Self)
            .map_err(OrgError::InvalidName)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Org {
    pub org_id: String,
    pub name: OrgName,
    pub owner_user_id: String,
    pub created_at: DateTime<Utc>,
    pub updated_at: DateTime<Utc>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrgMembership {
    pub org_id: String,
    pub user_id: String,
    pub role: OrgRole,
    pub joined_at: DateTime<Utc>,
}

/// A membership as listed to its user (`OrgMembershipRecord`): the membership joined with its org.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct OrgMembershipRecord {
    pub org_id: String,
    pub name: OrgName,
    pub owner_user_id: String,
    pub role: OrgRole,
    pub joined_at: DateTime<Utc>,
}

/// Everything that creating an org writes, as one value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewOrg {
    pub org: Org,
    pub owner_membership: OrgMembership,
    pub wallet: Wallet,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum OrgError {
    #[error("org name {0}")]
    InvalidName(crate::name::NameError),
    /// The caller is not an owner or admin of the org (or not a member at all).
    #[error("caller does not administer this org")]
    InviteAccessDenied,
    /// No such org, or the caller is not a member of it (the same answer, so membership of
    /// other orgs cannot be probed).
    #[error("no such org")]
    NotFound,
}

impl OrgError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::InvalidName(_) => "invalid_org_name",
            Self::InviteAccessDenied => "org_invite_access_denied",
            Self::NotFound => "org_not_found",
        }
    }
}

impl Org {
    /// A new org owned by `owner_user_id`, with its owner membership and an empty wallet.
    pub fn create(org_id: String, name: &str, owner_user_id: String, now: DateTime<Utc>) -> Result<NewOrg, OrgError> {
        let name = OrgName::parse(name)?;
        let wallet = Wallet::open(Principal::org(org_id.clone()), now);
        let owner_membership = OrgMembership {
            org_id: org_id.clone(),
            user_id: owner_user_id.clone(),
            role: OrgRole::Owner,
            joined_at: now,
        };
        let org = Org {
            org_id,
            name,
            owner_user_id,
            created_at: now,
            updated_at: now,
        };
        Ok(NewOrg {
            org,
            owner_membership,
            wallet,
        })
    }

    /// The listing row of `membership` in this org.
    pub fn membership_record(&self, membership: &OrgMembership) -> OrgMembershipRecord {
        OrgMembershipRecord {
            org_id: self.org_id.clone(),
            name: self.name.clone(),
            owner_user_id: self.owner_user_id.clone(),
            role: membership.role,
            joined_at: membership.joined_at,
        }
    }
}

/// Checks that the caller, whose membership in the org is `membership` (`None` when they are not
/// a member, or the org does not exist), may invite people or revoke invites.
pub fn ensure_administers(membership: Option<&OrgMembership>) -> Result<(), OrgError> {
    match membership {
        Some(m) if m.role.administers() => Ok(()),
        _ => Err(OrgError::InviteAccessDenied),
    }
}

#[cfg(test)]
mod tests {
    use chrono::TimeZone;

    use super::*;

    fn now() -> DateTime<Utc> {
        Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, 0).unwrap()
    }

    #[test]
    fn creating_an_org_yields_org_owner_membership_and_empty_wallet() {
        let created = Org::create("01ORG".into(), "  Acme  ", "u1".into(), now()).unwrap();
        assert_eq!(created.org.name.as_str(), "Acme");
        assert_eq!(created.org.owner_user_id, "u1");
        assert_eq!(created.owner_membership.role, OrgRole::Owner);
        assert_eq!(created.owner_membership.user_id, "u1");
        assert_eq!(created.owner_membership.org_id, "01ORG");
        assert_eq!(created.wallet.principal, Principal::org("01ORG"));
        assert_eq!(created.wallet.balance_cents, 0);
    }

    #[test]
    fn org_names_are_1_to_120_characters() {
        let rows: [(String, bool); 5] = [
            ("a".into(), true),
            ("é".repeat(120), true),
            ("x".repeat(121), false),
            (String::new(), false),
            ("   ".into(), false),
        ];
        for (name, accepted) in rows {
            let result = OrgName::parse(&name);
            assert_eq!(result.is_ok(), accepted, "{name:?}");
            if let Err(error) = result {
                assert_eq!(error.code(), "invalid_org_name");
            }
        }
    }

    #[test]
    fn only_owners_and_admins_administer() {
        let membership = |role| OrgMembership {
            org_id: "o".into(),
            user_id: "u".into(),
            role,
            joined_at: now(),
        };
        let rows = [
            (Some(membership(OrgRole::Owner)), true),
            (Some(membership(OrgRole::Admin)), true),
            (Some(membership(OrgRole::Member)), false),
            (None, false),
        ];
        for (membership, allowed) in rows {
            let result = ensure_administers(membership.as_ref());
            assert_eq!(result.is_ok(), allowed, "{membership:?}");
            if let Err(error) = result {
                assert_eq!(error.code(), "org_invite_access_denied");
            }
        }
    }

    #[test]
    fn roles_have_lowercase_wire_names() {
        for role in [OrgRole::Owner, OrgRole::Admin, OrgRole::Member] {
            assert_eq!(serde_json::to_value(role).unwrap(), role.as_str());
            assert_eq!(OrgRole::parse(role.as_str()), Some(role));
        }
        assert_eq!(OrgRole::parse("root"), None);
    }
}
