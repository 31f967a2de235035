//! Session reads over in-memory fakes, when another writer moves the session between a read's
//! look and what it does next: `svc_get_session`'s heartbeat, and `svc_consume`'s first look at
//! the gestures.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};
use svc_domain::session::{FrozenCard, SessionHead};

use super::*;
use crate::ports::RepositoryError;
use crate::ports::agent::{
    EventBus, EventRepository, LiveEvent, NewActionEvent, SessionListing, SessionQuery, SessionRecord,
    SessionRepository,
};
use crate::testing::AgentFakes;

/// The fakes' store with another writer cutting in: a heartbeat stamped `rival_at` landing
/// just before each of the next `rivals` saves, and a gesture stored and announced just after
/// the combined look when `gesture_after_look` (which then answers from before it).
struct CutIn {
    inner: Arc<crate::testing::InMemoryAgentStore>,
    bus: Arc<dyn EventBus>,
    rival_at: DateTime<Utc>,
    rivals: AtomicUsize,
    gesture_after_look: bool,
}

impl CutIn {
    fn over(fakes: &AgentFakes) -> Self {
        Self {
            inner: fakes.store.clone(),
            bus: fakes.bus.clone(),
            rival_at: fakes.clock.now(),
            rivals: AtomicUsize::new(0),
            gesture_after_look: false,
        }
    }
}

#[async_trait::async_trait]
impl SessionRepository for CutIn {
    async fn insert(&self, record: &SessionRecord) -> Result<(), RepositoryError> {
        SessionRepository::insert(self.inner.as_ref(), record).await
    }

    async fn get(&self, session_id: &str) -> Result<Option<SessionRecord>, RepositoryError> {
        SessionRepository::get(self.inner.as_ref(), session_id).await
    }

    async fn get_with_undrained(
        &self,
        session_id: &str,
    ) -> Result<Option<(std::sync::Arc<SessionRecord>, Option<bool>)>, RepositoryError> {
        let look = self.inner.get_with_undrained(session_id).await?;
        if self.gesture_after_look {
            let gesture = NewActionEvent {
                session_id: session_id.to_owned(),
                client_seq: Some(1),
                intent: "approve".into(),
                action_data: json!({}),
                ui_context: json!({}),
                fired_at: Utc::now(),
            };
            self.inner.append_action(&gesture).await?;
            self.bus.publish(LiveEvent::ActionStored {
                session_id: session_id.to_owned(),
            });
        }
        Ok(look)
    }

    async fn save_head(
        &self,
        session_id: &str,
        revision: i64,
        head: &SessionHead,
        frozen: Option<&FrozenCard>,
    ) -> Result<bool, RepositoryError> {
        if self
            .rivals
            .fetch_update(Ordering::SeqCst, Ordering::SeqCst, |n| n.checked_sub(1))
            .is_ok()
        {
            let mut rival = head.clone();
            rival.last_activity_at = self.rival_at;
            assert!(self.inner.save_head(session_id, revision, &rival, None).await?);
        }
        self.inner.save_head(session_id, revision, head, frozen).await
    }

    async fn frozen_props(&self, session_id: &str, epoch: u32) -> Result<Option<Value>, RepositoryError> {
        self.inner.frozen_props(session_id, epoch).await
    }

    async fn set_context_snapshot(&self, session_id: &str, snapshot: &Value) -> Result<(), RepositoryError> {
        self.inner.set_context_snapshot(session_id, snapshot).await
    }

    async fn list(&self, app_id: &str, query: &SessionQuery) -> Result<Vec<SessionListing>, RepositoryError> {
        SessionRepository::list(self.inner.as_ref(), app_id, query).await
    }
}

/// The session as the fakes' store holds it.
async fn stored(fakes: &AgentFakes, session_id: &str) -> SessionRecord {
    SessionRepository::get(fakes.store.as_ref(), session_id)
        .await
        .unwrap()
        .expect("the session is stored")
}

