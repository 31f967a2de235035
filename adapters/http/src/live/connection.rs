//! One WebSocket connection: subscribe first, then inbound frames, the live tail and heartbeats.

use std::future::{Future, poll_fn};
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use futures_util::{SinkExt, Stream, StreamExt};
use serde_json::Value;
use svc_application::ports::agent::{LiveEvent, Published, key_topic};
use svc_application::services::agent::{AgentError, Replay};
use svc_application::services::tool_channels::ChannelError;
use svc_protocol::live_frames::{FrameRefusal, InboundFrame, parse_frame};
use tokio::sync::broadcast::{Receiver, error::RecvError};
use tokio_tungstenite::tungstenite::protocol::CloseFrame;
use tokio_tungstenite::tungstenite::protocol::frame::coding::CloseCode;
use tokio_tungstenite::tungstenite::{Error as WsError, Message, Utf8Bytes};

use super::MAX_FRAME_BYTES;
use super::actions::{action, role_forbidden};
use super::flood_gate::{FloodGate, Verdict};
use super::frames;
use super::inbound_budget::{self, Admitted};
use super::key_watch::WatchedKey;
use super::replay_pieces::{PendingReplay, ReplayEnd, send_replay};
use super::socket_writes::{send, send_all, write};
use super::subscribe::{SubscribeOutcome, Subscribed, UpgradeBearer, subscribe};
use super::tool_channels::{ToolChannels, error_frame_for};
use super::upgrade::LiveSocket;
use super::wake_gate::WakeGate;
use crate::route_states::LiveRoutes;

const HEARTBEAT: Duration = Duration::from_secs(20);
const IDLE_LIMIT: Duration = Duration::from_secs(60);
/// How long a socket we closed waits for the peer's close frame before it is dropped.
const CLOSE_HANDSHAKE: Duration = Duration::from_secs(1);
/// The error frame before a socket closes (1008) because its key was revoked.
const KEY_REVOKED: &str = "KEY_REVOKED";

struct Bound {
    subscribed: Subscribed,
    events: Receiver<Published>,
    /// New renders in the same host conversation.
    host_events: Option<Receiver<Published>>,
    /// Pollers of `channel_subscribe`d tool channels; dropped (stopped) with the binding.
    channels: ToolChannels,
    /// Resolves when the key the socket was opened under stops authenticating
    /// ([`key_ending`]); awaited across the binding's events, not made anew for each, and polled
    /// only when it woke the task. None without a key.
    key_ended: Option<KeyEnd>,
    /// When to tell the card that the bus may have missed events (`lagged`): every card of the
    /// replica hears it at once and each reconnects, so the notices are spread over a few
    /// seconds by session.
    missed_notice: Option<tokio::time::Instant>,
    /// The card was told (it reconnects); later misses on this binding are not told again.
    told_missed: bool,
    /// The subscribe's replay, sent after its `ack` and before anything live (boxed: an idle
    /// socket keeps only the pointer).
    replay: Option<Box<PendingReplay>>,
}

/// A number that differs by session and stays the same for one: spreads per-session timers.
fn spread_by(session_id: &str) -> u64 {
    let mut hasher = std::collections::hash_map::DefaultHasher::new();
    std::hash::Hash::hash(session_id, &mut hasher);
    std::hash::Hasher::finish(&hasher)
}

/// Longest delay of a `lagged` notice after the bus missed events (spread by session id).
const MISSED_NOTICE_SPREAD: Duration = Duration::from_secs(5);

/// What a bound socket hears next: a bus event or a frame of a tool channel poller.
enum Heard {
    Event(Result<Published, RecvError>),
    Channel(String),
    /// The key the socket was opened under was revoked (on any replica), or the key watch found
    /// it no longer authenticates (expired, or revoked in the keys file).
    KeyRevoked,
    /// The time came to tell the card that the bus may have missed events.
    MissedNotice,
}

/// The end of the key a socket was opened under, as a future kept for the binding's life: made
/// anew for every event, its waits would register with (and leave) the key's shared wake lists
/// once per event and socket.
struct KeyEnd {
    ended: Pin<Box<dyn Future<Output = ()> + Send>>,
    gate: WakeGate,
}

