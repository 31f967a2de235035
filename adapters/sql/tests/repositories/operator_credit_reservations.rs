//! SeaOrmCreditReservationRepository on every backend: a reservation is written with its charge
//! (or not at all), settling deletes it, refunding deletes it with its refund and happens once
//! however many callers race (and makes no wallet for a payer whose wallet was deleted), and the
//! sweep's listing finds only the reservations opened before its cutoff.

use crate::support;

use chrono::{DateTime, TimeZone, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use svc_application::ports::credit_reservations::{CreditReservationRepository, RefundOutcome};
use svc_application::ports::operator::{TransitionError, WalletRepository};
use svc_domain::credit_reservation::{ReservationRefund, ReservedCharge};
use svc_domain::wallet::{Principal, TransactionKind, WalletError, WalletMovement};
use svc_sql::operator::{SeaOrmCreditReservationRepository, SeaOrmWalletRepository};

support::backend_tests!(
    an_open_reservation_is_written_with_its_charge_and_settling_deletes_it,
    a_reservation_is_refunded_once,
    a_refused_or_failed_open_writes_nothing,
    the_sweep_lists_only_reservations_opened_before_its_cutoff,
    racing_refunds_of_one_reservation_write_one_refund,
    a_refund_to_a_deleted_wallet_closes_the_reservation_and_makes_no_wallet,
);

fn at(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap()
}

fn payer() -> Principal {
    Principal::org("o1")
}

fn charge(id: &str, amount: i64) -> ReservedCharge {
    ReservedCharge {
        transaction_id: id.into(),
        amount_cents: amount,
        reason: "render: builtin".into(),
        related_session_id: Some(format!("session-of-{id}")),
    }
}

fn refund(id: &str) -> ReservationRefund {
    ReservationRefund {
        transaction_id: id.into(),
        reason: "refund: the render was interrupted".into(),
    }
}

/// A wallet of `cents`, topped up.
async fn funded(db: &DatabaseConnection, cents: i64) -> SeaOrmWalletRepository {
    let wallets = SeaOrmWalletRepository::new(db.clone());
    let topup = WalletMovement {
        transaction_id: "topup".into(),
        kind: TransactionKind::Topup,
        amount_cents: cents,
        reason: "topup".into(),
        related_session_id: None,
    };
    wallets.apply(&payer(), topup, at(0)).await.unwrap();
    wallets
}

async fn balance(wallets: &SeaOrmWalletRepository) -> i64 {
    wallets.get(&payer()).await.unwrap().unwrap().balance_cents
}

/// The payer's ledger, oldest first: (transaction id, kind, delta).
async fn ledger(wallets: &SeaOrmWalletRepository) -> Vec<(String, TransactionKind, i64)> {
    let page = wallets.list_ledger(&payer(), 100, None).await.unwrap();
    page.entries
        .into_iter()
        .rev()
        .map(|e| (e.transaction_id, e.kind, e.delta_cents))
        .collect()
}

async fn an_open_reservation_is_written_with_its_charge_and_settling_deletes_it(db: DatabaseConnection) {
    let wallets = funded(&db, 100).await;
    let reservations = SeaOrmCreditReservationRepository::new(db.clone());
    let opened = reservations.open(&payer(), charge("c1", 30), at(1)).await.unwrap();
    assert_eq!(
        (
            opened.transaction_id.as_str(),
            &opened.principal,
            opened.amount_cents,
            opened.opened_at
        ),
        ("c1", &payer(), 30, at(1))
    );
    assert_eq!(balance(&wallets).await, 70);
    assert_eq!(
        ledger(&wallets).await.last().unwrap(),
        &("c1".to_owned(), TransactionKind::RenderCharge, -30)
    );
    let stored = reservations.opened_before(at(2), 10).await.unwrap();
    assert_eq!(stored, [opened], "read back as written");

    assert!(reservations.settle("c1").await.unwrap());
    assert_eq!(support::count_rows(&db, "credit_reservations").await, 0);
    assert!(
        !reservations.settle("c1").await.unwrap(),
        "a second settle finds nothing"
    );
    assert_eq!(
        reservations.refund("c1", refund("r1"), at(3)).await.unwrap(),
        RefundOutcome::NotOpen,
        "a settled reservation is never refunded"
    );
    assert_eq!(balance(&wallets).await, 70, "the charge stands");
    assert_eq!(ledger(&wallets).await.len(), 2);
}

async fn a_reservation_is_refunded_once(db: DatabaseConnection) {
    let wallets = funded(&db, 100).await;
    let reservations = SeaOrmCreditReservationRepository::new(db.clone());
    reservations.open(&payer(), charge("c1", 30), at(1)).await.unwrap();
    let RefundOutcome::Refunded(refunded) = reservations.refund("c1", refund("r1"), at(2)).await.unwrap() else {
        panic!("the open reservation is refunded");
    };
    assert_eq!(
        (refunded.kind, refunded.delta_cents, refunded.balance_after_cents),
        (TransactionKind::Refund, 30, 100)
    );
    assert_eq!(refunded.related_session_id.as_deref(), Some("session-of-c1"));
    assert_eq!(refunded.reason, "refund: the render was interrupted");
    assert_eq!(support::count_rows(&db, "credit_reservations").await, 0);

    assert_eq!(
        reservations.refund("c1", refund("r2"), at(3)).await.unwrap(),
        RefundOutcome::NotOpen
    );
    assert!(!reservations.settle("c1").await.unwrap());
    let wallet = wallets.get(&payer()).await.unwrap().unwrap();
    assert_eq!((wallet.balance_cents, wallet.lifetime_spent_cents), (100, 0));
    assert_eq!(
        ledger(&wallets).await,
        [
            ("topup".to_owned(), TransactionKind::Topup, 100),
            ("c1".to_owned(), TransactionKind::RenderCharge, -30),
            ("r1".to_owned(), TransactionKind::Refund, 30),
        ]
    );
}

async fn a_refused_or_failed_open_writes_nothing(db: DatabaseConnection) {
    let wallets = funded(&db, 10).await;
    let reservations = SeaOrmCreditReservationRepository::new(db.clone());
    let refused = reservations.open(&payer(), charge("c1", 11), at(1)).await.unwrap_err();
    assert!(
        matches!(
            refused,
            TransitionError::Rejected(WalletError::InsufficientCredit { .. })
        ),
        "{refused:?}"
    );
    assert_eq!(support::count_rows(&db, "credit_reservations").await, 0);
    assert_eq!(support::count_rows(&db, "ledger_entries").await, 1);

    // A reservation that cannot be stored (its id taken, its charge's ledger row gone) takes
    // its charge down with it: the charge and the reservation are one transaction.
    reservations.open(&payer(), charge("c2", 4), at(2)).await.unwrap();
    let backend = db.get_database_backend();
    db.execute_raw(Statement::from_string(
        backend,
        "DELETE FROM ledger_entries WHERE transaction_id = 'c2'",
    ))
    .await
    .unwrap();
    let before = balance(&wallets).await;
    reservations
        .open(&payer(), charge("c2", 4), at(3))
        .await
        .expect_err("the reservation's id is taken");
    assert_eq!(balance(&wallets).await, before, "the charge was rolled back");
    assert_eq!(support::count_rows(&db, "ledger_entries").await, 1);
}

async fn the_sweep_lists_only_reservations_opened_before_its_cutoff(db: DatabaseConnection) {
    funded(&db, 100).await;
    let reservations = SeaOrmCreditReservationRepository::new(db.clone());
    for (id, second) in [("c3", 3), ("c1", 1), ("c5", 5), ("c2", 2), ("c4", 4)] {
        reservations.open(&payer(), charge(id, 1), at(second)).await.unwrap();
    }
    assert!(reservations.settle("c2").await.unwrap());
    let refunded = reservations.refund("c1", refund("r1"), at(6)).await.unwrap();
    assert!(matches!(refunded, RefundOutcome::Refunded(_)), "{refunded:?}");
    let ids = |found: Vec<svc_domain::credit_reservation::CreditReservation>| {
        found.into_iter().map(|r| r.transaction_id).collect::<Vec<_>>()
    };
    assert_eq!(
        ids(reservations.opened_before(at(5), 10).await.unwrap()),
        ["c3", "c4"],
        "open ones opened before the cutoff, oldest first; not c5, opened at it"
    );
    assert_eq!(ids(reservations.opened_before(at(9), 2).await.unwrap()), ["c3", "c4"]);
    assert!(reservations.opened_before(at(3), 10).await.unwrap().is_empty());
}

async fn racing_refunds_of_one_reservation_write_one_refund(db: DatabaseConnection) {
    let wallets = funded(&db, 100).await;
    SeaOrmCreditReservationRepository::new(db.clone())
        .open(&payer(), charge("c1", 30), at(1))
        .await
        .unwrap();
    let racers = (0..6)
        .map(|n| {
            let reservations = SeaOrmCreditReservationRepository::new(db.clone());
            tokio::spawn(async move { reservations.refund("c1", refund(&format!("r{n}")), at(2)).await })
        })
        .collect::<Vec<_>>();
    let mut refunded = 0;
    for racer in racers {
        match racer.await.unwrap() {
            Ok(RefundOutcome::Refunded(_)) => refunded += 1,
            Ok(RefundOutcome::NotOpen) => {}
            other => panic!("{other:?}"),
        }
    }
    assert_eq!(refunded, 1, "whoever deleted the reservation refunded it; no one else");
    let refunds = "SELECT COUNT(*) AS n FROM ledger_entries WHERE kind = 'refund'";
    let row = db
        .query_one_raw(Statement::from_string(db.get_database_backend(), refunds))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(row.try_get::<i64>("", "n").unwrap(), 1);
    assert_eq!(balance(&wallets).await, 100);

    // A settle and a refund racing: one of them takes the reservation.
    let reservations = SeaOrmCreditReservationRepository::new(db.clone());
    reservations.open(&payer(), charge("c2", 30), at(3)).await.unwrap();
    let settling = SeaOrmCreditReservationRepository::new(db.clone());
    let (settled, refunded) = tokio::join!(
        tokio::spawn(async move { settling.settle("c2").await.unwrap() }),
        reservations.refund("c2", refund("r-c2"), at(4)),
    );
    let refunded = matches!(refunded.unwrap(), RefundOutcome::Refunded(_));
    let settled = settled.unwrap();
    assert!(settled != refunded, "settled {settled}, refunded {refunded}");
    assert_eq!(balance(&wallets).await, if settled { 70 } else { 100 });
}

/// A payer's wallet deleted while its render ran (its account or org removed by hand): the
/// refund closes the reservation and writes nothing; no wallet row comes back.
async fn a_refund_to_a_deleted_wallet_closes_the_reservation_and_makes_no_wallet(db: DatabaseConnection) {
    let wallets = funded(&db, 100).await;
    let reservations = SeaOrmCreditReservationRepository::new(db.clone());
    reservations.open(&payer(), charge("c1", 30), at(1)).await.unwrap();
    db.execute_raw(Statement::from_string(
        db.get_database_backend(),
        "DELETE FROM wallets WHERE principal_type = 'org' AND principal_id = 'o1'",
    ))
    .await
    .unwrap();
    let ledger_before = support::count_rows(&db, "ledger_entries").await;

    assert_eq!(
        reservations.refund("c1", refund("r1"), at(2)).await.unwrap(),
        RefundOutcome::PayerGone
    );
    assert_eq!(
        wallets.get(&payer()).await.unwrap(),
        None,
        "no wallet made for the refund"
    );
    assert_eq!(support::count_rows(&db, "credit_reservations").await, 0, "closed");
    assert_eq!(
        support::count_rows(&db, "ledger_entries").await,
        ledger_before,
        "no refund row"
    );
    assert_eq!(
        reservations.refund("c1", refund("r2"), at(3)).await.unwrap(),
        RefundOutcome::NotOpen,
        "closed once"
    );
}
