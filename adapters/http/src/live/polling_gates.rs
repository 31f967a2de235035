//! What bounds one session's use of the polling route: the POST's flood rule (the socket's, per
//! session), the GET's rate, and the GETs of a session in flight at once.
//!
//! A GET is in flight from the moment it is admitted until the connection has taken its whole
//! answer ([`PollInFlight`] lives in the answer's body, which the connection pulls a chunk at a
//! time as it sends them: `poll_body`): a client that never reads (an HTTP/2 stream whose window
//! stays at zero, a connection that is never read) or reads a byte at a time keeps its place, so
//! a session holds at most [`POLLS_IN_FLIGHT_PER_SESSION`] answers in server memory, whatever the
//! number of streams or connections it opens.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use super::flood_gate::{FRAMES_PER_SECOND, SessionFloodGates, Verdict};

/// GETs of one session in flight at once. A card holds one; the rest is room for the same card
/// open in a few tabs, or for a poll its runtime gave up on and the server still answers.
pub const POLLS_IN_FLIGHT_PER_SESSION: usize = 4;

/// GETs of one session a second past which they are refused: the POST's limit (twice
/// [`FRAMES_PER_SECOND`]). A card polls again once an answer came, so only an answer a second
/// per change of the session, or a drain of a large replay a budget at a time, comes near it.
pub const POLLS_PER_SECOND: u32 = 2 * FRAMES_PER_SECOND;

/// The polling route's gates, per session.
#[derive(Default)]
pub struct PollingGates {
    frames: SessionFloodGates,
    polls: SessionFloodGates,
    in_flight: Arc<InFlight>,
}

/// Why a GET was refused before it was read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollRefused {
    /// Past [`POLLS_PER_SECOND`].
    TooFast,
    /// The session has [`POLLS_IN_FLIGHT_PER_SESSION`] GETs in flight.
    TooMany,
}

impl PollingGates {
    /// The flood rule of a POSTed client frame.
    pub fn admit_frame(&self, session_id: &str) -> Verdict {
        self.frames.admit(session_id)
    }

    /// A place for one more GET of `session_id`, held until the returned value is dropped.
    pub fn admit_poll(&self, session_id: &str) -> Result<PollInFlight, PollRefused> {
        // The flood gate's `Warn` is for frames, which can be answered with an error frame; a
        // GET is refused only past its `Close`.
        if self.polls.admit(session_id) == Verdict::Close {
            return Err(PollRefused::TooFast);
        }
        self.in_flight.hold(session_id).ok_or(PollRefused::TooMany)
    }
}

/// GETs in flight per session; a session with none has no entry.
#[derive(Default)]
struct InFlight(Mutex<HashMap<String, usize>>);

impl InFlight {
    fn hold(self: &Arc<Self>, session_id: &str) -> Option<PollInFlight> {
        let mut counts = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let count = counts.entry(session_id.to_owned()).or_default();
        if *count >= POLLS_IN_FLIGHT_PER_SESSION {
            return None;
        }
        *count += 1;
        Some(PollInFlight {
            in_flight: self.clone(),
            session_id: session_id.to_owned(),
        })
    }
}

/// One GET in flight; dropping it frees its place.
pub struct PollInFlight {
    in_flight: Arc<InFlight>,
    session_id: String,
}

impl Drop for PollInFlight {
    fn drop(&mut self) {
        let mut counts = self.in_flight.0.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = counts.get_mut(&self.session_id) {
            *count -= 1;
            if *count == 0 {
                counts.remove(&self.session_id);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_session_holds_its_bound_of_gets_and_a_place_frees_when_one_ends() {
        let gates = PollingGates::default();
        let mut held: Vec<PollInFlight> = (0..POLLS_IN_FLIGHT_PER_SESSION)
            .map(|_| gates.admit_poll("s").expect("within the bound"))
            .collect();
        assert_eq!(gates.admit_poll("s").err(), Some(PollRefused::TooMany));
        assert!(gates.admit_poll("other").is_ok(), "each session has its own bound");
        held.pop();
        let _again = gates.admit_poll("s").expect("the ended GET's place is free");
        drop(held);
        drop(_again);
        assert!(
            gates.in_flight.0.lock().unwrap().is_empty(),
            "nothing kept for a session with no GET in flight"
        );
    }

    #[test]
    fn past_the_rate_gets_are_refused_and_posts_keep_their_own_gate() {
        let gates = PollingGates::default();
        for _ in 0..POLLS_PER_SECOND {
            // Each ends at once, so only the rate can refuse.
            assert!(gates.admit_poll("s").is_ok());
        }
        assert_eq!(gates.admit_poll("s").err(), Some(PollRefused::TooFast));
        assert_eq!(
            gates.admit_frame("s"),
            Verdict::Pass,
            "GETs do not spend the POST's gate"
        );
    }
}
