//! SeaOrmOrgRepository on every backend: an org, its owner membership and its wallet are
//! written together or not at all.

use crate::support;

use chrono::{DateTime, TimeZone, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::RepositoryError;
use svc_application::ports::operator::{OrgRepository, WalletRepository};
use svc_domain::org::{Org, OrgRole};
use svc_domain::wallet::{Principal, TransactionKind, WalletMovement};
use svc_sql::operator::{SeaOrmOrgRepository, SeaOrmWalletRepository};

support::backend_tests!(
    creating_an_org_writes_org_membership_and_wallet,
    a_duplicate_org_id_writes_nothing,
    a_failure_after_the_first_rows_rolls_everything_back,
    memberships_list_oldest_first_with_their_org,
);

fn at(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap()
}

async fn creating_an_org_writes_org_membership_and_wallet(db: DatabaseConnection) {
    let orgs = SeaOrmOrgRepository::new(db.clone());
    let new_org = Org::create("org1".into(), "Acme", "owner".into(), at(1)).unwrap();
    orgs.create(&new_org).await.unwrap();

    assert_eq!(orgs.get("org1").await.unwrap(), Some(new_org.org.clone()));
    let membership = orgs.membership("org1", "owner").await.unwrap().unwrap();
    assert_eq!(membership, new_org.owner_membership);
    assert_eq!(membership.role, OrgRole::Owner);
    assert_eq!(orgs.membership("org1", "someone").await.unwrap(), None);
    let wallet = SeaOrmWalletRepository::new(db.clone())
        .get(&Principal::org("org1"))
        .await
        .unwrap();
    assert_eq!(wallet, Some(new_org.wallet));
    assert_eq!(orgs.get("missing").await.unwrap(), None);
}

async fn a_duplicate_org_id_writes_nothing(db: DatabaseConnection) {
    let orgs = SeaOrmOrgRepository::new(db.clone());
    orgs.create(&Org::create("org1".into(), "Acme", "owner".into(), at(1)).unwrap())
        .await
        .unwrap();
    let duplicate = Org::create("org1".into(), "Other", "intruder".into(), at(2)).unwrap();
    assert!(matches!(
        orgs.create(&duplicate).await,
        Err(RepositoryError::Conflict(_))
    ));
    assert_eq!(orgs.get("org1").await.unwrap().unwrap().name.as_str(), "Acme");
    assert_eq!(orgs.membership("org1", "intruder").await.unwrap(), None);
    assert_eq!(support::count_rows(&db, "org_memberships").await, 1);
}

async fn a_failure_after_the_first_rows_rolls_everything_back(db: DatabaseConnection) {
    // A wallet already exists for the org id, so the third insert fails after the org and the
    // membership rows were written inside the transaction.
    let wallets = SeaOrmWalletRepository::new(db.clone());
    let movement = WalletMovement {
        transaction_id: "t1".into(),
        kind: TransactionKind::Topup,
        amount_cents: 5,
        reason: "pre-existing".into(),
        related_session_id: None,
    };
    wallets.apply(&Principal::org("org1"), movement, at(1)).await.unwrap();

    let orgs = SeaOrmOrgRepository::new(db.clone());
    let new_org = Org::create("org1".into(), "Acme", "owner".into(), at(2)).unwrap();
    assert!(matches!(orgs.create(&new_org).await, Err(RepositoryError::Conflict(_))));
    assert_eq!(orgs.get("org1").await.unwrap(), None);
    assert_eq!(orgs.membership("org1", "owner").await.unwrap(), None);
    assert_eq!(support::count_rows(&db, "orgs").await, 0);
    assert_eq!(support::count_rows(&db, "org_memberships").await, 0);
    assert_eq!(
        wallets
            .get(&Principal::org("org1"))
            .await
            .unwrap()
            .unwrap()
            .balance_cents,
        5
    );
}

async fn memberships_list_oldest_first_with_their_org(db: DatabaseConnection) {
    let orgs = SeaOrmOrgRepository::new(db.clone());
    orgs.create(&Org::create("org2".into(), "Second", "u1".into(), at(2)).unwrap())
        .await
        .unwrap();
    orgs.create(&Org::create("org1".into(), "First", "u1".into(), at(1)).unwrap())
        .await
        .unwrap();
    orgs.create(&Org::create("org3".into(), "Other", "u2".into(), at(3)).unwrap())
        .await
        .unwrap();

    let listed = orgs.list_memberships_of_user("u1").await.unwrap();
    let names = listed
        .iter()
        .map(|r| (r.org_id.as_str(), r.name.as_str(), r.role))
        .collect::<Vec<_>>();
    assert_eq!(
        names,
        vec![("org1", "First", OrgRole::Owner), ("org2", "Second", OrgRole::Owner)]
    );
    assert_eq!(listed[0].owner_user_id, "u1");
    assert_eq!(listed[0].joined_at, at(1));
    assert!(orgs.list_memberships_of_user("nobody").await.unwrap().is_empty());
}
