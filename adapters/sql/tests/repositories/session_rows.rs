//! A session read back is the session written, every column: set or NULL, on the read lane
//! (PostgreSQL decodes a session row itself, not through sea-orm's derived decoding).

use sea_orm::DatabaseConnection;
use svc_application::ports::agent::SessionRepository;
use svc_sql::ReadLane;
use svc_sql::agent::SeaOrmSessionRepository;

use crate::support;

support::backend_tests!(every_column_reads_back_as_written);

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
