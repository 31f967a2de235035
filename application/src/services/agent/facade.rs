//! [`AgentService`]'s tool methods: each delegates to its use case, so the transports keep one
//! handle and every use case stays testable on its own.

use std::sync::Arc;

use serde_json::Value;
use svc_domain::session::SessionStatus;

use super::{
    AgentError, AgentService, Caller, ConsumeReply, Consumption, HandshakeCommand, HandshakeOutcome, IncomingAction,
    LiveSnapshot, MountSnapshot, PropsChange, RenderCommand, RenderResult, RenderSource, Replay, SessionView,
    UpdateReply,
};
use crate::ports::agent::{ActionEventRecord, SessionListing, SessionQuery, SessionRecord, StreamEnvelope};

impl AgentService {
    pub async fn handshake(&self, caller: &Caller, cmd: HandshakeCommand) -> Result<HandshakeOutcome, AgentError> {
        self.handshakes().handshake(caller, cmd).await
    }

    pub async fn render(&self, caller: &Caller, cmd: RenderCommand) -> Result<RenderResult, AgentError> {
        self.renders().render(caller, cmd).await
    }

    pub async fn consume(
        &self,
        caller: &Caller,
        session_id: &str,
        timeout_seconds: u64,
    ) -> Result<ConsumeReply, AgentError> {
        self.consumption().consume(caller, session_id, timeout_seconds).await
    }

    /// `svc_consume` up to its wait, for a transport that holds the wait apart
    /// ([`crate::services::agent::ConsumeService::begin`]).
    pub async fn begin_consume(
        &self,
        caller: &Caller,
        session_id: &str,
        timeout_seconds: u64,
    ) -> Result<Consumption, AgentError> {
        self.consumption().begin(caller, session_id, timeout_seconds).await
    }

    /// `svc_update` (`amend == false`) or `svc_amend` (`amend == true`).
    pub async fn change_props(
        &self,
        caller: &Caller,
        session_id: &str,
        change: PropsChange,
        amend: bool,
    ) -> Result<UpdateReply, AgentError> {
        self.props().change_props(caller, session_id, change, amend).await
    }

    pub async fn emit(
        &self,
        caller: &Caller,
        session_id: &str,
        channel: &str,
        payload: Value,
        complete: bool,
    ) -> Result<bool, AgentError> {
        self.props().emit(caller, session_id, channel, payload, complete).await
    }

    pub async fn get_session(&self, caller: &Caller, session_id: &str) -> Result<SessionView, AgentError> {
        self.session_reads().get_session(caller, session_id).await
    }

    pub async fn get_render_source(&self, caller: &Caller, session_id: &str) -> Result<RenderSource, AgentError> {
        self.session_reads().get_render_source(caller, session_id).await
    }

    pub async fn list_sessions(
        &self,
        caller: &Caller,
        query: SessionQuery,
    ) -> Result<Vec<(SessionListing, SessionStatus)>, AgentError> {
        self.session_reads().list_sessions(caller, query).await
    }

    /// The session as seen by a live-channel or resource reader of the caller's app.
    pub async fn session_for(&self, caller: &Caller, session_id: &str) -> Result<Arc<SessionRecord>, AgentError> {
        self.access().owned(caller, session_id).await
    }

    /// The session a runtime tool (`svc_runtime_refresh_ws_token`) acts on: not expired.
    pub async fn unexpired_session_for(
        &self,
        caller: &Caller,
        session_id: &str,
    ) -> Result<Arc<SessionRecord>, AgentError> {
        self.access().unexpired(caller, session_id).await
    }

    pub async fn props_at(&self, caller: &Caller, session_id: &str, epoch: u32) -> Result<Option<Value>, AgentError> {
        self.session_reads().props_at(caller, session_id, epoch).await
    }

    /// The app's system prompt, appended to the agent instructions by `initialize`.
    pub async fn app_system_prompt(&self, caller: &Caller) -> Result<Option<String>, AgentError> {
        self.session_reads().app_system_prompt(caller).await
    }

    pub async fn live_snapshot(&self, caller: &Caller, session_id: &str) -> Result<LiveSnapshot, AgentError> {
        self.live().live_snapshot(caller, session_id).await
    }

    /// The session `caller`'s app mounts and its component, without the live stream's cursor.
    pub async fn mount_snapshot(&self, caller: &Caller, session_id: &str) -> Result<MountSnapshot, AgentError> {
        self.live().mount_snapshot(caller, session_id).await
    }

    /// Live events of a topic: a session id, or a host conversation's topic.
    pub fn live_events(&self, topic: &str) -> tokio::sync::broadcast::Receiver<crate::ports::agent::Published> {
        self.live().live_events(topic)
    }

    pub async fn record_action(
        &self,
        caller: &Caller,
        session_id: &str,
        action: IncomingAction,
    ) -> Result<(ActionEventRecord, bool), AgentError> {
        self.live().record_action(caller, session_id, action).await
    }

    pub async fn sync_context(&self, caller: &Caller, session_id: &str, context: Value) -> Result<Value, AgentError> {
        self.live().sync_context(caller, session_id, context).await
    }

    pub async fn observe_host_context(
        &self,
        caller: &Caller,
        session_id: &str,
        observed: Value,
    ) -> Result<(), AgentError> {
        self.live().observe_host_context(caller, session_id, observed).await
    }

    pub async fn replay_streams_until(
        &self,
        session_id: &str,
        after_seq: i64,
        until: i64,
    ) -> Result<Replay<StreamEnvelope>, AgentError> {
        self.live()
            .replay_streams_until(session_id, after_seq, Some(until))
            .await
    }

    /// [`crate::services::agent::LiveService::stream_frames_until`]: the envelopes after
    /// `after_seq` up to `until`, read and rendered once for every socket asking at once.
    pub async fn stream_frames_until<S>(
        &self,
        session_id: &str,
        after_seq: i64,
        until: i64,
        share: impl std::future::Future<Output = S>,
        render: impl FnOnce(Replay<StreamEnvelope>) -> Vec<String>,
    ) -> Result<super::SharedFrames, AgentError> {
        self.live()
            .stream_frames_until(session_id, after_seq, until, share, render)
            .await
    }

    pub async fn replay_streams_head(
        &self,
        session_id: &str,
        after_seq: i64,
        read_bytes: usize,
    ) -> Result<Replay<StreamEnvelope>, AgentError> {
        self.live().replay_streams_head(session_id, after_seq, read_bytes).await
    }

    pub async fn replay_actions_head(
        &self,
        session_id: &str,
        after_sequence: i64,
        read_bytes: usize,
    ) -> Result<Replay<ActionEventRecord>, AgentError> {
        self.live()
            .replay_actions_head(session_id, after_sequence, read_bytes)
            .await
    }
}
