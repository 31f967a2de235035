use serde_json::Value;
use svc_domain::budget::check_props_bytes;
use svc_domain::contract::{PropsSchemaProfile, profile_of, props_schema_hash};
use svc_domain::session::{NO_OP_WARNING, SessionError, UpdateEffect};

use std::sync::Arc;

use super::{AgentError, Caller, SchemaCache, SessionAccess};
use crate::ports::agent::{EventBus, EventRepository, LiveEvent, SessionRepository};

/// How new props are given.
#[derive(Debug, Clone)]
pub enum PropsChange {
    /// The new props object.
    Replace(Value),
    /// An RFC 7396 JSON Merge Patch over the current props.
    Merge(Value),
}

#[derive(Debug, Clone)]
pub struct UpdateReply {
    pub session_id: String,
    pub updated: bool,
    /// The head after the call.
    pub epoch: u32,
    pub warning: Option<&'static str>,
    /// Present when the session declares a propsSpec.
    pub props_schema: Option<(String, PropsSchemaProfile)>,
}

/// Attempts before a burst of concurrent writers on one session is reported as a failure.
const MAX_WRITE_ATTEMPTS: usize = 5;

/// `svc_update`, `svc_amend` and `svc_emit`: what the agent pushes into a live session.
#[derive(Clone)]
pub struct PropsService {
    pub access: SessionAccess,
    pub sessions: Arc<dyn SessionRepository>,
    pub events: Arc<dyn EventRepository>,
    pub bus: Arc<dyn EventBus>,
    pub schemas: SchemaCache,
}

impl PropsService {
    /// `svc_update` (`amend == false`) or `svc_amend` (`amend == true`).
    pub async fn change_props(
        &self,
        caller: &Caller,
        session_id: &str,
        change: PropsChange,
        amend: bool,
    ) -> Result<UpdateReply, AgentError> {
        for _ in 0..MAX_WRITE_ATTEMPTS {
            // An expired or failed session is missing before its props are looked at.
            let session = self.access.active(caller, session_id).await?;
            let contract = &session.contract;
            let props = match &change {
                PropsChange::Replace(p) => p.clone(),
                PropsChange::Merge(patch) => {
                    let mut merged = session.head.props.clone();
                    json_patch::merge(&mut merged, patch);
                    merged
                }
            };
            // Props equal to the head's are a no-op whatever their size (stored before the budget).
            if props != session.head.props {
                props_within_budget(&props)?;
            }
            let props = self.schemas.check_props(contract, props).await?.map_err(|violations| {
                AgentError::ContractViolation {
                    target: "props".into(),
                    violations,
                }
            })?;
            let now = self.access.clock.now();
            let mut head = session.head.clone();
            let (updated, frozen) = if amend {
                (head.amend(props, now).map_err(session_error)?, None)
            } else {
                match head.update(props, now).map_err(session_error)? {
                    UpdateEffect::Advanced { frozen, .. } => (true, Some(frozen)),
                    UpdateEffect::NoOp => (false, None),
                }
            };
            if !self
                .sessions
                .save_head(session_id, session.revision, &head, frozen.as_ref())
                .await?
            {
                continue;
            }
            if updated {
                // Saved first: large props are announced by their epoch and read from the store.
                self.bus
                    .publish(LiveEvent::props_stored(session_id, &head.props, head.epoch));
            }
            return Ok(UpdateReply {
                session_id: session_id.to_owned(),
                updated,
                epoch: head.epoch,
                warning: (!updated).then_some(NO_OP_WARNING),
                props_schema: contract
                    .declares_props_spec()
                    .then(|| (props_schema_hash(contract), profile_of(&contract.props_schema()))),
            });
        }
        Err(AgentError::Internal(anyhow::anyhow!(
            "session {session_id} kept changing under concurrent writers"
        )))
    }
}

/// Props a render or an update would store, within the `props_bytes` budget.
pub(super) fn props_within_budget(props: &Value) -> Result<(), AgentError> {
    check_props_bytes(props).map_err(|over| AgentError::OverBudget {
        field: "props".into(),
        over,
    })
}

fn session_error(e: SessionError) -> AgentError {
    match e {
        SessionError::Expired => AgentError::SessionNotFound,
        other => AgentError::invalid("sessionId", other.to_string()),
    }
}
