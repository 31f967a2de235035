//! Sign-ins begun at an external provider: each new one clears the abandoned (expired) ones, by
//! the `expires_at` index (m20261217_000002) rather than a read of the whole table.

use crate::support;

use chrono::{TimeDelta, Utc};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement};
use svc_application::ports::external_identity::{PendingExternalSignIn, PendingExternalSignIns};
use svc_sql::hosted::SeaOrmPendingExternalSignIns;

support::backend_tests!(a_new_sign_in_clears_the_abandoned_ones);

fn pending(state_hash: &str, expires_in: TimeDelta) -> PendingExternalSignIn {
    PendingExternalSignIn {
        state_hash: state_hash.into(),
        browser_hash: "b".repeat(64),
        nonce: "nonce".into(),
        pkce_verifier: "verifier".into(),
        request_json: "{}".into(),
        client_address: Some("127.0.0.1".into()),
        expires_at: Utc::now() + expires_in,
    }
}

async fn a_new_sign_in_clears_the_abandoned_ones(db: DatabaseConnection) {
    let store = SeaOrmPendingExternalSignIns::new(db.clone());
    store
        .insert(&pending("abandoned", TimeDelta::seconds(-1)))
        .await
        .unwrap();
    store.insert(&pending("waiting", TimeDelta::minutes(10))).await.unwrap();
    store.insert(&pending("new", TimeDelta::minutes(10))).await.unwrap();
    assert!(
        store.take("abandoned").await.unwrap().is_none(),
        "cleared by the next insert"
    );
    assert!(store.take("waiting").await.unwrap().is_some(), "not yet expired: kept");
    assert!(store.take("new").await.unwrap().is_some());

    if db.get_database_backend() == DbBackend::Sqlite {
        let plan = db
            .query_all_raw(Statement::from_string(
                DbBackend::Sqlite,
                "EXPLAIN QUERY PLAN DELETE FROM external_sign_ins WHERE expires_at < '2026-01-01'".to_owned(),
            ))
            .await
            .unwrap();
        let details: Vec<String> = plan.iter().map(|row| row.try_get("", "detail").unwrap()).collect();
        assert!(
            details.iter().any(|d| d.contains("ix_external_sign_ins_expires_at")),
            "the clearing reads the index: {details:?}"
        );
    }
}
