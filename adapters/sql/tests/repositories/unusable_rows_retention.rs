//! The retention sweep deletes handshakes, org invites and their links nobody can use any more,
//! once they have been unusable for the grace, and keeps every one a render, an invitee or the
//! org's invite list can still use (or that is still within its grace), on every backend.

use std::sync::Arc;

use chrono::{DateTime, Duration, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::agent::HandshakeRepository;
use svc_application::ports::operator::{InviteLinkRepository, InviteRepository, OrgRepository};
use svc_application::services::retention::{RetentionPolicy, RetentionService, RetentionSweep};
use svc_application::testing::ManualClock;
use svc_domain::handshake::HandshakeLifecycle;
use svc_domain::invite::{EmailAddress, InviteDraft, InviteRole};
use svc_domain::org::Org;
use svc_sql::agent::{SeaOrmHandshakeRepository, SeaOrmRetentionRepository};
use svc_sql::operator::{SeaOrmInviteLinkRepository, SeaOrmInviteRepository, SeaOrmOrgRepository};

use crate::support;

support::backend_tests!(
    handshakes_go_once_past_their_lifetime_by_the_grace,
    invites_and_their_links_go_once_ended_the_grace_ago,
);

/// A sweep at `now` keeping expired rows seven days, two rows a statement.
async fn sweep(db: &DatabaseConnection, now: DateTime<Utc>) -> RetentionSweep {
    let policy = RetentionPolicy {
        expired_grace: Duration::days(7),
        replay_buffer: 1000,
        batch_rows: 2,
    };
    let store = SeaOrmRetentionRepository::new(db.clone());
    let service = RetentionService::new(Arc::new(store), Arc::new(ManualClock::at(now)), policy);
    service.sweep().await.unwrap()
}

async fn handshakes_go_once_past_their_lifetime_by_the_grace(db: DatabaseConnection) {
    let now = Utc::now();
    let handshakes = SeaOrmHandshakeRepository::new(db.clone());
    // Expired (10 minutes after creation) 7 days and a minute ago: past the grace.
    let past_grace = now - Duration::days(7) - Duration::minutes(11);
    let stored = [
        ("consumed_past_grace", past_grace, true),
        ("never_used_past_grace", past_grace - Duration::days(1), false),
        ("consumed_long_ago", past_grace - Duration::days(300), true),
        ("expired_within_grace", past_grace + Duration::minutes(2), false),
        ("consumed_within_grace", now - Duration::days(1), true),
        ("pending", now - Duration::minutes(1), false),
    ];
    for (id, created_at, consumed) in stored {
        let mut record = support::handshake(id);
        record.lifecycle = HandshakeLifecycle {
            created_at,
            consumed_at: consumed.then_some(created_at + Duration::minutes(1)),
        };
        handshakes.insert(&record).await.unwrap();
    }

    assert_eq!(sweep(&db, now).await.handshakes_deleted, 3);
    for (id, _, _) in &stored[..3] {
        assert!(handshakes.get(id).await.unwrap().is_none(), "{id} is gone");
    }
    for (id, _, _) in &stored[3..] {
        assert!(handshakes.get(id).await.unwrap().is_some(), "{id} is kept");
    }
    assert!(
        handshakes.consume("pending", now).await.unwrap(),
        "a render still takes the pending one"
    );
    assert_eq!(sweep(&db, now).await.handshakes_deleted, 0, "nothing twice");
}

async fn invites_and_their_links_go_once_ended_the_grace_ago(db: DatabaseConnection) {
    let now = Utc::now();
    let org = Org::create("org1".into(), "Acme", "owner".into(), now - Duration::days(60)).unwrap();
    SeaOrmOrgRepository::new(db.clone()).create(&org).await.unwrap();
    let invites = SeaOrmInviteRepository::new(db.clone());
    let links = SeaOrmInviteLinkRepository::new(db.clone());
    let invite = |id: &str, created_at: DateTime<Utc>| {
        let (invites, links) = (&invites, &links);
        let (id, email) = (id.to_owned(), format!("{id}@example.com"));
        async move {
            let draft = InviteDraft {
                invite_id: id.clone(),
                org_id: "org1".into(),
                email: EmailAddress::parse(&email).unwrap(),
                role: InviteRole::Member,
                inviter_user_id: "owner".into(),
            };
            invites.create_or_reuse(draft, created_at).await.unwrap();
            links.insert(&format!("link_{id}"), &id, created_at).await.unwrap();
        }
    };
    // Invites live 7 days: one created 20 days ago expired 13 days ago, one created 10 ago 3 ago.
    invite("expired_past_grace", now - Duration::days(20)).await;
    invite("expired_within_grace", now - Duration::days(10)).await;
    // Accepted or revoked before they expired: their grace runs from then.
    invite("accepted_past_grace", now - Duration::days(10)).await;
    invites
        .accept("accepted_past_grace", "ada", now - Duration::days(9))
        .await
        .unwrap();
    invite("revoked_past_grace", now - Duration::days(10)).await;
    invites
        .revoke("revoked_past_grace", now - Duration::days(8))
        .await
        .unwrap();
    invite("accepted_within_grace", now - Duration::days(2)).await;
    invites
        .accept("accepted_within_grace", "bob", now - Duration::days(1))
        .await
        .unwrap();
    invite("revoked_within_grace", now - Duration::days(3)).await;
    invites
        .revoke("revoked_within_grace", now - Duration::days(1))
        .await
        .unwrap();
    invite("pending", now - Duration::days(6)).await;
    // A second mail of the pending invite, and a link whose invite is not stored.
    links
        .insert("link_pending_again", "pending", now - Duration::days(1))
        .await
        .unwrap();
    links
        .insert("link_orphan", "no_such_invite", now - Duration::days(1))
        .await
        .unwrap();

    let swept = sweep(&db, now).await;
    assert_eq!((swept.invite_links_deleted, swept.invites_deleted), (4, 3));
    for gone in [
        "expired_past_grace",
        "accepted_past_grace",
        "revoked_past_grace",
        "orphan",
    ] {
        let token = format!("link_{gone}");
        assert_eq!(links.invite_of(&token).await.unwrap(), None, "{token} is gone");
    }
    let kept = [
        ("link_expired_within_grace", "expired_within_grace"),
        ("link_accepted_within_grace", "accepted_within_grace"),
        ("link_revoked_within_grace", "revoked_within_grace"),
        ("link_pending", "pending"),
        ("link_pending_again", "pending"),
    ];
    for (token, invite_id) in kept {
        assert_eq!(
            links.invite_of(token).await.unwrap().as_deref(),
            Some(invite_id),
            "{token} is kept"
        );
    }
    for gone in ["expired_past_grace", "accepted_past_grace", "revoked_past_grace"] {
        assert!(invites.get(gone).await.unwrap().is_none(), "{gone} is gone");
    }
    let listed: Vec<String> = invites
        .list_of_org("org1")
        .await
        .unwrap()
        .into_iter()
        .map(|invite| invite.invite_id)
        .collect();
    assert_eq!(
        listed,
        [
            "accepted_within_grace",
            "revoked_within_grace",
            "pending",
            "expired_within_grace"
        ],
        "the org lists those within their grace, newest first"
    );
    let again = sweep(&db, now).await;
    assert_eq!(
        (again.invite_links_deleted, again.invites_deleted),
        (0, 0),
        "nothing twice"
    );
}
