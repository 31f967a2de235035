use chrono::TimeDelta;
use svc_domain::invite::INVITE_LIFETIME;
use svc_domain::org::OrgRole;
use svc_domain::wallet::Principal;

use super::*;
use crate::testing::OperatorFakes;

async fn org_with_owner(fakes: &OperatorFakes) -> (OrgService, Org) {
    let service = fakes.org_service();
    let org = service
        .create_org(CreateOrg {
            caller_user_id: "owner".into(),
            name: "Acme".into(),
        })
        .await
        .unwrap();
    (service, org)
}

fn invite(org: &Org, caller: &str, email: &str, role: &str) -> InviteToOrg {
    InviteToOrg {
        caller_user_id: caller.into(),
        org_id: org.org_id.clone(),
        email: email.into(),
        role: role.into(),
    }
}

/// `user_id` joins `org` in `role`, invited by its owner.
async fn join(service: &OrgService, org: &Org, user_id: &str, email: &str, role: &str) {
    let invited = service.invite_to_org(invite(org, "owner", email, role)).await.unwrap();
    service
        .accept_invite(AcceptInvite {
            user_id: user_id.into(),
            invite_id: invited.invite.invite_id,
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn creating_an_org_makes_the_caller_owner_with_an_empty_wallet() {
    let fakes = OperatorFakes::new();
    let (service, org) = org_with_owner(&fakes).await;
    let listed = service.list_orgs("owner").await.unwrap();
    assert_eq!(listed.len(), 1);
    assert_eq!(listed[0].role, OrgRole::Owner);
    assert_eq!(listed[0].name.as_str(), "Acme");
    let wallet = fakes.store.wallet(&Principal::org(org.org_id.clone())).unwrap();
    assert_eq!(wallet.balance_cents, 0);
    assert!(service.list_orgs("stranger").await.unwrap().is_empty());
    let error = service
        .create_org(CreateOrg {
            caller_user_id: "u".into(),
            name: " ".into(),
        })
        .await
        .unwrap_err();
    assert_eq!(error.code(), "invalid_org_name");
}

#[tokio::test]
async fn inviting_twice_reuses_the_pending_invite_and_sends_one_email() {
    let fakes = OperatorFakes::new();
    let (service, org) = org_with_owner(&fakes).await;
    let first = service
        .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
        .await
        .unwrap();
    assert!(!first.reused);
    assert_eq!(first.invite.status, InviteStatus::Pending);
    let second = service
        .invite_to_org(invite(&org, "owner", "ada@example.com", "admin"))
        .await
        .unwrap();
    assert!(second.reused);
    assert_eq!(second.invite.invite_id, first.invite.invite_id);
    assert_eq!(fakes.mailer.sent_invite_ids(), vec![first.invite.invite_id.clone()]);
    let wire = serde_json::to_value(&second).unwrap();
    assert_eq!(wire["reused"], true);
    assert_eq!(wire["inviteId"], first.invite.invite_id.as_str());
}

#[tokio::test]
async fn an_expired_pending_invite_is_replaced_and_emailed_again() {
    let fakes = OperatorFakes::new();
    let (service, org) = org_with_owner(&fakes).await;
    let first = service
        .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
        .await
        .unwrap();
    fakes.clock.advance(INVITE_LIFETIME + TimeDelta::seconds(1));
    let second = service
        .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
        .await
        .unwrap();
    assert!(!second.reused);
    assert_ne!(second.invite.invite_id, first.invite.invite_id);
    assert_eq!(fakes.mailer.sent_invite_ids().len(), 2);
}

#[tokio::test]
async fn only_owners_and_admins_invite() {
    let fakes = OperatorFakes::new();
    let (service, org) = org_with_owner(&fakes).await;
    join(&service, &org, "member", "m@example.com", "member").await;
    join(&service, &org, "admin", "a@example.com", "admin").await;

    let rows = [
        ("admin", "x@example.com", "member", Ok(())),
        ("member", "y@example.com", "member", Err("org_invite_access_denied")),
        ("stranger", "y@example.com", "member", Err("org_invite_access_denied")),
        ("owner", "y@example.com", "owner", Err("invalid_invite_role")),
        ("owner", "not an email", "member", Err("invalid_email")),
    ];
    for (caller, email, role, expected) in rows {
        let result = service
            .invite_to_org(invite(&org, caller, email, role))
            .await
            .map(|_| ());
        assert_eq!(result.map_err(|e| e.code()), expected, "{caller} {email} {role}");
    }
    let unknown_org = InviteToOrg {
        org_id: "nope".into(),
        ..invite(&org, "owner", "z@example.com", "member")
    };
    assert_eq!(
        service.invite_to_org(unknown_org).await.unwrap_err().code(),
        "org_invite_access_denied"
    );
}

#[tokio::test]
async fn administering_takes_owner_or_admin_and_outsiders_see_no_org() {
    let fakes = OperatorFakes::new();
    let (service, org) = org_with_owner(&fakes).await;
    join(&service, &org, "member", "m@example.com", "member").await;
    let rows = [
        (org.org_id.as_str(), "owner", Ok(())),
        (org.org_id.as_str(), "member", Err("org_invite_access_denied")),
        (org.org_id.as_str(), "stranger", Err("org_not_found")),
        ("nope", "owner", Err("org_not_found")),
    ];
    for (org_id, caller, expected) in rows {
        let result = service.ensure_administers(org_id, caller).await;
        assert_eq!(result.map_err(|e| e.code()), expected, "{org_id} {caller}");
    }
}

#[tokio::test]
async fn revoking_follows_the_table() {
    let fakes = OperatorFakes::new();
    let (service, org) = org_with_owner(&fakes).await;
    let pending = service
        .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
        .await
        .unwrap();
    let revoke = |caller: &str, id: &str| RevokeInvite {
        caller_user_id: caller.into(),
        invite_id: id.into(),
    };
    let id = pending.invite.invite_id.as_str();

    let first = service.revoke_invite(revoke("owner", id)).await.unwrap();
    assert_eq!((first.status, first.already_revoked), (InviteStatus::Revoked, false));
    let again = service.revoke_invite(revoke("owner", id)).await.unwrap();
    assert_eq!((again.status, again.already_revoked), (InviteStatus::Revoked, true));
    let accept = AcceptInvite {
        user_id: "ada".into(),
        invite_id: id.into(),
    };
    assert_eq!(
        service.accept_invite(accept).await.unwrap_err().code(),
        "org_invite_revoked"
    );

    let accepted = service
        .invite_to_org(invite(&org, "owner", "bob@example.com", "member"))
        .await
        .unwrap();
    let accepted_id = accepted.invite.invite_id.as_str();
    service
        .accept_invite(AcceptInvite {
            user_id: "bob".into(),
            invite_id: accepted_id.into(),
        })
        .await
        .unwrap();
    let rows = [
        (revoke("owner", accepted_id), "org_invite_already_accepted"),
        (revoke("bob", accepted_id), "org_invite_access_denied"),
        (revoke("stranger", accepted_id), "org_invite_not_found"),
        (revoke("owner", "missing"), "org_invite_not_found"),
    ];
    for (command, code) in rows {
        assert_eq!(
            service.revoke_invite(command.clone()).await.unwrap_err().code(),
            code,
            "{command:?}"
        );
    }
}

#[tokio::test]
async fn accepting_makes_a_member_with_the_invited_role() {
    let fakes = OperatorFakes::new();
    let (service, org) = org_with_owner(&fakes).await;
    let issued = service
        .invite_to_org(invite(&org, "owner", "ada@example.com", "admin"))
        .await
        .unwrap();
    let accept = AcceptInvite {
        user_id: "ada".into(),
        invite_id: issued.invite.invite_id.clone(),
    };
    let membership = service.accept_invite(accept.clone()).await.unwrap();
    assert_eq!(membership.role, OrgRole::Admin);
    assert_eq!(service.list_orgs("ada").await.unwrap()[0].org_id, org.org_id);
    assert_eq!(
        service.accept_invite(accept).await.unwrap_err().code(),
        "org_invite_already_accepted"
    );

    let late = service
        .invite_to_org(invite(&org, "owner", "late@example.com", "member"))
        .await
        .unwrap();
    fakes.clock.advance(INVITE_LIFETIME);
    let accept = AcceptInvite {
        user_id: "late".into(),
        invite_id: late.invite.invite_id,
    };
    assert_eq!(
        service.accept_invite(accept).await.unwrap_err().code(),
        "org_invite_expired"
    );
}

/// Invite links in memory: token hash to invite id.
#[derive(Default)]
struct Links(std::sync::Mutex<std::collections::HashMap<String, String>>);

#[async_trait::async_trait]
impl InviteLinkRepository for Links {
    async fn insert(
        &self,
        hash: &str,
        invite_id: &str,
        _: chrono::DateTime<chrono::Utc>,
    ) -> Result<(), RepositoryError> {
        self.0.lock().unwrap().insert(hash.into(), invite_id.into());
        Ok(())
    }
    async fn invite_of(&self, hash: &str) -> Result<Option<String>, RepositoryError> {
        Ok(self.0.lock().unwrap().get(hash).cloned())
    }
}

/// Two accounts with the address `ada@example.com`: `ada`, who verified it, and `mallory`, who
/// signed up with it and did not (open sign-up lets anyone).
struct AdaAndMallory;

#[async_trait::async_trait]
impl AccountRepository for AdaAndMallory {
    async fn insert(&self, _: &svc_domain::account::Account) -> Result<bool, RepositoryError> {
        unreachable!()
    }
    async fn find_by_email_key(&self, _: &str) -> Result<Option<svc_domain::account::Account>, RepositoryError> {
        unreachable!()
    }
    async fn find_by_id(&self, user_id: &str) -> Result<Option<svc_domain::account::Account>, RepositoryError> {
        let email = EmailAddress::parse("Ada@Example.com").unwrap();
        let account =
            |id: &str| svc_domain::account::Account::new(id.into(), email, "hash".into(), chrono::DateTime::UNIX_EPOCH);
        Ok(match user_id {
            "ada" => Some(svc_domain::account::Account {
                email_verified_at: Some(chrono::DateTime::UNIX_EPOCH),
                ..account("ada")
            }),
            "mallory" => Some(account("mallory")),
            _ => None,
        })
    }
    async fn set_password_hash(&self, _: &str, _: &str) -> Result<(), RepositoryError> {
        unreachable!()
    }
    async fn mark_email_verified(&self, _: &str, _: chrono::DateTime<chrono::Utc>) -> Result<(), RepositoryError> {
        unreachable!()
    }
    async fn mark_first_sign_in(&self, _: &str, _: chrono::DateTime<chrono::Utc>) -> Result<bool, RepositoryError> {
        unreachable!()
    }
}

#[tokio::test]
async fn with_links_the_mail_carries_a_token_and_only_its_holder_or_the_invitee_accepts_by_id() {
    let fakes = OperatorFakes::new();
    let (service, org) = org_with_owner(&fakes).await;
    let service = service.linking(InviteLinks {
        links: Arc::new(Links::default()),
        base_url: "https://ui.example/".into(),
        accounts: Arc::new(AdaAndMallory),
    });
    let to_ada = service
        .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
        .await
        .unwrap();
    let to_bob = service
        .invite_to_org(invite(&org, "owner", "bob@example.com", "member"))
        .await
        .unwrap();
    let urls = fakes.mailer.sent_accept_urls();
    let token = |url: &Option<String>| {
        let url = url.clone().unwrap();
        assert!(url.starts_with("https://ui.example/account/invite?token="), "{url}");
        url.rsplit_once('=').unwrap().1.to_owned()
    };
    let (_, bob_token) = (token(&urls[0]), token(&urls[1]));
    let accept = |user: &str, invite: &InviteIssued| AcceptInvite {
        user_id: user.into(),
        invite_id: invite.invite.invite_id.clone(),
    };
    let rows = [
        ("eve", &to_ada, None, Err("org_invite_not_found")),
        ("eve", &to_ada, Some(bob_token.as_str()), Err("org_invite_not_found")),
        ("mallory", &to_ada, None, Err("org_invite_not_found")),
        ("ada", &to_ada, None, Ok(())),
        ("eve", &to_bob, Some(bob_token.as_str()), Ok(())),
    ];
    for (user, issued, shown, expected) in rows {
        let result = service
            .accept_invite_as_caller(accept(user, issued), shown)
            .await
            .map(|_| ());
        assert_eq!(result.map_err(|e| e.code()), expected, "{user} {shown:?}");
    }
}

#[tokio::test]
async fn a_failing_mailer_fails_the_invite_with_an_internal_error() {
    let fakes = OperatorFakes::new();
    let (service, org) = org_with_owner(&fakes).await;
    fakes.mailer.fail_next();
    let error = service
        .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
        .await
        .unwrap_err();
    assert_eq!(error.code(), "internal_error");
    // The retry is a fresh invite, mailed; the one nobody was told of is revoked.
    let retried = service
        .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
        .await
        .unwrap();
    assert!(!retried.reused, "a fresh invite, not the unannounced one");
    assert_eq!(fakes.mailer.sent_invite_ids(), vec![retried.invite.invite_id.clone()]);
    let listed = InviteRepository::list_of_org(fakes.store.as_ref(), &org.org_id)
        .await
        .unwrap();
    let statuses: Vec<&str> = listed.iter().map(|i| i.status.as_str()).collect();
    assert_eq!(statuses, ["pending", "revoked"], "newest first");
}

#[tokio::test]
async fn a_pending_invite_whose_mail_was_never_queued_is_mailed_when_reused() {
    let fakes = OperatorFakes::new();
    let (service, org) = org_with_owner(&fakes).await;
    // The process stopped after storing the invite, before its mail: stored, never sent.
    let draft = InviteDraft {
        invite_id: "inv_unannounced".into(),
        org_id: org.org_id.clone(),
        email: EmailAddress::parse("ada@example.com").unwrap(),
        role: InviteRole::parse("member").unwrap(),
        inviter_user_id: "owner".into(),
    };
    InviteRepository::create_or_reuse(fakes.store.as_ref(), draft, chrono::Utc::now())
        .await
        .unwrap();
    assert!(fakes.mailer.sent_invite_ids().is_empty());
    for _ in 0..2 {
        let issued = service
            .invite_to_org(invite(&org, "owner", "ada@example.com", "member"))
            .await
            .unwrap();
        assert!(issued.reused);
        assert_eq!(issued.invite.invite_id, "inv_unannounced");
    }
    assert_eq!(
        fakes.mailer.sent_invite_ids(),
        ["inv_unannounced"],
        "mailed once, on the first reuse"
    );
}
