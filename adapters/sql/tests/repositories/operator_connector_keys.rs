//! SeaOrmConnectorKeyRepository on every backend: keys are found by hash, listed per owner,
//! revoked idempotently (the row is kept) and stamped when used.

use crate::support;

use chrono::{DateTime, TimeZone, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::RepositoryError;
use svc_application::ports::operator::{ConnectorKeyRepository, TransitionError};
use svc_domain::connector_key::{
    ConnectorKey, ConnectorKeyDraft, ConnectorKeyError, ConnectorKeyStatus, KeyRevokeOutcome, hash_key,
};
use svc_sql::operator::SeaOrmConnectorKeyRepository;

support::backend_tests!(
    an_inserted_key_is_found_by_hash_and_listed_for_its_owner,
    revoking_keeps_the_row_and_is_idempotent,
    concurrent_revokes_give_one_revoked_and_one_already_revoked,
    a_duplicate_hash_is_a_conflict,
);

fn at(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap()
}

fn key(id: &str, owner: &str, second: u32) -> (ConnectorKey, String) {
    let draft = ConnectorKeyDraft {
        id: id.into(),
        owner_user_id: owner.into(),
        app_id: (id == "k1").then(|| "app1".to_owned()),
        name: Some(format!("key {id}")),
        expires_at: Some(at(59)),
        secret: format!("{id}{}", "s".repeat(40)),
    };
    let (key, plaintext) = ConnectorKey::issue(draft, at(second)).unwrap();
    (key, plaintext.expose().to_owned())
}

async fn an_inserted_key_is_found_by_hash_and_listed_for_its_owner(db: DatabaseConnection) {
    let keys = SeaOrmConnectorKeyRepository::new(db.clone());
    let (k1, plaintext) = key("k1", "u1", 1);
    let (k2, _) = key("k2", "u1", 2);
    let (k3, _) = key("k3", "u2", 3);
    for k in [&k1, &k2, &k3] {
        keys.insert(k).await.unwrap();
    }
    assert_eq!(
        keys.find_by_hash(&hash_key(&plaintext)).await.unwrap(),
        Some(k1.clone())
    );
    assert_eq!(keys.find_by_hash(&hash_key("svc_user_nope")).await.unwrap(), None);
    assert_eq!(keys.get("k1").await.unwrap(), Some(k1.clone()));
    let listed = keys.list_by_owner("u1").await.unwrap();
    assert_eq!(listed, vec![k2, k1.clone()], "newest first");
    assert!(keys.list_by_owner("nobody").await.unwrap().is_empty());

    keys.touch_last_used("k1", at(30)).await.unwrap();
    keys.touch_last_used("missing", at(30)).await.unwrap();
    assert_eq!(keys.get("k1").await.unwrap().unwrap().last_used_at, Some(at(30)));
}

async fn revoking_keeps_the_row_and_is_idempotent(db: DatabaseConnection) {
    let keys = SeaOrmConnectorKeyRepository::new(db.clone());
    let (k1, plaintext) = key("k1", "u1", 1);
    keys.insert(&k1).await.unwrap();

    let (revoked, outcome) = keys.revoke("k1").await.unwrap();
    assert_eq!(
        (revoked.status, outcome),
        (ConnectorKeyStatus::Revoked, KeyRevokeOutcome::Revoked)
    );
    let (again, outcome) = keys.revoke("k1").await.unwrap();
    assert_eq!(
        (again.status, outcome),
        (ConnectorKeyStatus::Revoked, KeyRevokeOutcome::AlreadyRevoked)
    );

    let found = keys.find_by_hash(&hash_key(&plaintext)).await.unwrap().unwrap();
    assert_eq!(found.status, ConnectorKeyStatus::Revoked);
    assert!(!found.authenticates(at(2)), "auth rejects it regardless of hash match");
    assert!(matches!(
        keys.revoke("missing").await,
        Err(TransitionError::Rejected(ConnectorKeyError::NotFound))
    ));
}

async fn concurrent_revokes_give_one_revoked_and_one_already_revoked(db: DatabaseConnection) {
    let keys = SeaOrmConnectorKeyRepository::new(db.clone());
    let (k1, _) = key("k1", "u1", 1);
    keys.insert(&k1).await.unwrap();
    let other = SeaOrmConnectorKeyRepository::new(db.clone());
    let (a, b) = tokio::join!(keys.revoke("k1"), other.revoke("k1"));
    let mut outcomes = vec![a.unwrap().1, b.unwrap().1];
    outcomes.sort_by_key(|outcome| *outcome != KeyRevokeOutcome::Revoked);
    assert_eq!(
        outcomes,
        vec![KeyRevokeOutcome::Revoked, KeyRevokeOutcome::AlreadyRevoked]
    );
}

async fn a_duplicate_hash_is_a_conflict(db: DatabaseConnection) {
    let keys = SeaOrmConnectorKeyRepository::new(db.clone());
    let (k1, _) = key("k1", "u1", 1);
    keys.insert(&k1).await.unwrap();
    let same_secret = ConnectorKey { id: "k9".into(), ..k1 };
    assert!(matches!(
        keys.insert(&same_secret).await,
        Err(RepositoryError::Conflict(_))
    ));
}
