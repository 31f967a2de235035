use serde_json::Value;
use svc_domain::contract::EntrySchema;

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
        // Keyed once per contract and channel: the schema is neither canonicalised nor copied.
        let payload = self
            .schemas
            .check_entry(contract, EntrySchema::Stream(channel.to_owned()), payload)
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

#[cfg(test)]
mod tests {
    use serde_json::json;
    use svc_domain::contract::canonicalisations_on_this_thread;

    use super::super::render_tests::render_once;
    use super::super::*;
    use crate::testing::AgentFakes;

    #[tokio::test]
    async fn emits_and_actions_do_not_canonicalise_their_schema_again() {
        let fakes = AgentFakes::default();
        let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
        // An `enum` of 2,000 words: canonicalising it is what made each emit take 40 ms.
        let words: Vec<String> = (0..2_000).map(|i| format!("word-{i}")).collect();
        let contract = json!({
            "propsSpec": { "type": "object" },
            "streamSpec": { "log": { "mode": "append", "schema": { "enum": words } } },
            "actionSpec": { "pick": { "schema": { "enum": words } } }
        });
        let session_id = render_once(&service, &caller, "word picker", contract).await.session_id;
        let pick = |word: &str, seq: i64| IncomingAction {
            intent: "pick".into(),
            data: json!(word),
            ui_context: None,
            client_seq: Some(seq),
        };
        // The first of each keys its schema.
        service
            .emit(&caller, &session_id, "log", json!("word-1"), false)
            .await
            .unwrap();
        service
            .record_action(&caller, &session_id, pick("word-1", 1))
            .await
            .unwrap();
        let before = canonicalisations_on_this_thread();
        for i in 2..5 {
            let word = format!("word-{i}");
            service
                .emit(&caller, &session_id, "log", json!(word), false)
                .await
                .unwrap();
            service
                .record_action(&caller, &session_id, pick(&word, i))
                .await
                .unwrap();
        }
        assert_eq!(canonicalisations_on_this_thread() - before, 0);
        // Still checked against the schema.
        let refused = service.emit(&caller, &session_id, "log", json!("nope"), false).await;
        assert!(
            matches!(refused, Err(AgentError::ContractViolation { .. })),
            "{refused:?}"
        );
    }
}
