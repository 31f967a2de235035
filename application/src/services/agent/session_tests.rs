//! `svc_get_session` over in-memory fakes: what a read reports when another writer moves the
//! session between the read and its heartbeat.

use std::sync::Arc;

use chrono::{DateTime, TimeDelta, Utc};
use serde_json::{Value, json};
use svc_domain::session::{FrozenCard, SessionHead};

use super::*;
use crate::ports::RepositoryError;
use crate::ports::agent::{SessionQuery, SessionRecord, SessionRepository};
use crate::testing::AgentFakes;

/// A store where another writer's heartbeat, stamped `rival_at`, lands just before each save.
struct RivalBeforeSave {
    inner: Arc<dyn SessionRepository>,
    rival_at: DateTime<Utc>,
}

#[async_trait::async_trait]
impl SessionRepository for RivalBeforeSave {
    async fn insert(&self, record: &SessionRecord) -> Result<(), RepositoryError> {
        self.inner.insert(record).await
    }
    async fn get(&self, session_id: &str) -> Result<Option<SessionRecord>, RepositoryError> {
        self.inner.get(session_id).await
    }
    async fn save_head(
        &self,
        session_id: &str,
        revision: i64,
        head: &SessionHead,
        frozen: Option<&FrozenCard>,
    ) -> Result<bool, RepositoryError> {
        let mut rival = head.clone();
        rival.last_activity_at = self.rival_at;
        assert!(self.inner.save_head(session_id, revision, &rival, None).await?);
        self.inner.save_head(session_id, revision, head, frozen).await
    }
    async fn frozen_props(&self, session_id: &str, epoch: u32) -> Result<Option<Value>, RepositoryError> {
        self.inner.frozen_props(session_id, epoch).await
    }
    async fn set_context_snapshot(&self, session_id: &str, snapshot: &Value) -> Result<(), RepositoryError> {
        self.inner.set_context_snapshot(session_id, snapshot).await
    }
    async fn list(&self, app_id: &str, query: &SessionQuery) -> Result<Vec<SessionRecord>, RepositoryError> {
        self.inner.list(app_id, query).await
    }
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
    let mut ports = fakes.ports();
    ports.sessions = Arc::new(RivalBeforeSave {
        inner: fakes.store.clone(),
        rival_at,
    });
    let raced = AgentService::new(
        ports,
        AgentFakes::settings(),
        GenerationQueue::new(1, 1, std::time::Duration::from_secs(1)),
    );

    let view = raced.get_session(&caller, &session_id).await.unwrap();

    let stored = SessionRepository::get(fakes.store.as_ref(), &session_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.head.last_activity_at, rival_at, "the rival's write stands");
    assert_eq!(view.last_activity_at, rival_at, "the read reports what is stored");
    assert_eq!(
        view.expires_at,
        rival_at + TimeDelta::seconds(stored.head.ttl_seconds as i64)
    );
}
