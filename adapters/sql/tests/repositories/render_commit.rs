//! A cache hit's render consumes its handshake and stores its session in one transaction: both
//! or neither, so a crash or a failed insert cannot leave the handshake used without a session,
//! and of two renders of one handshake only one stores a session. Through the server's wiring
//! (the group-commit writer and the pending-handshake cache on SQLite, plain transactions on the
//! server backends).

use chrono::Utc;
use sea_orm::DatabaseConnection;
use svc_application::ports::agent::{HandshakeRepository, SessionRepository};
use svc_sql::Writer;
use svc_sql::agent::{SeaOrmHandshakeRepository, SeaOrmSessionRepository};

use crate::support;

support::backend_tests!(
    the_handshake_is_consumed_with_the_session_stored,
    a_used_handshake_stores_no_second_session,
    a_session_that_cannot_be_stored_leaves_the_handshake_usable
);

fn repositories(db: &DatabaseConnection) -> (SeaOrmHandshakeRepository, SeaOrmSessionRepository) {
    let writer = Writer::for_database(db);
    let sqlite = writer.is_some();
    (
        SeaOrmHandshakeRepository::new(db.clone())
            .with_writer(writer.clone())
            .keeping_pending(sqlite),
        SeaOrmSessionRepository::new(db.clone()).with_writer(writer),
    )
}

async fn the_handshake_is_consumed_with_the_session_stored(db: DatabaseConnection) {
    let (handshakes, sessions) = repositories(&db);
    handshakes.insert(&support::handshake("hs_1")).await.unwrap();
    let at = Utc::now();
    // Every column set: on SQLite the session's row is selected into the insert, value by value.
    let session = support::full_session("s1");
    assert!(handshakes.consume_for_session("hs_1", at, &session).await.unwrap());
    let consumed = handshakes.get("hs_1").await.unwrap().unwrap().lifecycle.consumed_at;
    assert!(consumed.is_some(), "consumed");
    let stored = sessions.get("s1").await.unwrap().expect("the session is stored");
    support::assert_stored_as_written(&stored, &session);
}

async fn a_used_handshake_stores_no_second_session(db: DatabaseConnection) {
    let (handshakes, sessions) = repositories(&db);
    handshakes.insert(&support::handshake("hs_1")).await.unwrap();
    assert!(
        handshakes
            .consume_for_session("hs_1", Utc::now(), &support::session("s1"))
            .await
            .unwrap()
    );
    let second = handshakes
        .consume_for_session("hs_1", Utc::now(), &support::session("s2"))
        .await
        .unwrap();
    assert!(!second, "the second render loses");
    assert!(sessions.get("s2").await.unwrap().is_none(), "and stores nothing");
    assert_eq!(support::count_rows(&db, "sessions").await, 1);
}

async fn a_session_that_cannot_be_stored_leaves_the_handshake_usable(db: DatabaseConnection) {
    let (handshakes, sessions) = repositories(&db);
    handshakes.insert(&support::handshake("hs_1")).await.unwrap();
    // A session id already taken: the session's insert is refused.
    sessions.insert(&support::session("s1")).await.unwrap();
    let refused = handshakes
        .consume_for_session("hs_1", Utc::now(), &support::session("s1"))
        .await;
    assert!(refused.is_err(), "{refused:?}");
    let handshake = handshakes.get("hs_1").await.unwrap().unwrap();
    assert_eq!(handshake.lifecycle.consumed_at, None, "the consume was undone with it");
    assert!(
        handshakes
            .consume_for_session("hs_1", Utc::now(), &support::session("s2"))
            .await
            .unwrap()
    );
}
