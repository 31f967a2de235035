//! SeaOrmWalletRepository on every backend: movements and their ledger rows are written
//! together, the balance never goes negative even under concurrent charges, and the ledger
//! pages newest first.

use crate::support;

use chrono::{DateTime, TimeZone, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::operator::{TransitionError, WalletRepository};
use svc_domain::wallet::{Principal, TransactionKind, WalletError, WalletMovement};
use svc_sql::operator::SeaOrmWalletRepository;

support::backend_tests!(
    movements_update_the_wallet_and_write_the_ledger,
    a_refused_charge_writes_nothing,
    concurrent_charges_never_overdraw,
    the_ledger_pages_newest_first,
);

fn at(second: u32) -> DateTime<Utc> {
    Utc.with_ymd_and_hms(2026, 1, 1, 0, 0, second).unwrap()
}

fn movement(id: &str, kind: TransactionKind, amount: i64) -> WalletMovement {
    WalletMovement {
        transaction_id: id.into(),
        kind,
        amount_cents: amount,
        reason: format!("{} of {amount}", kind.as_str()),
        related_session_id: (kind == TransactionKind::RenderCharge).then(|| "session-1".to_owned()),
    }
}

fn user() -> Principal {
    Principal::user("u1")
}

async fn movements_update_the_wallet_and_write_the_ledger(db: DatabaseConnection) {
    let wallets = SeaOrmWalletRepository::new(db.clone());
    assert_eq!(wallets.get(&user()).await.unwrap(), None);
    wallets
        .apply(&user(), movement("t1", TransactionKind::Topup, 1_000), at(1))
        .await
        .unwrap();
    let (_, charge) = wallets
        .apply(&user(), movement("t2", TransactionKind::RenderCharge, 300), at(2))
        .await
        .unwrap();
    let (after, _) = wallets
        .apply(&user(), movement("t3", TransactionKind::Refund, 100), at(3))
        .await
        .unwrap();

    let stored = wallets.get(&user()).await.unwrap().unwrap();
    assert_eq!(stored, after);
    assert_eq!(
        (
            stored.balance_cents,
            stored.lifetime_granted_cents,
            stored.lifetime_spent_cents,
            stored.updated_at
        ),
        (800, 1_000, 200, at(3))
    );
    let ledger = wallets.list_ledger(&user(), 10, None).await.unwrap();
    let deltas = ledger
        .entries
        .iter()
        .map(|e| (e.transaction_id.as_str(), e.delta_cents, e.balance_after_cents));
    assert_eq!(
        deltas.collect::<Vec<_>>(),
        vec![("t3", 100, 800), ("t2", -300, 700), ("t1", 1_000, 1_000)]
    );
    assert_eq!(ledger.entries[1], charge);
    assert_eq!(ledger.entries[1].related_session_id.as_deref(), Some("session-1"));
    assert_eq!(ledger.next_before, None);
}

async fn a_refused_charge_writes_nothing(db: DatabaseConnection) {
    let wallets = SeaOrmWalletRepository::new(db.clone());
    wallets
        .apply(&user(), movement("t1", TransactionKind::FreeCredit, 50), at(1))
        .await
        .unwrap();
    let refused = wallets
        .apply(&user(), movement("t2", TransactionKind::RenderCharge, 51), at(2))
        .await
        .unwrap_err();
    assert!(
        matches!(
            refused,
            TransitionError::Rejected(WalletError::InsufficientCredit { .. })
        ),
        "{refused:?}"
    );
    assert_eq!(wallets.get(&user()).await.unwrap().unwrap().balance_cents, 50);
    assert_eq!(support::count_rows(&db, "ledger_entries").await, 1);

    let stranger = Principal::user("nobody");
    assert!(
        wallets
            .apply(&stranger, movement("t3", TransactionKind::RenderCharge, 1), at(3))
            .await
            .is_err()
    );
    assert_eq!(
        wallets.get(&stranger).await.unwrap(),
        None,
        "a refused first movement opens no wallet"
    );
}

async fn concurrent_charges_never_overdraw(db: DatabaseConnection) {
    let wallets = SeaOrmWalletRepository::new(db.clone());
    wallets
        .apply(&user(), movement("grant", TransactionKind::Topup, 100), at(1))
        .await
        .unwrap();
    let charges = (0..8)
        .map(|n| {
            let wallets = SeaOrmWalletRepository::new(db.clone());
            tokio::spawn(async move {
                wallets
                    .apply(
                        &user(),
                        movement(&format!("charge{n}"), TransactionKind::RenderCharge, 30),
                        at(2),
                    )
                    .await
            })
        })
        .collect::<Vec<_>>();
    let mut charged = 0;
    for charge in charges {
        match charge.await.unwrap() {
            Ok(_) => charged += 1,
            Err(TransitionError::Rejected(WalletError::InsufficientCredit { .. })) => {}
            Err(other) => panic!("{other:?}"),
        }
    }
    assert_eq!(charged, 3);
    let wallet = wallets.get(&user()).await.unwrap().unwrap();
    assert_eq!((wallet.balance_cents, wallet.lifetime_spent_cents), (10, 90));
    assert_eq!(support::count_rows(&db, "ledger_entries").await, 4);
}

async fn the_ledger_pages_newest_first(db: DatabaseConnection) {
    let wallets = SeaOrmWalletRepository::new(db.clone());
    for n in 1..=5 {
        wallets
            .apply(
                &user(),
                movement(&format!("t{n}"), TransactionKind::Topup, n),
                at(n as u32),
            )
            .await
            .unwrap();
    }
    wallets
        .apply(
            &Principal::org("o1"),
            movement("other", TransactionKind::Topup, 9),
            at(9),
        )
        .await
        .unwrap();

    let mut seen = Vec::new();
    let mut before = None;
    loop {
        let page = wallets.list_ledger(&user(), 2, before).await.unwrap();
        seen.push(page.entries.iter().map(|e| e.delta_cents).collect::<Vec<_>>());
        match page.next_before {
            Some(next) => before = Some(next),
            None => break,
        }
    }
    assert_eq!(seen, vec![vec![5, 4], vec![3, 2], vec![1]]);
    let exact = wallets.list_ledger(&user(), 5, None).await.unwrap();
    assert_eq!((exact.entries.len(), exact.next_before), (5, None));
}
