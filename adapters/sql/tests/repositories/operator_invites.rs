//! SeaOrmInviteRepository and SeaOrmMailOutbox on every backend: reuse of a pending invite,
//! compare-and-set revokes, acceptance with its membership, and the races between them.

use crate::support;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::operator::{InviteRepository, Mailer, OrgRepository, TransitionError};
use svc_domain::invite::{
    EmailAddress, INVITE_LIFETIME, Invite, InviteDraft, InviteError, InviteIssue, InviteRevokeOutcome, InviteRole,
    InviteStatus,
};
use svc_domain::org::{Org, OrgRole};
use svc_sql::operator::{SeaOrmInviteRepository, SeaOrmMailOutbox, SeaOrmOrgRepository};

support::backend_tests!(
    a_second_invite_for_the_same_pair_reuses_the_first,
    an_expired_pending_invite_is_superseded,
    revoking_follows_the_table,
    two_concurrent_revokes_give_one_revoked_and_one_already_revoked,
    concurrent_invites_for_one_pair_share_one_row,
    accepting_writes_the_membership,
    a_racing_accept_and_revoke_end_in_one_state,
    the_outbox_queues_one_email_per_invite,
);

fn at(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap()
}

async fn setup(db: &DatabaseConnection) -> SeaOrmInviteRepository {
    let org = Org::create("org1".into(), "Acme", "owner".into(), at(0)).unwrap();
    SeaOrmOrgRepository::new(db.clone()).create(&org).await.unwrap();
    SeaOrmInviteRepository::new(db.clone())
}

fn draft(id: &str, email: &str) -> InviteDraft {
    InviteDraft {
        invite_id: id.into(),
        org_id: "org1".into(),
        email: EmailAddress::parse(email).unwrap(),
        role: InviteRole::Member,
        inviter_user_id: "owner".into(),
    }
}

async fn pending(invites: &SeaOrmInviteRepository, id: &str, email: &str) -> Invite {
    invites
        .create_or_reuse(draft(id, email), at(1))
        .await
        .unwrap()
        .invite()
        .clone()
}

async fn a_second_invite_for_the_same_pair_reuses_the_first(db: DatabaseConnection) {
    let invites = setup(&db).await;
    let first = invites
        .create_or_reuse(draft("inv1", "ada@example.com"), at(1))
        .await
        .unwrap();
    assert!(!first.reused());
    assert_eq!(invites.get("inv1").await.unwrap().as_ref(), Some(first.invite()));

    let second = invites
        .create_or_reuse(draft("inv2", "ada@example.com"), at(2))
        .await
        .unwrap();
    assert_eq!(second, InviteIssue::Reused(first.invite().clone()));
    assert_eq!(invites.get("inv2").await.unwrap(), None, "no new row");

    let other = invites
        .create_or_reuse(draft("inv3", "bob@example.com"), at(3))
        .await
        .unwrap();
    assert!(!other.reused());
    assert_eq!(support::count_rows(&db, "org_invites").await, 2);
}

async fn an_expired_pending_invite_is_superseded(db: DatabaseConnection) {
    let invites = setup(&db).await;
    pending(&invites, "inv1", "ada@example.com").await;
    let later = at(1) + INVITE_LIFETIME;
    let issue = invites
        .create_or_reuse(draft("inv2", "ada@example.com"), later)
        .await
        .unwrap();
    assert!(!issue.reused());
    assert_eq!(
        invites.get("inv1").await.unwrap().unwrap().status,
        InviteStatus::Expired
    );
    assert_eq!(
        invites.get("inv2").await.unwrap().unwrap().status,
        InviteStatus::Pending
    );
}

async fn revoking_follows_the_table(db: DatabaseConnection) {
    let invites = setup(&db).await;
    pending(&invites, "inv1", "ada@example.com").await;

    let (revoked, outcome) = invites.revoke("inv1", at(5)).await.unwrap();
    assert_eq!(
        (revoked.status, outcome),
        (InviteStatus::Revoked, InviteRevokeOutcome::Revoked)
    );
    assert_eq!(invites.get("inv1").await.unwrap().unwrap().revoked_at, Some(at(5)));

    let (again, outcome) = invites.revoke("inv1", at(6)).await.unwrap();
    assert_eq!(
        (again.status, outcome),
        (InviteStatus::Revoked, InviteRevokeOutcome::AlreadyRevoked)
    );
    assert_eq!(again.revoked_at, Some(at(5)));

    pending(&invites, "inv2", "bob@example.com").await;
    invites.accept("inv2", "bob", at(7)).await.unwrap();
    let refused = invites.revoke("inv2", at(8)).await.unwrap_err();
    assert!(matches!(
        refused,
        TransitionError::Rejected(InviteError::AlreadyAccepted)
    ));
    assert_eq!(
        invites.get("inv2").await.unwrap().unwrap().status,
        InviteStatus::Accepted
    );

    pending(&invites, "inv3", "cy@example.com").await;
    let (expired, outcome) = invites.revoke("inv3", at(1) + INVITE_LIFETIME).await.unwrap();
    assert_eq!(
        (expired.status, outcome),
        (InviteStatus::Expired, InviteRevokeOutcome::AlreadyExpired)
    );

    let missing = invites.revoke("missing", at(9)).await.unwrap_err();
    assert!(matches!(missing, TransitionError::Rejected(InviteError::NotFound)));
}

