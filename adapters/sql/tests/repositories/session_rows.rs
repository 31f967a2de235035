//! A session read back is the session written, every column: set or NULL, on the read lane
//! (PostgreSQL decodes a session row itself, not through sea-orm's derived decoding).

use sea_orm::DatabaseConnection;
use svc_application::ports::agent::{SessionListing, SessionQuery, SessionRepository};
use svc_sql::ReadLane;
use svc_sql::agent::SeaOrmSessionRepository;

use crate::support;

support::backend_tests!(
    every_column_reads_back_as_written,
    a_listing_shows_what_the_record_holds
);

async fn every_column_reads_back_as_written(db: DatabaseConnection) {
    // No read cache: the wiring of a server database (on PostgreSQL, reads on a lane).
    let sessions = SeaOrmSessionRepository::new(db.clone()).with_read_lane(ReadLane::for_database(&db));

    let bare = support::session("bare");
    let full = support::full_session("full");

    for written in [bare, full] {
        sessions.insert(&written).await.unwrap();
        let read = sessions
            .get(&written.session_id)
            .await
            .unwrap()
            .expect("the session is stored");
        support::assert_stored_as_written(&read, &written);
        let (with_flag, _) = sessions.get_with_undrained(&written.session_id).await.unwrap().unwrap();
        assert_eq!(
            *with_flag, read,
            "the read beside the undrained flag decodes the same row"
        );
    }
}

/// `svc_list_sessions` reads only the columns it shows (not the JSON): each as written, the
/// newest last, filtered by host.
async fn a_listing_shows_what_the_record_holds(db: DatabaseConnection) {
    let sessions = SeaOrmSessionRepository::new(db.clone()).with_read_lane(ReadLane::for_database(&db));
    let full = support::full_session("older-full");
    let bare = support::session("newer-bare");
    for written in [&full, &bare] {
        sessions.insert(written).await.unwrap();
    }
    let everything = SessionQuery {
        limit: 10,
        ..SessionQuery::default()
    };
    let listed = sessions.list("app_1", &everything).await.unwrap();
    let micros = |listing: &SessionListing| {
        (
            listing.created_at.timestamp_micros(),
            listing.last_activity_at.timestamp_micros(),
        )
    };
    let expected: Vec<SessionListing> = [&full, &bare].into_iter().map(SessionListing::of).collect();
    assert_eq!(listed.len(), 2, "{listed:?}");
    for (read, written) in listed.iter().zip(&expected) {
        assert_eq!(micros(read), micros(written));
        let without_times = |l: &SessionListing| SessionListing {
            created_at: chrono::DateTime::UNIX_EPOCH,
            last_activity_at: chrono::DateTime::UNIX_EPOCH,
            ..l.clone()
        };
        assert_eq!(without_times(read), without_times(written));
    }
    let by_host = SessionQuery {
        host_name: Some("claude".into()),
        limit: 10,
        ..SessionQuery::default()
    };
    let listed = sessions.list("app_1", &by_host).await.unwrap();
    assert_eq!(
        listed.iter().map(|l| l.session_id.as_str()).collect::<Vec<_>>(),
        ["older-full"]
    );
    let newest = SessionQuery {
        limit: 1,
        ..SessionQuery::default()
    };
    let listed = sessions.list("app_1", &newest).await.unwrap();
    assert_eq!(
        listed.iter().map(|l| l.session_id.as_str()).collect::<Vec<_>>(),
        ["newer-bare"]
    );
    assert!(sessions.list("app_2", &everything).await.unwrap().is_empty());
}
