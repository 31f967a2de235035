//! The one flood rule of client frames, on `/ws` and on the polling POST: more than
//! `FRAMES_PER_SECOND` frames in a one-second window are answered `RATE_LIMITED` and not handled;
//! more than twice that ends the channel (a socket closes with 1008; a poller gets 429).

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::{Duration, Instant};

pub const FRAMES_PER_SECOND: u32 = 100;
const WINDOW: Duration = Duration::from_secs(1);
/// Polling gates are dropped once their window is over, when the map holds this many.
const PRUNE_AT: usize = 1024;

/// Counts frames in one-second windows.
pub struct FloodGate {
    window_start: Instant,
    count: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    Warn,
    Close,
}

impl Default for FloodGate {
    fn default() -> Self {
        Self {
            window_start: Instant::now(),
            count: 0,
        }
    }
}

impl FloodGate {
    pub fn admit(&mut self) -> Verdict {
        if self.window_over() {
            self.window_start = Instant::now();
            self.count = 0;
        }
        self.count += 1;
        match self.count {
            n if n > 2 * FRAMES_PER_SECOND => Verdict::Close,
            n if n > FRAMES_PER_SECOND => Verdict::Warn,
            _ => Verdict::Pass,
        }
    }

    fn window_over(&self) -> bool {
        self.window_start.elapsed() >= WINDOW
    }
}

/// The polling POST has no connection to hold a gate: one gate per session, shared by its POSTs.
#[derive(Default)]
pub struct SessionFloodGates {
    gates: Mutex<HashMap<String, FloodGate>>,
}

impl SessionFloodGates {
    pub fn admit(&self, session_id: &str) -> Verdict {
        let mut gates = self.gates.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if gates.len() >= PRUNE_AT {
            gates.retain(|_, gate| !gate.window_over());
        }
        gates.entry(session_id.to_owned()).or_default().admit()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_rate_frames_are_warned_then_the_channel_ends() {
        let gates = SessionFloodGates::default();
        let verdicts: Vec<Verdict> = (0..2 * FRAMES_PER_SECOND + 1).map(|_| gates.admit("s")).collect();
        assert_eq!(verdicts[FRAMES_PER_SECOND as usize - 1], Verdict::Pass);
        assert_eq!(verdicts[FRAMES_PER_SECOND as usize], Verdict::Warn);
        assert_eq!(verdicts[2 * FRAMES_PER_SECOND as usize], Verdict::Close);
        assert_eq!(gates.admit("other"), Verdict::Pass, "each session has its own gate");
    }
}
