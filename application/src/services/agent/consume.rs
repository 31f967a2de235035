use std::future::Future;
use std::sync::Arc;
use std::time::Duration;

use chrono::{DateTime, Utc};
use serde_json::Value;
use svc_domain::session::SessionStatus;
use tokio::sync::broadcast::{Receiver, error::RecvError};
use tokio::time::Instant;

use super::held_polls::{HeldPoll, HeldPolls, PollHolder};
use super::live::REPLAY_MAX_PAYLOAD_BYTES;
use super::session_access::could_name_a_session;
use super::{AgentError, Caller, SessionAccess};
use crate::ports::agent::{ActionEventRecord, DrainBound, EventBus, EventRepository, LiveEvent, Published};

/// Longest `svc_consume` long-poll, in seconds.
pub const MAX_CONSUME_TIMEOUT_SECONDS: u64 = 25;

/// What one `svc_consume` answers at most: the oldest thousand undrained gestures, and of those
/// the ones that fit in the replay bound's bytes; the rest wait for the agent's next call.
pub const DRAIN_BOUND: DrainBound = DrainBound {
    gestures: 1_000,
    bytes: REPLAY_MAX_PAYLOAD_BYTES,
};

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
    /// Long-polls each caller holds; past its bound a poll is answered at once.
    pub held: Arc<HeldPolls>,
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
        match self.begin(caller, session_id, timeout_seconds).await? {
            Consumption::Ready(reply) => Ok(reply),
            Consumption::Waiting(poll) => poll.finish().await,
        }
    }

    /// [`ConsumeService::consume`] up to its wait: every refusal (a timeout out of range, a
    /// session that is not the caller's) and any gesture already stored are answered here.
    pub async fn begin(
        &self,
        caller: &Caller,
        session_id: &str,
        timeout_seconds: u64,
    ) -> Result<Consumption, AgentError> {
        if timeout_seconds > MAX_CONSUME_TIMEOUT_SECONDS {
            return Err(AgentError::invalid(
                "timeout",
                format!("must be an integer from 0 to {MAX_CONSUME_TIMEOUT_SECONDS}"),
            ));
        }
        if !could_name_a_session(session_id) {
            return Err(AgentError::SessionNotFound);
        }
        // A poll that may wait subscribes before the first look at the gestures, so one stored
        // after the look still wakes it. (The look may come with the session's read, so that
        // read comes after this; a topic of an id that is no session is swept by the bus, and
        // an id no session could have is refused above, so a topic is at most that long.)
        let wake = (timeout_seconds > 0).then(|| self.bus.subscribe(session_id));
        // Only what the reply needs is kept: a long-poll holds no session record while it waits.
        let (status, expires_at, client, undrained) = {
            // Database calls are boxed: a waiting long-poll's future is sized for the wait,
            // not for the queries it ran before and after it (issue 18: memory per long-poll).
            let (session, undrained) = Box::pin(self.access.owned_with_undrained(caller, session_id)).await?;
            let status = consume_status(&session, self.access.clock.now());
            (status, session.head.expires_at(), session.client_context(), undrained)
        };
        let events = match undrained {
            Some(false) => Vec::new(),
            Some(true) | None => Box::pin(self.drain(session_id)).await?,
        };
        let waits = events.is_empty() && status == SessionStatus::Active;
        let Some((wake, held)) = wake
            .filter(|_| waits)
            .and_then(|wake| Some((wake, self.held.hold(PollHolder::Caller(caller))?)))
        else {
            return Ok(Consumption::Ready(ConsumeReply { events, status, client }));
        };
        let deadline = Instant::now() + Duration::from_secs(timeout_seconds);
        Ok(Consumption::Waiting(LongPoll {
            expiry: self.expiry_before(expires_at, deadline),
            service: self.clone(),
            session_id: session_id.to_owned(),
            client,
            wake,
            deadline,
            _held: held,
        }))
    }

    /// When a session expiring at `expires_at` (by the clock) expires, if that comes before
    /// `deadline`: a long-poll ends there rather than outliving the session.
    fn expiry_before(&self, expires_at: DateTime<Utc>, deadline: Instant) -> Option<Instant> {
        let left = (expires_at - self.access.clock.now()).to_std().unwrap_or_default();
        let now = Instant::now();
        (left < deadline.saturating_duration_since(now)).then(|| now + left)
    }

    /// Looks at a waiting poll's session again when its expiry comes: activity since the poll
    /// began (an update, a read) may have slid it on.
    async fn look_at_expiry(&self, session_id: &str, deadline: Instant) -> Result<AtExpiry, AgentError> {
        let Some(session) = self.access.sessions.get_shared(session_id).await? else {
            return Ok(AtExpiry::Expired);
        };
        Ok(match consume_status(&session, self.access.clock.now()) {
            SessionStatus::Active => AtExpiry::SlidOn(self.expiry_before(session.head.expires_at(), deadline)),
            SessionStatus::Expired | SessionStatus::Failed => AtExpiry::Expired,
        })
    }

    async fn drain(&self, session_id: &str) -> Result<Vec<ActionEventRecord>, AgentError> {
        // The oldest that fit in the bound; the rest wait for the agent's next call.
        let events = self
            .events
            .drain(session_id, self.access.clock.now(), DRAIN_BOUND)
            .await?;
        if !events.is_empty() {
            self.bus.publish(LiveEvent::DrainAck {
                session_id: session_id.to_owned(),
                action_ids: events.iter().map(|e| e.action_id.clone()).collect(),
            });
        }
        Ok(events)
    }
}

