use serde_json::Value;

use super::{AgentError, Caller, PropsService};
use crate::ports::agent::LiveEvent;

impl PropsService {
    /// Validates a payload against its channel, stores it with the next `seq` and publishes it.
    /// No subscriber is not an error: the envelope waits in the replay store.
    pub async fn emit(
        &self,
        caller: &Caller,
        session_id: &str,
        channel: &str,
        payload: Value,
        complete: bool,
    ) -> Result<bool, AgentError> {
        let session = self.access.active(caller, session_id).await?;
        let contract = &session.contract;
        let Some(declared) = contract.stream_channel(channel) else {
            return Err(AgentError::invalid(
                "channel",
                format!("`{channel}` is not declared in the contract's streamSpec"),
            ));
        };
        if complete && !declared.complete {
            return Err(AgentError::invalid(
                "complete",
                format!("channel `{channel}` is not declared with `complete: true`"),
            ));
        }
        let payload = self
            .schemas
            .check(&declared.schema, payload)
            .await?
            .map_err(|violations| AgentError::ContractViolation {
                target: "payload".into(),
                violations,
            })?;
        let now = self.access.clock.now();
        let envelope = self
            .events
            .append_stream(session_id, channel, declared.mode.as_str(), &payload, complete, now)
            .await?;
        // Stored first: a large payload is announced by its seq and read from the store.
        self.bus.publish(LiveEvent::data_stored(envelope));
        Ok(true)
    }
}