async fn two_concurrent_revokes_give_one_revoked_and_one_already_revoked(db: DatabaseConnection) {
    let invites = setup(&db).await;
    for round in 0..5 {
        let id = format!("inv{round}");
        pending(&invites, &id, &format!("user{round}@example.com")).await;
        let other = SeaOrmInviteRepository::new(db.clone());
        let (a, b) = tokio::join!(invites.revoke(&id, at(5)), other.revoke(&id, at(5)));
        let mut outcomes = vec![a.unwrap().1, b.unwrap().1];
        outcomes.sort_by_key(|outcome| *outcome != InviteRevokeOutcome::Revoked);
        assert_eq!(
            outcomes,
            vec![InviteRevokeOutcome::Revoked, InviteRevokeOutcome::AlreadyRevoked],
            "round {round}"
        );
    }
}

async fn concurrent_invites_for_one_pair_share_one_row(db: DatabaseConnection) {
    let invites = setup(&db).await;
    let other = SeaOrmInviteRepository::new(db.clone());
    let (a, b) = tokio::join!(
        invites.create_or_reuse(draft("inv1", "ada@example.com"), at(1)),
        other.create_or_reuse(draft("inv2", "ada@example.com"), at(1)),
    );
    let (a, b) = (a.unwrap(), b.unwrap());
    assert_eq!(a.invite().invite_id, b.invite().invite_id);
    assert_eq!([a.reused(), b.reused()].iter().filter(|reused| **reused).count(), 1);
    assert_eq!(support::count_rows(&db, "org_invites").await, 1);
}

async fn accepting_writes_the_membership(db: DatabaseConnection) {
    let invites = setup(&db).await;
    let orgs = SeaOrmOrgRepository::new(db.clone());
    let admin_invite = InviteDraft {
        role: InviteRole::Admin,
        ..draft("inv1", "ada@example.com")
    };
    invites.create_or_reuse(admin_invite, at(1)).await.unwrap();

    let (accepted, membership) = invites.accept("inv1", "ada", at(2)).await.unwrap();
    assert_eq!(accepted.status, InviteStatus::Accepted);
    assert_eq!(accepted.accepted_by_user_id.as_deref(), Some("ada"));
    assert_eq!(membership.role, OrgRole::Admin);
    assert_eq!(orgs.membership("org1", "ada").await.unwrap(), Some(membership));
    assert_eq!(invites.get("inv1").await.unwrap().unwrap().accepted_at, Some(at(2)));

    let again = invites.accept("inv1", "ada", at(3)).await.unwrap_err();
    assert!(matches!(again, TransitionError::Rejected(InviteError::AlreadyAccepted)));

    // The owner accepting an invite keeps being the owner.
    pending(&invites, "inv2", "owner@example.com").await;
    let (_, kept) = invites.accept("inv2", "owner", at(4)).await.unwrap();
    assert_eq!(kept.role, OrgRole::Owner);

    pending(&invites, "inv3", "late@example.com").await;
    let late = invites
        .accept("inv3", "late", at(1) + INVITE_LIFETIME + TimeDelta::seconds(1))
        .await
        .unwrap_err();
    assert!(matches!(late, TransitionError::Rejected(InviteError::Expired)));
    assert_eq!(orgs.membership("org1", "late").await.unwrap(), None);
}

async fn a_racing_accept_and_revoke_end_in_one_state(db: DatabaseConnection) {
    let invites = setup(&db).await;
    let orgs = SeaOrmOrgRepository::new(db.clone());
    for round in 0..5 {
        let id = format!("inv{round}");
        let user = format!("user{round}");
        pending(&invites, &id, &format!("{user}@example.com")).await;
        let other = SeaOrmInviteRepository::new(db.clone());
        let (accepted, revoked) = tokio::join!(other.accept(&id, &user, at(5)), invites.revoke(&id, at(5)));
        let stored = invites.get(&id).await.unwrap().unwrap();
        let member = orgs.membership("org1", &user).await.unwrap();
        match (accepted, revoked) {
            (Ok(_), Err(TransitionError::Rejected(InviteError::AlreadyAccepted))) => {
                assert_eq!(stored.status, InviteStatus::Accepted);
                assert!(member.is_some());
            }
            (Err(TransitionError::Rejected(InviteError::Revoked)), Ok((_, InviteRevokeOutcome::Revoked))) => {
                assert_eq!(stored.status, InviteStatus::Revoked);
                assert!(member.is_none());
            }
            other => panic!("round {round}: {other:?}"),
        }
    }
}

async fn the_outbox_queues_one_email_per_invite(db: DatabaseConnection) {
    let invites = setup(&db).await;
    let invite = pending(&invites, "inv1", "ada@example.com").await;
    let outbox = SeaOrmMailOutbox::new(db.clone());
    outbox.send_invite(&invite, None).await.unwrap();
    outbox.send_invite(&invite, None).await.unwrap();
    assert_eq!(support::count_rows(&db, "mail_outbox").await, 1);
}
