use std::time::Duration;

use serde_json::Value;
use svc_domain::session::SessionStatus;
use tokio::sync::broadcast::error::RecvError;

use std::sync::Arc;

use super::{AgentError, Caller, SessionAccess};
use crate::ports::agent::{ActionEventRecord, EventBus, EventRepository, LiveEvent};

/// Longest `svc_consume` long-poll, in seconds.
pub const MAX_CONSUME_TIMEOUT_SECONDS: u64 = 25;

#[derive(Debug, Clone)]
pub struct ConsumeReply {
    pub events: Vec<ActionEventRecord>,
    /// `Active` or `Expired` (a failed render reports `Expired`: it will never see a gesture).
    pub status: SessionStatus,
    pub client: Option<Value>,
}

/// `svc_consume`: drains a session's gestures, long-polling for the first one.
#[derive(Clone)]
pub struct ConsumeService {
    pub access: SessionAccess,
    pub events: Arc<dyn EventRepository>,
    pub bus: Arc<dyn EventBus>,
}

impl ConsumeService {
    /// Drains the session's gestures, waiting up to `timeout_seconds` for the first one. Waiting
    /// listens on the event bus, so an arriving gesture wakes it at once and nothing polls.
    pub async fn consume(
        &self,
        caller: &Caller,
        session_id: &str,
        timeout_seconds: u64,
    ) -> Result<ConsumeReply, AgentError> {
        if timeout_seconds > MAX_CONSUME_TIMEOUT_SECONDS {
            return Err(AgentError::invalid(
                "timeout",
                format!("must be an integer from 0 to {MAX_CONSUME_TIMEOUT_SECONDS}"),
            ));
        }
        // Only what the reply needs is kept: a long-poll holds no session record while it waits.
        let (status, client) = {
            // Database calls are boxed: a waiting long-poll's future is sized for the wait,
            // not for the queries it ran before and after it (issue 18: memory per long-poll).
            let session = Box::pin(self.access.owned(caller, session_id)).await?;
            let status = match session.head.status_at(self.access.clock.now()) {
                SessionStatus::Active => SessionStatus::Active,
                SessionStatus::Expired | SessionStatus::Failed => SessionStatus::Expired,
            };
            (status, session.client_context())
        };
        // Subscribe before the first drain so a gesture stored in between still wakes us.
        let mut wake = self.bus.subscribe(session_id);
        let mut events = Box::pin(self.drain(session_id)).await?;
        if events.is_empty() && status == SessionStatus::Active && timeout_seconds > 0 {
            let deadline = tokio::time::Instant::now() + Duration::from_secs(timeout_seconds);
            loop {
                let look = match tokio::time::timeout_at(deadline, wake.recv()).await {
                    Err(_) | Ok(Err(RecvError::Closed)) => break,
                    Ok(Ok(published)) => matches!(published.event(), LiveEvent::ActionStored { .. }),
                    // Behind: a gesture may be among the missed events.
                    Ok(Err(RecvError::Lagged(_))) => true,
                };
                if look {
                    events = Box::pin(self.drain(session_id)).await?;
                    if !events.is_empty() {
                        break;
                    }
                }
            }
        }
        Ok(ConsumeReply { events, status, client })
    }

    async fn drain(&self, session_id: &str) -> Result<Vec<ActionEventRecord>, AgentError> {
        let events = self.events.drain(session_id, self.access.clock.now()).await?;
        if !events.is_empty() {
            self.bus.publish(LiveEvent::DrainAck {
                session_id: session_id.to_owned(),
                action_ids: events.iter().map(|e| e.action_id.clone()).collect(),
            });
        }
        Ok(events)
    }
}

impl crate::ports::agent::SessionRecord {
    /// The host observations a card echoed, when it sent any.
    pub fn client_context(&self) -> Option<Value> {
        self.context_snapshot.get(super::live::HOST_KEY).cloned()
    }
}
