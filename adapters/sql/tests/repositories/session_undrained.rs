//! `SessionRepository::get_with_undrained`: on a server database the session and "a gesture
//! waits" come from one statement, and the answer follows every gesture stored and drained.

use chrono::Utc;
use sea_orm::DatabaseConnection;
use serde_json::json;
use svc_application::ports::agent::{EventRepository, NewActionEvent, SessionRepository};
use svc_application::services::agent::DRAIN_BOUND;
use svc_sql::ReadLane;
use svc_sql::agent::{SeaOrmEventRepository, SeaOrmSessionRepository};

use crate::support;

support::backend_tests!(the_undrained_flag_follows_gestures_stored_and_drained);

fn gesture(id: &str, intent: &str) -> NewActionEvent {
    NewActionEvent {
        session_id: id.into(),
        client_seq: None,
        intent: intent.into(),
        action_data: json!({ "from": intent }),
        ui_context: json!({}),
        fired_at: Utc::now(),
    }
}

async fn the_undrained_flag_follows_gestures_stored_and_drained(db: DatabaseConnection) {
    // No read cache: the wiring of a server database (on PostgreSQL, reads on a lane).
    let lane = ReadLane::for_database(&db);
    let sessions = SeaOrmSessionRepository::new(db.clone()).with_read_lane(lane.clone());
    let events = SeaOrmEventRepository::new(db.clone()).with_read_lane(lane);
    sessions.insert(&support::session("s1")).await.unwrap();
    sessions.insert(&support::session("s2")).await.unwrap();

    let (read, undrained) = sessions.get_with_undrained("s1").await.unwrap().unwrap();
    assert_eq!(
        *read,
        sessions.get("s1").await.unwrap().unwrap(),
        "the same row as a plain read"
    );
    assert_eq!(undrained, Some(false));

    events.append_action(&gesture("s1", "approve")).await.unwrap();
    events.append_action(&gesture("s1", "reject")).await.unwrap();
    let (read, undrained) = sessions.get_with_undrained("s1").await.unwrap().unwrap();
    assert_eq!(undrained, Some(true));
    assert_eq!(read.event_sequence, 2);
    assert_eq!(
        sessions.get_with_undrained("s2").await.unwrap().unwrap().1,
        Some(false),
        "another session's gestures are not this one's"
    );

    assert_eq!(events.drain("s1", Utc::now(), DRAIN_BOUND).await.unwrap().len(), 2);
    assert_eq!(sessions.get_with_undrained("s1").await.unwrap().unwrap().1, Some(false));
    assert!(sessions.get_with_undrained("unknown").await.unwrap().is_none());
}
