//! Issued handshakes kept in memory until a render consumes them (a server that alone writes its
//! database): a render reads the handshake its handshake call just stored without a query, and a
//! consume or a release is seen by the next read.

use crate::support;

use chrono::Utc;
use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use svc_application::ports::agent::HandshakeRepository;
use svc_sql::agent::SeaOrmHandshakeRepository;

support::backend_tests!(
    an_issued_handshake_is_read_from_memory_until_a_render_consumes_it,
    without_keeping_a_read_sees_the_row
);

/// Marks the row consumed behind the repository's back, as another writer would.
async fn consume_behind_its_back(db: &DatabaseConnection, id: &str) {
    let backend = db.get_database_backend();
    let sql = format!("UPDATE handshakes SET consumed_at = created_at WHERE handshake_id = '{id}'");
    db.execute_raw(Statement::from_string(backend, sql)).await.unwrap();
}

async fn consumed(repository: &SeaOrmHandshakeRepository, id: &str) -> bool {
    let record = repository.get(id).await.unwrap().expect("the handshake is there");
    record.lifecycle.consumed_at.is_some()
}

async fn an_issued_handshake_is_read_from_memory_until_a_render_consumes_it(db: DatabaseConnection) {
    let repository = SeaOrmHandshakeRepository::new(db.clone()).keeping_pending(true);
    repository.insert(&support::handshake("hs_1")).await.unwrap();
    consume_behind_its_back(&db, "hs_1").await;
    assert!(
        !consumed(&repository, "hs_1").await,
        "the issued handshake is answered from memory (so only a sole writer may keep them)"
    );

    // A render's consume forgets it: the next read is the row's.
    assert!(
        !repository.consume("hs_1", Utc::now()).await.unwrap(),
        "the row was consumed first"
    );
    assert!(consumed(&repository, "hs_1").await);

    repository.insert(&support::handshake("hs_2")).await.unwrap();
    assert!(repository.consume("hs_2", Utc::now()).await.unwrap());
    assert!(
        consumed(&repository, "hs_2").await,
        "a consumed handshake reads consumed"
    );
    repository.release("hs_2").await.unwrap();
    assert!(
        !consumed(&repository, "hs_2").await,
        "a released handshake reads usable again"
    );
    assert!(repository.get("hs_unknown").await.unwrap().is_none());
}

async fn without_keeping_a_read_sees_the_row(db: DatabaseConnection) {
    let repository = SeaOrmHandshakeRepository::new(db.clone());
    repository.insert(&support::handshake("hs_1")).await.unwrap();
    consume_behind_its_back(&db, "hs_1").await;
    assert!(consumed(&repository, "hs_1").await);
}
