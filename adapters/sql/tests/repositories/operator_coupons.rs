//! SeaOrmCouponRepository on every backend: a redemption writes its three legs (coupon
//! activated, wallet credited, ledger row) together, once, or not at all.

use crate::support;

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, TimeZone, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::RepositoryError;
use svc_application::ports::operator::{CouponRepository, TransitionError, WalletRepository};
use svc_domain::coupon::{Coupon, CouponCode, CouponError, CouponStatus};
use svc_domain::wallet::{Principal, TransactionKind};
use svc_sql::operator::{SeaOrmCouponRepository, SeaOrmWalletRepository};

support::backend_tests!(
    redeeming_writes_all_three_legs,
    concurrent_redemptions_credit_the_wallet_once,
    a_refused_redemption_writes_nothing,
    a_duplicate_code_is_a_conflict,
    redemptions_add_up_in_an_existing_wallet,
);

fn at(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap()
}

fn code(random: &str) -> CouponCode {
    CouponCode::from_random(random).unwrap()
}

async fn issued(db: &DatabaseConnection, random: &str, cents: i64, expires_at: Option<DateTime<Utc>>) -> Coupon {
    let coupon = Coupon::issue(code(random), cents, expires_at, at(0)).unwrap();
    SeaOrmCouponRepository::new(db.clone()).issue(&coupon).await.unwrap();
    coupon
}

async fn redeeming_writes_all_three_legs(db: DatabaseConnection) {
    let coupons = SeaOrmCouponRepository::new(db.clone());
    let coupon = issued(&db, "AbCd1234", 500, None).await;
    assert_eq!(coupons.get(&coupon.code).await.unwrap(), Some(coupon.clone()));

    let redemption = coupons
        .redeem(&coupon.code, &Principal::user("u1"), "tx1".into(), at(5))
        .await
        .unwrap();
    assert_eq!(redemption.receipt().credit_cents, 500);

    let stored = coupons.get(&coupon.code).await.unwrap().unwrap();
    assert_eq!(stored, redemption.coupon);
    assert_eq!(stored.status, CouponStatus::Activated);
    assert_eq!(stored.activated_at, Some(at(5)));
    assert_eq!(stored.redeemed_by, Some(Principal::user("u1")));

    let wallets = SeaOrmWalletRepository::new(db.clone());
    let wallet = wallets.get(&Principal::user("u1")).await.unwrap().unwrap();
    assert_eq!(wallet, redemption.wallet);
    assert_eq!((wallet.balance_cents, wallet.lifetime_granted_cents), (500, 500));
    let ledger = wallets.list_ledger(&Principal::user("u1"), 10, None).await.unwrap();
    assert_eq!(ledger.entries, vec![redemption.ledger_entry]);
    assert_eq!(ledger.entries[0].kind, TransactionKind::Topup);
}

async fn concurrent_redemptions_credit_the_wallet_once(db: DatabaseConnection) {
    for (round, random) in ["Race0001", "Race0002", "Race0003"].into_iter().enumerate() {
        let coupon = issued(&db, random, 250, None).await;
        let contenders = (0..6)
            .map(|n| {
                let repository = Arc::new(SeaOrmCouponRepository::new(db.clone()));
                let code = coupon.code.clone();
                tokio::spawn(async move {
                    repository
                        .redeem(&code, &Principal::user("u1"), format!("tx{round}-{n}"), at(5))
                        .await
                })
            })
            .collect::<Vec<_>>();
        let mut redeemed = 0;
        for contender in contenders {
            match contender.await.unwrap() {
                Ok(_) => redeemed += 1,
                Err(TransitionError::Rejected(error)) if error.code() == "coupon_already_redeemed" => {}
                Err(other) => panic!("round {round}: {other:?}"),
            }
        }
        assert_eq!(redeemed, 1, "round {round}");
        let wallet = SeaOrmWalletRepository::new(db.clone())
            .get(&Principal::user("u1"))
            .await
            .unwrap()
            .unwrap();
        assert_eq!(wallet.balance_cents, 250 * (round as i64 + 1), "round {round}");
    }
    assert_eq!(support::count_rows(&db, "ledger_entries").await, 3);
}

async fn a_refused_redemption_writes_nothing(db: DatabaseConnection) {
    let coupons = SeaOrmCouponRepository::new(db.clone());
    let expiring = issued(&db, "Expire01", 100, Some(at(10))).await;
    let rows = [
        (code("Missing1"), at(5), CouponError::NotFound),
        (expiring.code.clone(), at(10), CouponError::Expired),
        (expiring.code.clone(), at(10) + TimeDelta::days(1), CouponError::Expired),
    ];
    for (code, now, expected) in rows {
        let error = coupons
            .redeem(&code, &Principal::user("u1"), "tx".into(), now)
            .await
            .unwrap_err();
        assert!(
            matches!(&error, TransitionError::Rejected(e) if *e == expected),
            "{error:?}"
        );
    }
    assert_eq!(
        coupons.get(&expiring.code).await.unwrap().unwrap().status,
        CouponStatus::Issued
    );
    assert_eq!(
        support::count_rows(&db, "wallets").await,
        0,
        "no wallet opened for a refused redemption"
    );
    assert_eq!(support::count_rows(&db, "ledger_entries").await, 0);
}

async fn a_duplicate_code_is_a_conflict(db: DatabaseConnection) {
    let coupon = issued(&db, "Dup00001", 100, None).await;
    let again = SeaOrmCouponRepository::new(db.clone()).issue(&coupon).await;
    assert!(matches!(again, Err(RepositoryError::Conflict(_))));
}

async fn redemptions_add_up_in_an_existing_wallet(db: DatabaseConnection) {
    let coupons = SeaOrmCouponRepository::new(db.clone());
    let org = Principal::org("org1");
    for (n, random) in ["Sum00001", "Sum00002"].into_iter().enumerate() {
        let coupon = issued(&db, random, 300, None).await;
        coupons
            .redeem(&coupon.code, &org, format!("tx{n}"), at(n as u32 + 1))
            .await
            .unwrap();
    }
    let wallet = SeaOrmWalletRepository::new(db.clone())
        .get(&org)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        (wallet.balance_cents, wallet.lifetime_granted_cents, wallet.updated_at),
        (600, 600, at(2))
    );
}