/// `svc_consume` after its first look ([`ConsumeService::begin`]).
pub enum Consumption {
    Ready(ConsumeReply),
    /// An active session with no gesture yet: [`LongPoll::finish`] waits for one.
    Waiting(LongPoll),
}

/// A long-poll on an active session. It owns what its wait needs, so a transport can hold it
/// apart from the request that began it (issue 18: memory per held long-poll).
pub struct LongPoll {
    service: ConsumeService,
    session_id: String,
    client: Option<Value>,
    wake: Receiver<Published>,
    /// The end of the timeout.
    deadline: Instant,
    /// When the session expires, if before `deadline`.
    expiry: Option<Instant>,
    /// Its place among the caller's held polls, freed when the poll ends.
    _held: HeldPoll,
}

impl LongPoll {
    /// Waits until a gesture is stored (drained and answered), the session expires (answered
    /// `expired` with any gesture left) or the timeout runs out (an empty answer); the session
    /// was active when the poll began.
    pub async fn finish(self) -> Result<ConsumeReply, AgentError> {
        self.finish_unless(std::future::pending()).await
    }

    /// [`LongPoll::finish`], answering early with no gesture when `stop` resolves (the server's
    /// drain). `stop` ends only the waiting, never a drain under way: gestures it drained are
    /// answered.
    pub async fn finish_unless(mut self, stop: impl Future<Output = ()>) -> Result<ConsumeReply, AgentError> {
        tokio::pin!(stop);
        let mut events = Vec::new();
        let mut status = SessionStatus::Active;
        loop {
            let until = self.expiry.map_or(self.deadline, |expiry| expiry.min(self.deadline));
            let received = tokio::select! {
                received = tokio::time::timeout_at(until, self.wake.recv()) => received,
                () = &mut stop => break,
            };
            let look = match received {
                // The session's expiry came first: Document 1 ends the agent's loop on `expired`.
                Err(_) if self.expiry.is_some() => {
                    match Box::pin(self.service.look_at_expiry(&self.session_id, self.deadline)).await? {
                        AtExpiry::SlidOn(expiry) => {
                            self.expiry = expiry;
                            continue;
                        }
                        AtExpiry::Expired => {
                            status = SessionStatus::Expired;
                            events = Box::pin(self.service.drain(&self.session_id)).await?;
                            break;
                        }
                    }
                }
                Err(_) | Ok(Err(RecvError::Closed)) => break,
                // A gesture stored on another replica may be among what the bus lost.
                Ok(Ok(published)) => matches!(
                    published.event(),
                    LiveEvent::ActionStored { .. } | LiveEvent::MissedEvents
                ),
                // Behind: a gesture may be among the missed events.
                Ok(Err(RecvError::Lagged(_))) => true,
            };
            if look {
                events = Box::pin(self.service.drain(&self.session_id)).await?;
                if !events.is_empty() {
                    break;
                }
            }
        }
        Ok(ConsumeReply {
            events,
            status,
            client: self.client,
        })
    }
}

/// A waiting poll's session when its expiry came.
enum AtExpiry {
    Expired,
    /// Still active: it now expires then, if before the poll's timeout.
    SlidOn(Option<Instant>),
}

/// What `svc_consume` reports of a session: a failed render reads `expired`, it takes no gestures.
fn consume_status(session: &crate::ports::agent::SessionRecord, now: DateTime<Utc>) -> SessionStatus {
    match session.head.status_at(now) {
        SessionStatus::Active => SessionStatus::Active,
        SessionStatus::Expired | SessionStatus::Failed => SessionStatus::Expired,
    }
}

impl crate::ports::agent::SessionRecord {
    /// The host observations a card echoed, when it sent any.
    pub fn client_context(&self) -> Option<Value> {
        self.context_snapshot.get(super::live::HOST_KEY).cloned()
    }
}