fn with_sessions(fakes: &AgentFakes, sessions: Arc<dyn SessionRepository>) -> AgentService {
    let mut ports = fakes.ports();
    ports.sessions = sessions;
    AgentService::new(
        ports,
        AgentFakes::settings(),
        GenerationQueue::new(1, 1, Duration::from_secs(1)),
    )
}

/// A rendered session on the fakes' store.
async fn a_session(service: &AgentService, caller: &Caller) -> String {
    let draft = HandshakeCommand {
        intent: "a status card".into(),
        contract: json!({ "propsSpec": { "type": "object" } }),
        variance: None,
        generator: None,
        force_create: false,
    };
    let HandshakeOutcome::Agreed(reply) = service.handshake(caller, draft).await.unwrap() else {
        panic!("the draft was declined");
    };
    let render = RenderCommand {
        handshake_id: reply.handshake_id.clone(),
        props: json!({}),
        theme_id: None,
        model: None,
        override_: None,
        ttl_seconds: None,
        host: Default::default(),
        origin: None,
        progress: None,
    };
    match service.render(caller, render).await.unwrap() {
        RenderResult::Rendered { identity, .. } => identity.session_id,
        other => panic!("not rendered: {other:?}"),
    }
}

#[tokio::test]
async fn a_read_that_loses_its_heartbeat_to_another_writer_reports_what_that_writer_stored() {
    let fakes = AgentFakes::default();
    let caller = AgentFakes::caller("app-1");
    let session_id = a_session(&fakes.service(), &caller).await;
    fakes.clock.advance(TimeDelta::seconds(5));
    let rival_at = fakes.clock.now() - TimeDelta::milliseconds(300);
    let raced = with_sessions(
        &fakes,
        Arc::new(CutIn {
            rival_at,
            rivals: AtomicUsize::new(usize::MAX),
            ..CutIn::over(&fakes)
        }),
    );

    let view = raced.get_session(&caller, &session_id).await.unwrap();

    let stored = stored(&fakes, &session_id).await;
    assert_eq!(stored.head.last_activity_at, rival_at, "the rival's write stands");
    assert_eq!(view.last_activity_at, rival_at, "the read reports what is stored");
    assert_eq!(
        view.expires_at,
        rival_at + TimeDelta::seconds(stored.head.ttl_seconds as i64)
    );
}

#[tokio::test]
async fn a_read_that_loses_to_a_writer_a_second_behind_it_beats_again() {
    let fakes = AgentFakes::default();
    let caller = AgentFakes::caller("app-1");
    let session_id = a_session(&fakes.service(), &caller).await;
    fakes.clock.advance(TimeDelta::seconds(10));
    let now = fakes.clock.now();
    let raced = with_sessions(
        &fakes,
        Arc::new(CutIn {
            rival_at: now - TimeDelta::seconds(3),
            rivals: AtomicUsize::new(1),
            ..CutIn::over(&fakes)
        }),
    );

    let view = raced.get_session(&caller, &session_id).await.unwrap();

    let stored = stored(&fakes, &session_id).await;
    assert_eq!(
        stored.head.last_activity_at, now,
        "the second try wrote the read's own time"
    );
    assert_eq!(view.last_activity_at, now);
}

#[tokio::test]
async fn a_gesture_stored_just_after_consumes_first_look_wakes_its_long_poll() {
    let fakes = AgentFakes::default();
    let caller = AgentFakes::caller("app-1");
    let session_id = a_session(&fakes.service(), &caller).await;
    let raced = with_sessions(
        &fakes,
        Arc::new(CutIn {
            gesture_after_look: true,
            ..CutIn::over(&fakes)
        }),
    );

    let reply = raced.consume(&caller, &session_id, 5).await.unwrap();

    // Missed, the poll would answer empty when its five seconds ran out.
    assert_eq!(reply.events.len(), 1, "the gesture, not an empty answer at the timeout");
    assert_eq!(reply.events[0].intent, "approve");
}
