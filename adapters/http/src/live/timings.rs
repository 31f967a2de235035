//! The live channel's clocks besides the heartbeat: how long a socket may stay without a bound
//! session (and a subscribe may wait for the replay budget before its `ack`), and how often the
//! keys of bound sockets are asked whether they still authenticate.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveTimings {
    /// A socket with no bound session this long after it opened is closed (1008): the heartbeat
    /// alone would keep a socket that never subscribes open for as long as its peer answers
    /// pings, holding a place under the connection cap.
    pub subscribe_within: Duration,
    /// How often the replica asks again whether the keys of its bound sockets authenticate. A
    /// revocation through `/ops` is announced on the bus and ends the channel at once; a key
    /// that expires, or one revoked in the keys file, announces nothing, and ends its channels
    /// within this time. Each sweep reads each distinct key once, however many cards hold it.
    pub key_recheck: Duration,
}

/// Longest a subscribe waits for a share of the replay budget before its `ack` (its first
/// reads, which tell the ack's gaps): meanwhile the socket reads nothing else, so past it the
/// subscribe is answered `SERVER_BUSY`. Under the 15 s the mount runtime gives a socket to open
/// and be acked (it then drops the socket and opens another), so the answer comes first.
const REPLAY_SHARE_BEFORE_ACK: Duration = Duration::from_secs(10);

impl LiveTimings {
    /// How long a subscribe may wait for a share of the replay budget before its `ack`:
    /// [`REPLAY_SHARE_BEFORE_ACK`], or the socket's time to subscribe when that is shorter.
    pub fn replay_share_before_ack(&self) -> Duration {
        self.subscribe_within.min(REPLAY_SHARE_BEFORE_ACK)
    }
}

impl Default for LiveTimings {
    fn default() -> Self {
        Self {
            subscribe_within: Duration::from_secs(30),
            key_recheck: Duration::from_secs(60),
        }
    }
}
