//! The `subscribe` frame: authentication, the `ack`, and replay in the documented order.

use serde::Deserialize;
use serde_json::{Value, json};
use svc_application::services::agent::{AgentError, Caller, LiveSnapshot};
use svc_protocol::SERVICE_PROTOCOL_VERSION;
use tokio::time::Instant;

use super::frames::{self, ReplayGaps};
use super::replay_pieces::{self, PendingReplay, ReplayClock, StartEnd};
use crate::TokenKind;
use crate::route_states::LiveRoutes;

#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscribePayload {
    pub session_id: String,
    pub app_id: Option<String>,
    pub ws_token: Option<String>,
    pub session_token: Option<String>,
    pub from_seq: Option<i64>,
    pub since_sequence: Option<i64>,
    pub role: Option<String>,
    pub supported_versions: Option<Vec<String>>,
}

/// `subscribe.role` (Document 2): the card's socket is `user` (the default); an `agent` socket
/// observes the session (props, data, drain acks) and may not act for the user.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LiveRole {
    User,
    Agent,
}

impl LiveRole {
    fn parse(role: Option<&str>) -> Result<Self, String> {
        match role {
            None | Some("user") => Ok(Self::User),
            Some("agent") => Ok(Self::Agent),
            Some(other) => Err(format!("subscribe payload: role: `{other}` is not `user` or `agent`")),
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::User => "user",
            Self::Agent => "agent",
        }
    }

    /// Whether the socket may send what only the user's card sends (`action`,
    /// `host_context_observed`).
    pub fn acts_for_the_user(self) -> bool {
        self == Self::User
    }
}

/// A bound socket: who it acts for and which session.
pub struct Subscribed {
    pub caller: Caller,
    pub session_id: String,
    pub role: LiveRole,
    /// Highest stream `seq` the client has been sent or told about (the `ack`'s `lastStreamSeq`,
    /// then the last envelope its replay sent).
    pub stream_cursor: i64,
    /// The host conversation the render belongs to, whose new renders reach this socket.
    pub host_topic: Option<String>,
}

/// What subscribing produced: the frames to send first (the `ack`, and a `replay_gap` when a
/// replay left items out) and the replay to send after them, or a refusal frame.
pub enum SubscribeOutcome {
    Bound {
        subscribed: Subscribed,
        frames: Vec<String>,
        replay: Box<PendingReplay>,
    },
    Refused(String),
}

const AUTH_FAILED: &str = "AUTH_FAILED";

fn refused() -> SubscribeOutcome {
    // One answer for a bad token, a foreign session and a missing one: nothing leaks.
    SubscribeOutcome::Refused(frames::error(AUTH_FAILED, "the credentials do not grant this session"))
}

/// A bearer sent on the upgrade request, and the caller it authenticated (its default app, or
/// the app its key is locked to).
pub struct UpgradeBearer {
    pub token: String,
    pub caller: Caller,
}

/// The bearer's caller for the app the subscribe names: `appId` picks another app of the same
/// identity, checked like `/apps/<appId>/mcp`; `None` when the bearer does not grant that app.
async fn bearer_caller_for(state: &LiveRoutes, bearer: &UpgradeBearer, app_id: Option<&str>) -> Option<Caller> {
    match app_id {
        Some(app_id) if app_id != bearer.caller.app_id => {
            state.auth.authenticate_for_app(Some(&bearer.token), app_id).await.ok()
        }
        _ => Some(bearer.caller.clone()),
    }
}

/// Resolves the caller: a bearer on the upgrade, else a session token, else a wsToken.
/// Returns the caller and whether a session token should be issued.
fn authenticate(
    state: &LiveRoutes,
    payload: &SubscribePayload,
    bearer_caller: Option<&Caller>,
) -> Option<(Caller, bool)> {
    let now = state.agent.now();
    if let Some(caller) = bearer_caller {
        return Some((caller.clone(), false));
    }
    let (claims, first) = if let Some(token) = &payload.session_token {
        (
            state.tokens.verify_kind(TokenKind::SessionToken, token, now).ok()?,
            false,
        )
    } else {
        (
            state
                .tokens
                .verify_kind(TokenKind::WsToken, payload.ws_token.as_deref()?, now)
                .ok()?,
            true,
        )
    };
    if claims.session_id != payload.session_id || payload.app_id.as_ref().is_some_and(|a| a != &claims.app_id) {
        return None;
    }
    Some((
        Caller {
            principal_id: format!("live:{}", claims.session_id),
            app_id: claims.app_id,
            key_id: claims.key_id,
        },
        first,
    ))
}