/// Resolves when the key's revocation is announced on its topic (on any replica), or when the
/// replica's periodic check of the key (`watched`: expiry and keys-file revocations are not
/// announced) finds it no longer authenticates. Owns both, so the watch counts the socket until
/// the binding is dropped. None without a key (a socket without one keeps no future for it).
fn key_ending(mut revocation: Option<Receiver<Published>>, watched: Option<WatchedKey>) -> Option<KeyEnd> {
    if revocation.is_none() && watched.is_none() {
        return None;
    }
    let ended = Box::pin(async move {
        let swept = async {
            match watched.as_ref() {
                Some(key) => key.ended().await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = super::revoked(revocation.as_mut()) => {}
            () = swept => {}
        }
    });
    Some(KeyEnd {
        ended,
        gate: WakeGate::default(),
    })
}

impl Bound {
    async fn next(&mut self) -> Heard {
        let events = async {
            match self.host_events.as_mut() {
                Some(host) => tokio::select! {
                    event = self.events.recv() => event,
                    event = host.recv() => event,
                },
                None => self.events.recv().await,
            }
        };
        let notice = async {
            match self.missed_notice {
                Some(at) => tokio::time::sleep_until(at).await,
                None => std::future::pending().await,
            }
        };
        let key_ended = async {
            match self.key_ended.as_mut() {
                Some(end) => std::future::poll_fn(|cx| end.gate.poll(cx, |cx| end.ended.as_mut().poll(cx))).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            event = events => Heard::Event(event),
            frame = self.channels.next_frame() => Heard::Channel(frame),
            () = key_ended => Heard::KeyRevoked,
            () = notice => Heard::MissedNotice,
        }
    }

    /// Schedules the card's `lagged` notice, unless one is due or was sent on this binding.
    fn missed_events(&mut self) {
        if self.told_missed || self.missed_notice.is_some() {
            return;
        }
        let spread = MISSED_NOTICE_SPREAD.as_millis() as u64;
        let delay = Duration::from_millis(spread_by(&self.subscribed.session_id) % spread);
        self.missed_notice = Some(tokio::time::Instant::now() + delay);
    }
}

/// A live socket's two directions as one value, read and written in turn by its task.
trait Duplex: SinkExt<Message> + Stream<Item = Result<Message, WsError>> + Unpin {}

impl<T: SinkExt<Message> + Stream<Item = Result<Message, WsError>> + Unpin> Duplex for T {}

/// What woke a socket's task.
enum Woke {
    Inbound(Option<Result<Message, WsError>>),
    Live(Option<Heard>),
    SubscribeDeadline,
    Closing,
    Heartbeat,
}

pub async fn serve(state: Arc<LiveRoutes>, stream: LiveSocket, bearer: Option<String>) {
    let _counted = crate::observe::held(&crate::observe::METRICS.live_sockets);
    // Not split: the one task reads and writes in turn, and split halves would take a lock
    // (`BiLock`) on every write of the fan-out.
    let mut socket = stream;
    // A bearer on the upgrade authenticates like /mcp; an invalid one is simply not used.
    let bearer_caller = match bearer {
        Some(token) => Box::pin(state.auth.authenticate(Some(&token)))
            .await
            .ok()
            .map(|caller| UpgradeBearer { token, caller }),
        None => None,
    };
    let mut bound: Option<Bound> = None;
    let mut gate = FloodGate::default();
    let mut heartbeat = tokio::time::interval(HEARTBEAT);
    let mut last_heard = Instant::now();
    let mut subscribe_by = tokio::time::Instant::now() + state.timings.subscribe_within;
    // Kept across the loop, as `Bound::key_ended` is: one registration with the server's shared
    // shutdown signal per socket, not one per event.
    let closing = state.sockets.closing();
    tokio::pin!(closing);
    // The sources other than the live tail, each polled only when it woke the task (`wake_gate`).
    let (read_gate, heartbeat_gate, closing_gate) = (WakeGate::default(), WakeGate::default(), WakeGate::default());

    loop {
        let unbound = bound.is_none();
        let subscribe_deadline = async {
            if unbound {
                tokio::time::sleep_until(subscribe_by).await
            } else {
                std::future::pending().await
            }
        };
        let live = async {
            match bound.as_mut() {
                Some(b) => Some(b.next().await),
                None => std::future::pending().await,
            }
        };
        let read = poll_fn(|cx| read_gate.poll(cx, |cx| socket.poll_next_unpin(cx)));
        let beat = poll_fn(|cx| heartbeat_gate.poll(cx, |cx| heartbeat.poll_tick(cx)));
        let shutdown = poll_fn(|cx| closing_gate.poll(cx, |cx| closing.as_mut().poll(cx)));
        let woke = tokio::select! {
            message = read => Woke::Inbound(message),
            heard = live => Woke::Live(heard),
            () = subscribe_deadline => Woke::SubscribeDeadline,
            () = shutdown => Woke::Closing,
            _ = beat => Woke::Heartbeat,
        };
        let outgoing: Vec<Utf8Bytes> = match woke {
            Woke::Inbound(message) => {
                let message = match message {
                    Some(Ok(message)) => message,
                    // Over the transport's cap: refused from its header, before it is buffered.
                    Some(Err(WsError::Capacity(_))) => {
                        refuse_unread_message(&mut socket).await;
                        break;
                    }
                    _ => break,
                };
                last_heard = Instant::now();
                let text = match message {
                    Message::Text(text) => text,
                    Message::Binary(_) => {
                        if send(&mut socket, frames::error("BAD_FRAME", "frames are JSON text")).await {
                            continue;
                        }
                        break;
                    }
                    Message::Close(_) => break,
                    Message::Ping(_) | Message::Pong(_) | Message::Frame(_) => continue,
                };
                match gate.admit() {
                    Verdict::Pass => {}
                    Verdict::Warn => {
                        if send(&mut socket, frames::error("RATE_LIMITED", "too many frames; slow down")).await {
                            continue;
                        }
                        break;
                    }
                    Verdict::Close => {
                        close(&mut socket, CloseCode::Policy, "flood").await;
                        break;
                    }
                }
                if text.len() > MAX_FRAME_BYTES {
                    refuse_too_large(
                        &mut socket,
                        frames::error("FRAME_TOO_LARGE", "frames are at most 256 KiB"),
                    )
                    .await;
                    break;
                }
                // Weighed before it is parsed; its weight held until it is answered (`inbound_budget`).
                let _reserved = match inbound_budget::admit_text(&state.parsed_json, &text) {
                    Admitted::Reserved(reserved) => reserved,
                    Admitted::Refused(frame) => {
                        if send(&mut socket, frame).await {
                            continue;
                        }
                        break;
                    }
                    Admitted::TooHeavy(frame) => {
                        refuse_too_large(&mut socket, frame).await;
                        break;
                    }
                };
                // Boxed: an idle socket's task is sized for what it awaits while idle, not for the
                // subscribe and action paths (database calls) it runs now and then.
                let answered = match Box::pin(handle(&state, &text, &mut bound, bearer_caller.as_ref())).await {
                    Ok(out) => out,
                    Err(e) => {
                        tracing::error!(error = ?e, "live channel failure");
                        vec![frames::error("INTERNAL", "internal error")]
                    }
                };
                answered.into_iter().map(Utf8Bytes::from).collect()
            }
            Woke::Live(heard) => match heard {
                Some(Heard::Channel(frame)) => vec![frame.into()],
                Some(Heard::KeyRevoked) => {
                    refuse_revoked_key(&mut socket).await;
                    break;
                }
                Some(Heard::MissedNotice) => match bound.as_mut() {
                    Some(b) => {
                        (b.missed_notice, b.told_missed) = (None, true);
                        vec![frames::frame("system", frames::lagged_between_replicas()).into()]
                    }
                    None => vec![],
                },
                Some(Heard::Event(Ok(event))) => match bound.as_mut() {
                    Some(b) => match forward(b, &event) {
                        Forward::Nothing => vec![],
                        Forward::Frame(frame) => vec![frame],
                        // Boxed: the store's read is what the idle socket's task would otherwise be sized for.
                        from_store => Box::pin(read_forwarded(&state, b, from_store, &event)).await,
                    },
                    None => vec![],
                },
                Some(Heard::Event(Err(RecvError::Lagged(skipped)))) => {
                    vec![frames::frame("system", frames::lagged(skipped)).into()]
                }
                _ => break,
            },
            Woke::SubscribeDeadline => {
                let within = state.timings.subscribe_within.as_secs();
                if send(
                    &mut socket,
                    frames::error("NOT_SUBSCRIBED", &format!("no subscribe within {within} s of opening")),
                )
                .await
                {
                    close(&mut socket, CloseCode::Policy, "subscribe first").await;
                }
                break;
            }
            // Shutdown: the card reconnects (to another replica behind a proxy) and resumes by fromSeq.
            Woke::Closing => {
                close(&mut socket, CloseCode::Away, "server shutting down").await;
                break;
            }
            Woke::Heartbeat => {
                if last_heard.elapsed() > IDLE_LIMIT {
                    close(&mut socket, CloseCode::Away, "idle").await;
                    break;
                }
                if !write(&mut socket, Message::Ping(Default::default())).await {
                    break;
                }
                continue;
            }
        };
        if !outgoing.is_empty() && !send_all(&mut socket, outgoing).await {
            return;
        }
        if let Some(b) = bound.as_mut()
            && let Some(replay) = b.replay.take()
        {
            match Box::pin(send_replay(&state, &mut socket, *replay, &mut b.subscribed)).await {
                ReplayEnd::Sent => {}
                ReplayEnd::Gone => return,
                // As a subscribe the store failed: the card is told and subscribes again.
                ReplayEnd::Failed(e) => {
                    tracing::error!(error = ?e, "live channel failure replaying");
                    bound = None;
                    // Its time to subscribe again runs from now, not from the socket's opening.
                    subscribe_by = tokio::time::Instant::now() + state.timings.subscribe_within;
                    if !send(&mut socket, frames::error("INTERNAL", "internal error")).await {
                        return;
                    }
                }
            }
        }
    }
}

/// `FRAME_TOO_LARGE` (`refusal`), then the 1009 close.
async fn refuse_too_large(socket: &mut impl Duplex, refusal: String) {
    if send(socket, refusal).await {
        close(socket, CloseCode::Size, "frame too large").await;
    }
}

/// `FRAME_TOO_LARGE` and the 1009 close for a message refused from its frame header. Its
/// payload is unread and the stream ended at the refusal, so no closing handshake can read it
/// away: the socket is held for [`CLOSE_HANDSHAKE`] after the close frame, so the client reads
/// both before the kernel answers the unread bytes with a reset.
async fn refuse_unread_message(socket: &mut impl Duplex) {
    let frame = CloseFrame {
        code: CloseCode::Size,
        reason: "frame too large".into(),
    };
    if send(socket, frames::error("FRAME_TOO_LARGE", "frames are at most 256 KiB")).await
        && write(socket, Message::Close(Some(frame))).await
    {
        tokio::time::sleep(CLOSE_HANDSHAKE).await;
    }
}

/// `KEY_REVOKED`, then the 1008 close: the key was revoked or expired.
async fn refuse_revoked_key(socket: &mut impl Duplex) {
    if send(
        socket,
        frames::error(
            KEY_REVOKED,
            "the key this channel was opened with was revoked or expired",
        ),
    )
    .await
    {
        close(socket, CloseCode::Policy, "key revoked").await;
    }
}

/// Sends our close frame, then reads (and drops) what the peer still sends until its own close
/// frame, the end of the stream or [`CLOSE_HANDSHAKE`]: the closing handshake of RFC 6455
/// §7.1.1. A socket dropped with the peer's bytes unread makes the kernel answer them with a
/// reset, and a client that meets the reset first may never read our close frame.
async fn close(socket: &mut impl Duplex, code: CloseCode, reason: &str) {
    let frame = CloseFrame {
        code,
        reason: reason.to_owned().into(),
    };
    if !write(socket, Message::Close(Some(frame))).await {
        return;
    }
    let peer_closed = async {
        while let Some(Ok(message)) = socket.next().await {
            if matches!(message, Message::Close(_)) {
                break;
            }
        }
    };
    let _ = tokio::time::timeout(CLOSE_HANDSHAKE, peer_closed).await;
}

/// What a socket does with a live event it heard.
enum Forward {
    /// Nothing: the card has it already, or is told another way.
    Nothing,
    /// The event's frame: serialised once per event and shared by every socket that sends it.
    Frame(Utf8Bytes),
    /// The stream envelopes after the socket's cursor up to this `seq`, read from the store: a
    /// gap in the live tail, or an envelope too large to travel on the bus (a marker; see
    /// `LIVE_EVENT_INLINE_BYTES`).
    StreamsFromStore(i64),
    /// The session's props, stored at this epoch and announced by a marker.
    PropsFromStore(u32),
}

/// A live event as the frame to send, skipping stream envelopes the client already has; what
/// must be read from the store first is left to [`read_forwarded`].
fn forward(b: &mut Bound, published: &Published) -> Forward {
    match published.event() {
        LiveEvent::MissedEvents => {
            // Heard on the session's topic and on the host conversation's: the card is told once.
            b.missed_events();
            return Forward::Nothing;
        }
        LiveEvent::Data(envelope) => {
            if envelope.seq <= b.subscribed.stream_cursor {
                return Forward::Nothing;
            }
            // A gap in the live tail (a frame published on another path first) is filled from the store.
            if envelope.seq > b.subscribed.stream_cursor + 1 {
                return Forward::StreamsFromStore(envelope.seq);
            }
            b.subscribed.stream_cursor = envelope.seq;
        }
        LiveEvent::DataStored { seq, .. } => {
            if *seq <= b.subscribed.stream_cursor {
                return Forward::Nothing;
            }
            return Forward::StreamsFromStore(*seq);
        }
        LiveEvent::PropsStored { epoch, .. } => return Forward::PropsFromStore(*epoch),
        LiveEvent::Render { session_id, .. } if session_id == &b.subscribed.session_id => return Forward::Nothing,
        _ => {}
    }
    match published.rendered(|event| frames::live(event).map(Utf8Bytes::from)) {
        Some(frame) => Forward::Frame(frame),
        None => Forward::Nothing,
    }
}

/// The frames of a [`Forward`] that reads the store.
async fn read_forwarded(state: &LiveRoutes, b: &mut Bound, forward: Forward, published: &Published) -> Vec<Utf8Bytes> {
    let frames = match forward {
        Forward::StreamsFromStore(seq) => {
            let heard = match published.event() {
                LiveEvent::Data(envelope) => Some(envelope),
                _ => None,
            };
            streams_from_store(state, b, seq, heard).await
        }
        Forward::PropsFromStore(epoch) => props_from_store(state, b, epoch).await,
        Forward::Nothing => vec![],
        Forward::Frame(frame) => return vec![frame],
    };
    frames.into_iter().map(Utf8Bytes::from).collect()
}

async fn handle(
    state: &LiveRoutes,
    text: &str,
    bound: &mut Option<Bound>,
    bearer_caller: Option<&UpgradeBearer>,
) -> Result<Vec<String>, AgentError> {
    let frame = match parse_frame(text) {
        Ok(frame) => frame,
        Err(refusal) => return Ok(vec![refused(&refusal)]),
    };
    if frame == InboundFrame::Ping {
        return Ok(vec![frames::frame("pong", Value::Null)]);
    }
    if let InboundFrame::Subscribe(payload) = frame {
        return match subscribe(state, payload, bearer_caller).await? {
            SubscribeOutcome::Refused(frame) => Ok(vec![frame]),
            SubscribeOutcome::Bound {
                subscribed,
                frames,
                replay,
            } => {
                // Listen first, then replay and fill what was published meanwhile (after the
                // ack, a piece at a time: `serve` sends `replay`), so nothing falls between.
                let events = state.agent.live_events(&subscribed.session_id);
                let host_events = subscribed
                    .host_topic
                    .as_deref()
                    .map(|topic| state.agent.live_events(topic));
                // Listen for the key's revocation, then check it once more: a revocation between
                // the subscribe's check and now is not missed.
                let key_id = subscribed.caller.key_id.clone();
                let revocation = key_id.as_deref().map(|k| state.agent.live_events(&key_topic(k)));
                if !super::key_still_live(state, key_id.as_deref()).await {
                    return Ok(vec![frames::error(
                        "AUTH_FAILED",
                        "the credentials do not grant this session",
                    )]);
                }
                let watched_key = key_id.as_deref().map(|k| state.key_watch.watch(k));
                *bound = Some(Bound {
                    subscribed,
                    events,
                    host_events,
                    channels: ToolChannels::following(bound.as_mut().map(|b| &mut b.channels)),
                    key_ended: key_ending(revocation, watched_key),
                    missed_notice: None,
                    told_missed: false,
                    replay: Some(replay),
                });
                Ok(frames)
            }
        };
    }
    let Some(b) = bound.as_mut() else {
        return Ok(vec![frames::error("NOT_SUBSCRIBED", "send subscribe first")]);
    };
    let (caller, session_id) = (&b.subscribed.caller, b.subscribed.session_id.clone());
    let session_id = session_id.as_str();
    let user_gesture = match &frame {
        InboundFrame::Action(payload) => Some(("action", payload)),
        InboundFrame::HostContextObserved(payload) => Some(("host_context_observed", payload)),
        _ => None,
    };
    if let Some((kind, payload)) = user_gesture
        && !b.subscribed.role.acts_for_the_user()
    {
        return Ok(vec![role_forbidden(kind, payload)]);
    }
    match frame {
        InboundFrame::Action(payload) => action(state, caller, session_id, &payload).await,
        InboundFrame::HostContextObserved(payload) => {
            state.agent.observe_host_context(caller, session_id, payload).await?;
            Ok(vec![])
        }
        InboundFrame::ChannelUnsubscribe(channel) => {
            b.channels.unsubscribe(&channel);
            Ok(vec![])
        }
        InboundFrame::ChannelSubscribe(channel) => {
            let snapshot = match state.agent.live_snapshot(caller, session_id).await {
                Ok(snapshot) => snapshot,
                Err(AgentError::SessionNotFound) => {
                    return Ok(vec![error_frame_for(&ChannelError::SessionExpired, &channel)]);
                }
                Err(other) => return Err(other),
            };
            let plan = state
                .tool_channels
                .plan(&snapshot.session.contract, session_id, &caller.app_id, &channel)
                .await;
            Ok(b.channels.subscribe(&state.tool_channels, &channel, plan))
        }
        // Handled before binding.
        InboundFrame::Ping | InboundFrame::Subscribe(_) => Ok(vec![]),
        InboundFrame::Unknown(other) => Ok(vec![frames::error(
            "BAD_FRAME",
            &format!("unknown frame type `{}`", svc_domain::text::excerpt(&other)),
        )]),
    }
}

/// The `error` frame of a refused inbound frame.
fn refused(refusal: &FrameRefusal) -> String {
    frames::error(refusal.code, &refusal.message)
}

/// The `data` frames of the envelopes after the socket's cursor up to `seq` (the one heard), read
/// from the store: a gap in the live tail, or an envelope announced by its marker. `heard` is the
/// envelope when the event carried it, passed on when the store cannot be read.
async fn streams_from_store(
    state: &LiveRoutes,
    b: &mut Bound,
    seq: i64,
    heard: Option<&svc_application::ports::agent::StreamEnvelope>,
) -> Vec<String> {
    let mut out = vec![];
    // Every socket of the session hears a marker at once: the envelopes are read and rendered
    // once for all that ask for the same ones, under a share of the replay budget as a replay's
    // piece is read (taken by the one socket that reads).
    let share = state.replay_budget.take(super::replay_pieces::PIECE_BYTES);
    let session_id = &b.subscribed.session_id;
    match state
        .agent
        .stream_frames_until(session_id, b.subscribed.stream_cursor, seq, share, stream_frames)
        .await
    {
        Ok(frames) => out.extend(frames.iter().cloned()),
        // The store could not fill it: say so, and pass on what was heard.
        Err(e) => {
            tracing::warn!(session_id = %session_id, error = ?e, "live stream envelopes not read from the store");
            out.push(frames::frame("system", frames::replay_gap(frames::ReplayGaps::STREAMS)));
            out.extend(heard.map(frames::data));
        }
    }
    b.subscribed.stream_cursor = seq;
    out
}

/// The frames of envelopes read for the live tail: a `replay_gap` when some were left out, then
/// their `data` frames.
fn stream_frames(replay: Replay<svc_application::ports::agent::StreamEnvelope>) -> Vec<String> {
    let gap = replay
        .gap
        .then(|| frames::frame("system", frames::replay_gap(frames::ReplayGaps::STREAMS)));
    gap.into_iter().chain(replay.items.iter().map(frames::data)).collect()
}

/// The `props_update` frame of props announced by their marker (stored at `epoch`): the
/// session's current props and epoch, read from the store. The store answers at least `epoch`
/// (the marker is published after the save, and a later save only moves it on, which is what
/// that save's own event brings anyway). Should it answer less, or not at all, the card is told
/// to resubscribe (`lagged`), which brings it the current props.
async fn props_from_store(state: &LiveRoutes, b: &mut Bound, epoch: u32) -> Vec<String> {
    let subscribed = &b.subscribed;
    match state
        .agent
        .session_for(&subscribed.caller, &subscribed.session_id)
        .await
    {
        Ok(session) if session.head.epoch >= epoch => vec![frames::props_update(
            &subscribed.session_id,
            &session.head.props,
            session.head.epoch,
        )],
        // Gone meanwhile: nothing to show.
        Err(AgentError::SessionNotFound) => vec![],
        other => {
            if let Err(e) = other {
                tracing::warn!(session_id = %subscribed.session_id, error = ?e, "live props not read from the store");
            }
            b.missed_events();
            vec![]
        }
    }
}
