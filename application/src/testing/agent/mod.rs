//! In-memory fakes of the agent plane's ports: one store for apps, handshakes, sessions, events
//! and blueprints (one mutex, so `consume` and `drain` are atomic as the SQL adapter's are), its
//! ports implemented one file each (`apps.rs`, `sessions.rs`, `events.rs`, `blueprints.rs`).
//! [`AgentFakes`] wires it and the fakes of `agent_pipeline.rs` into
//! [`AgentPorts`] and builds the use cases over them.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::Value;

use super::agent_pipeline::{LocalBus, ScriptedGenerator, StubCompiler};
use super::{ManualClock, SequentialIds, lock};
use crate::ports::RepositoryError;
use crate::ports::agent::{
    ActionEventRecord, AppRecord, BlueprintRecord, HandshakeRecord, SessionRecord, StreamEnvelope,
};
use crate::services::agent::{AgentPorts, AgentService, AgentSettings, Caller, GenerationQueue};

mod apps;
mod blueprints;
mod events;
mod sessions;

type Result<T> = std::result::Result<T, RepositoryError>;

#[derive(Default)]
struct AgentState {
    apps: Vec<AppRecord>,
    defaults: HashMap<String, String>,
    handshakes: HashMap<String, HandshakeRecord>,
    sessions: HashMap<String, SessionRecord>,
    /// In insertion order, which is creation order.
    session_order: Vec<String>,
    frozen: HashMap<(String, u32), Value>,
    actions: Vec<(ActionEventRecord, bool)>,
    streams: Vec<StreamEnvelope>,
    /// In insertion order, which is creation order.
    blueprints: Vec<BlueprintRecord>,
}

/// Every agent-plane repository, in memory.
#[derive(Default)]
pub struct InMemoryAgentStore(Mutex<AgentState>);

impl InMemoryAgentStore {
    /// Sessions stored, in creation order.
    pub fn sessions(&self) -> Vec<SessionRecord> {
        let state = lock(&self.0);
        state
            .session_order
            .iter()
            .map(|id| state.sessions[id].clone())
            .collect()
    }

    /// Blueprints stored, in creation order.
    pub fn blueprints(&self) -> Vec<BlueprintRecord> {
        lock(&self.0).blueprints.clone()
    }

    /// Gestures stored and not drained yet.
    pub fn undrained(&self, session_id: &str) -> usize {
        lock(&self.0)
            .actions
            .iter()
            .filter(|(a, drained)| a.session_id == session_id && !drained)
            .count()
    }

    /// Stream deliveries of a session's channel, oldest first.
    pub fn deliveries(&self, session_id: &str, channel: &str) -> Vec<StreamEnvelope> {
        lock(&self.0)
            .streams
            .iter()
            .filter(|s| s.session_id == session_id && s.channel == channel)
            .cloned()
            .collect()
    }
}

/// The agent plane's fakes, wired together.
#[derive(Clone, Default)]
pub struct AgentFakes {
    pub clock: Arc<ManualClock>,
    pub ids: Arc<SequentialIds>,
    pub store: Arc<InMemoryAgentStore>,
    pub bus: Arc<LocalBus>,
    pub generator: Arc<ScriptedGenerator>,
    pub compiler: Arc<StubCompiler>,
}

impl AgentFakes {
    pub fn ports(&self) -> AgentPorts {
        AgentPorts {
            clock: self.clock.clone(),
            ids: self.ids.clone(),
            apps: self.store.clone(),
            handshakes: self.store.clone(),
            sessions: self.store.clone(),
            events: self.store.clone(),
            blueprints: self.store.clone(),
            bus: self.bus.clone(),
            generator: self.generator.clone(),
            compiler: self.compiler.clone(),
        }
    }

    pub fn settings() -> AgentSettings {
        AgentSettings {
            default_session_ttl_seconds: 3600,
            model_registry: vec!["openai:gpt-4.1".into()],
            available_theme_ids: Vec::new(),
            default_theme_id: svc_domain::themes::catalog()[0].id.clone(),
            replay_buffer: 100,
        }
    }

    /// The facade over the fakes, with a queue of two running and two waiting generations.
    pub fn service(&self) -> AgentService {
        AgentService::new(
            self.ports(),
            Self::settings(),
            GenerationQueue::new(2, 2, Duration::from_secs(5)),
        )
    }

    pub fn caller(app_id: &str) -> Caller {
        Caller {
            principal_id: format!("user-of-{app_id}"),
            app_id: app_id.to_owned(),
            key_id: None,
        }
    }
}