pub async fn subscribe(
    state: &LiveRoutes,
    raw: Value,
    bearer: Option<&UpgradeBearer>,
) -> Result<SubscribeOutcome, AgentError> {
    let payload: SubscribePayload = match serde_json::from_value(raw) {
        Ok(p) => p,
        Err(e) => {
            return Ok(SubscribeOutcome::Refused(frames::error(
                "BAD_FRAME",
                &format!("subscribe payload: {e}"),
            )));
        }
    };
    let role = match LiveRole::parse(payload.role.as_deref()) {
        Ok(role) => role,
        Err(message) => return Ok(SubscribeOutcome::Refused(frames::error("BAD_FRAME", &message))),
    };
    if let Some(versions) = &payload.supported_versions
        && !versions.iter().any(|v| v == SERVICE_PROTOCOL_VERSION)
    {
        return Ok(SubscribeOutcome::Refused(frames::frame(
            "error",
            json!({ "code": "UNSUPPORTED_VERSION", "message": "no common protocol version", "supported": [SERVICE_PROTOCOL_VERSION] }),
        )));
    }
    let bearer_caller = match bearer {
        Some(bearer) => match bearer_caller_for(state, bearer, payload.app_id.as_deref()).await {
            Some(caller) => Some(caller),
            None => return Ok(refused()),
        },
        None => None,
    };
    let Some((caller, issue_session_token)) = authenticate(state, &payload, bearer_caller.as_ref()) else {
        return Ok(refused());
    };
    if !super::key_still_live(state, caller.key_id.as_deref()).await {
        return Ok(refused());
    }
    if payload.app_id.as_ref().is_some_and(|a| a != &caller.app_id) {
        return Ok(refused());
    }
    let snapshot = match state.agent.live_snapshot(&caller, &payload.session_id).await {
        Ok(s) => s,
        Err(AgentError::SessionNotFound) => return Ok(refused()),
        Err(other) => return Err(other),
    };
    let session = &snapshot.session;
    // Only each replay's first item is read here, for the gaps the ack tells; the frames come
    // after the ack, a piece at a time (`replay_pieces`). The socket reads nothing else until it
    // answers, so the wait for the replay budget has a deadline: past it the answer is busy.
    let by = Instant::now() + state.timings.replay_share_before_ack();
    let actions = match payload.since_sequence {
        Some(after) => match replay_pieces::start_actions(state, by, &session.session_id, after).await {
            Ok(start) => Some(start),
            Err(StartEnd::Busy(frame)) => return Ok(SubscribeOutcome::Refused(frame)),
            Err(StartEnd::Failed(failed)) => return Err(failed),
        },
        None => None,
    };
    let streams = match payload.from_seq {
        Some(after) => match replay_pieces::start_streams(state, by, &session.session_id, after).await {
            Ok(start) => Some(start),
            Err(StartEnd::Busy(frame)) => return Ok(SubscribeOutcome::Refused(frame)),
            Err(StartEnd::Failed(failed)) => return Err(failed),
        },
        None => None,
    };
    let gaps = ReplayGaps {
        actions: actions.is_some_and(|start| start.gap),
        streams: streams.is_some_and(|start| start.gap),
    };
    let mut ack = ack_payload(
        state,
        &snapshot,
        payload.from_seq,
        payload.since_sequence,
        gaps,
        issue_session_token,
        caller.key_id.as_deref(),
    )
    .await;
    ack["role"] = json!(role.as_str());
    let mut frames_out = vec![frames::frame("ack", ack)];
    if gaps.any() {
        frames_out.push(frames::frame("system", frames::replay_gap(gaps)));
    }
    // Session events replay before stream envelopes when both cursors are set.
    let replay = Box::new(PendingReplay {
        session_id: session.session_id.clone(),
        actions_after: actions.map(|start| start.after),
        streams_after: streams.map(|start| start.after),
        catch_up_after: snapshot.last_stream_seq,
        clock: ReplayClock::start(&frames_out),
    });
    let subscribed = Subscribed {
        caller,
        session_id: session.session_id.clone(),
        role,
        stream_cursor: snapshot.last_stream_seq,
        host_topic: svc_application::ports::agent::host_topic(&session.host),
    };
    Ok(SubscribeOutcome::Bound {
        subscribed,
        frames: frames_out,
        replay,
    })
}

/// Where the component imports and exports (`component.links`), for a card of ours; an
/// `mcpApps` session's "component" is its HTML document.
async fn component_links(state: &LiveRoutes, snapshot: &LiveSnapshot) -> Option<Value> {
    if snapshot.variant == svc_domain::session::SessionVariant::McpApps {
        return None;
    }
    let code = snapshot.component_code.as_deref()?;
    state
        .component_links
        .read(snapshot.session.blueprint_id.as_deref()?, code)
        .await
}

/// The `ack` payload: the session as the card needs it, the cursors, and a fresh session token
/// when `issue_session_token` (the caller came with a wsToken), minted under the same key. The
/// polling fallback answers its first poll with the same frame.
pub async fn ack_payload(
    state: &LiveRoutes,
    snapshot: &LiveSnapshot,
    from_seq: Option<i64>,
    since_sequence: Option<i64>,
    gaps: ReplayGaps,
    issue_session_token: bool,
    key_id: Option<&str>,
) -> Value {
    let session = &snapshot.session;
    let links = component_links(state, snapshot).await;
    let mut ack = json!({
        "sessionId": session.session_id,
        "appId": session.app_id,
        "protocolVersion": SERVICE_PROTOCOL_VERSION,
        "epoch": session.head.epoch,
        "props": session.head.props,
        "themeId": session.theme_id,
        "contract": session.contract,
        "component": { "code": snapshot.component_code.as_deref(), "blueprintId": session.blueprint_id, "links": links },
        // Declared packages the component may import (docs/live-channel.md, `gadgetBundles`).
        "gadgetBundles": state.agent.gadget_bundles(&session.contract),
        "lastSequence": session.event_sequence,
        "lastStreamSeq": snapshot.last_stream_seq,
        "replay": { "fromSeq": from_seq, "sinceSequence": since_sequence, "gap": gaps.any(), "lost": gaps.lost() },
    });
    if let Some(failure) = &session.failure {
        ack["failure"] = json!({ "code": failure.code, "message": failure.message });
    }
    if issue_session_token {
        let (token, expires_at) = state.tokens.mint_kind(
            TokenKind::SessionToken,
            &session.session_id,
            &session.app_id,
            key_id,
            state.agent.now(),
        );
        ack["sessionToken"] = json!(token);
        ack["sessionTokenExpiresAt"] = json!(expires_at.to_rfc3339_opts(chrono::SecondsFormat::Millis, true));
    }
    ack
}
