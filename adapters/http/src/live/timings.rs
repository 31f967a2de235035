//! The live channel's two clocks besides the heartbeat: how long a socket may stay without a
//! bound session, and how often a bound socket asks whether its key still authenticates.

use std::time::Duration;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LiveTimings {
    /// A socket with no bound session this long after it opened is closed (1008): the heartbeat
    /// alone would keep a socket that never subscribes open for as long as its peer answers
    /// pings, holding a place under the connection cap.
    pub subscribe_within: Duration,
    /// How often a bound socket checks its key again. A revocation through `/ops` is announced
    /// on the bus and ends the channel at once; a key that expires, or one revoked in the keys
    /// file, announces nothing, and ends the channel within this time. Each check is a read of
    /// the key's store: a minute keeps 10,000 cards at about 170 reads a second.
    pub key_recheck: Duration,
}

impl Default for LiveTimings {
    fn default() -> Self {
        Self {
            subscribe_within: Duration::from_secs(30),
            key_recheck: Duration::from_secs(60),
        }
    }
}
