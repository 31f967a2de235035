//! Migration 000008 stores coupon codes as their sha256: rows written in plain text before it are
//! hashed in place (issued and activated alike), and redemption by the code works after it.

use crate::support;

use chrono::{TimeZone, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use sea_orm_migration::MigratorTrait;
use svc_application::ports::operator::{CouponRepository, TransitionError};
use svc_domain::coupon::{CouponCode, CouponError, CouponStatus};
use svc_domain::wallet::Principal;
use svc_sql::Migrator;
use svc_sql::operator::SeaOrmCouponRepository;

support::backend_tests!(plain_text_codes_are_hashed_in_place);

async fn exec(db: &DatabaseConnection, sql: &str) {
    db.execute_raw(Statement::from_string(db.get_database_backend(), sql.to_owned()))
        .await
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
}

async fn plain_text_codes_are_hashed_in_place(db: DatabaseConnection) {
    support::roll_back_through(&db, "m20261128_000009_hash_coupon_codes").await;
    // The rows as the server wrote them before: the code itself in `code`.
    exec(
        &db,
        "INSERT INTO coupons (code, credit_cents, status, created_at) \
         VALUES ('cpn_Issued01', 500, 'issued', '2026-01-01 00:00:00')",
    )
    .await;
    exec(
        &db,
        "INSERT INTO coupons (code, credit_cents, status, created_at, activated_at, \
         redeemed_by_principal_type, redeemed_by_principal_id) \
         VALUES ('cpn_Used0002', 200, 'activated', '2026-01-01 00:00:00', '2026-01-02 00:00:00', 'user', 'u1')",
    )
    .await;

    Migrator::up(&db, None).await.unwrap();
    // Running it again (a second replica starting) changes nothing.
    Migrator::up(&db, None).await.unwrap();

    assert_eq!(support::count_rows(&db, "coupons").await, 2);
    let plain = db
        .query_one_raw(Statement::from_string(
            db.get_database_backend(),
            "SELECT count(*) AS n FROM coupons WHERE code_hash LIKE 'cpn_%'".to_owned(),
        ))
        .await
        .unwrap()
        .unwrap()
        .try_get::<i64>("", "n")
        .unwrap();
    assert_eq!(plain, 0, "no code is left in plain text");

    let coupons = SeaOrmCouponRepository::new(db.clone());
    let issued = CouponCode::parse("cpn_Issued01").unwrap();
    let stored = coupons.get(&issued).await.unwrap().unwrap();
    assert_eq!((stored.status, stored.credit_cents), (CouponStatus::Issued, 500));
    let now = Utc.with_ymd_and_hms(2026, 2, 1, 0, 0, 0).unwrap();
    let redemption = coupons
        .redeem(&issued, &Principal::user("u2"), "tx1".into(), now)
        .await
        .unwrap();
    assert_eq!(redemption.receipt().coupon_code, issued);

    let used = CouponCode::parse("cpn_Used0002").unwrap();
    let again = coupons.redeem(&used, &Principal::user("u2"), "tx2".into(), now).await;
    assert!(
        matches!(again, Err(TransitionError::Rejected(CouponError::AlreadyRedeemed))),
        "{again:?}"
    );
}
