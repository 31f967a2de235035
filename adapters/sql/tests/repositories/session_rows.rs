//! A session read back is the session written, every column: set or NULL, on the read lane
//! (PostgreSQL decodes a session row itself, not through sea-orm's derived decoding).

use chrono::{Duration, Utc};
use sea_orm::DatabaseConnection;
use serde_json::json;
use svc_application::ports::agent::{HostSession, RenderFailure, SessionRepository};
use svc_domain::contract::Contract;
use svc_domain::session::SessionStatus;
use svc_sql::ReadLane;
use svc_sql::agent::SeaOrmSessionRepository;

use crate::support;

support::backend_tests!(every_column_reads_back_as_written);

async fn every_column_reads_back_as_written(db: DatabaseConnection) {
    // No read cache: the wiring of a server database (on PostgreSQL, reads on a lane).
    let sessions = SeaOrmSessionRepository::new(db.clone()).with_read_lane(ReadLane::for_database(&db));

    let bare = support::session("bare");
    let mut full = support::session("full");
    full.blueprint_id = Some("bp_7".into());
    full.contract = Contract::try_from(json!({ "propsSpec": { "type": "object" }, "title": "full" })).unwrap();
    full.theme_id = Some("midnight".into());
    full.head.status = SessionStatus::Failed;
    full.head.epoch = 4;
    full.head.ttl_seconds = 7_200;
    full.failure = Some(RenderFailure {
        code: "GENERATION_FAILED".into(),
        message: "the model gave up".into(),
    });
    full.host = HostSession {
        host_name: Some("claude".into()),
        host_session_id: Some("conversation-9".into()),
    };
    full.context_snapshot = json!({ "slot": ["a", 1, null] });
    full.event_sequence = 12;
    full.revision = 3;
    full.created_at = Utc::now() - Duration::days(2);

    for written in [bare, full] {
        sessions.insert(&written).await.unwrap();
        let read = sessions
            .get(&written.session_id)
            .await
            .unwrap()
            .expect("the session is stored");
        // Stored times keep microseconds.
        let to_micros = |t: chrono::DateTime<Utc>| t.timestamp_micros();
        assert_eq!(to_micros(read.created_at), to_micros(written.created_at));
        assert_eq!(
            to_micros(read.head.last_activity_at),
            to_micros(written.head.last_activity_at)
        );
        let mut expected = written.clone();
        expected.created_at = read.created_at;
        expected.head.last_activity_at = read.head.last_activity_at;
        assert_eq!(read, expected, "{} reads back as written", written.session_id);
        let (with_flag, _) = sessions.get_with_undrained(&written.session_id).await.unwrap().unwrap();
        assert_eq!(
            with_flag, read,
            "the read beside the undrained flag decodes the same row"
        );
    }
}
