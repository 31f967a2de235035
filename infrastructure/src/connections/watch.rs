//! When a connection's watch wakes and what it does then: the first head's deadline and the idle
//! timeout, as plain decisions over instants so each case can be tested without a socket.

use std::time::Duration;

use tokio::time::Instant;

/// The connection as the watch sees it at one moment.
#[derive(Debug, Clone, Copy)]
pub(super) struct Seen {
    /// HTTP/1: no request has reached the service yet, and one is due by [`Deadlines::head_due_at`].
    pub waiting_for_first_head: bool,
    /// A graceful close was asked for (a drain, or the idle timeout).
    pub closing: bool,
    /// When a byte last moved, once the client has sent any.
    pub last_heard: Option<Instant>,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Deadlines {
    pub head_due_at: Instant,
    pub idle_timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Due {
    /// Nothing to finish: not even a first head arrived whole.
    Close,
    /// Silent too long: a request in progress (a long-poll) still finishes, then it closes.
    CloseGracefully,
    Nothing,
}

impl Deadlines {
    /// When the watch next wakes; `None` once closing with no head due (the connection ends by itself).
    pub(super) fn wake_at(&self, seen: Seen, now: Instant) -> Option<Instant> {
        let idle_at = seen.last_heard.unwrap_or(now) + self.idle_timeout;
        match (seen.waiting_for_first_head, seen.closing) {
            (true, true) => Some(self.head_due_at),
            (true, false) => Some(idle_at.min(self.head_due_at)),
            (false, false) => Some(idle_at),
            (false, true) => None,
        }
    }

    /// What a wake at `now` does. Both rules are checked on every wake: a wake for the idle
    /// timeout that did nothing would be followed by a wake at the same moment, already past.
    pub(super) fn due(&self, seen: Seen, now: Instant) -> Due {
        if seen.waiting_for_first_head && now >= self.head_due_at {
            return Due::Close;
        }
        match seen.last_heard {
            Some(last) if !seen.closing && last + self.idle_timeout <= now => Due::CloseGracefully,
            _ => Due::Nothing,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SECOND: Duration = Duration::from_secs(1);

    fn deadlines(opened: Instant, header_read: u64, idle: u64) -> Deadlines {
        Deadlines {
            head_due_at: opened + Duration::from_secs(header_read),
            idle_timeout: Duration::from_secs(idle),
        }
    }

    #[test]
    fn an_unfinished_first_head_is_cut_off_at_its_deadline_from_the_accept() {
        let opened = Instant::now();
        let d = deadlines(opened, 10, 60);
        let seen = Seen {
            waiting_for_first_head: true,
            closing: false,
            last_heard: Some(opened + SECOND * 9),
        };
        assert_eq!(d.wake_at(seen, opened + SECOND * 9), Some(opened + SECOND * 10));
        assert_eq!(d.due(seen, opened + SECOND * 10), Due::Close);
        assert_eq!(d.due(seen, opened + SECOND * 9), Due::Nothing);
    }

    #[test]
    fn an_idle_timeout_shorter_than_the_head_deadline_acts_when_it_wakes() {
        // idle 1 s, header read 30 s: a client sent one byte and stopped.
        let opened = Instant::now();
        let d = deadlines(opened, 30, 1);
        let mut seen = Seen {
            waiting_for_first_head: true,
            closing: false,
            last_heard: Some(opened),
        };
        let wake = d.wake_at(seen, opened).unwrap();
        assert_eq!(wake, opened + SECOND);
        assert_eq!(
            d.due(seen, wake),
            Due::CloseGracefully,
            "a wake that does nothing would spin"
        );
        seen.closing = true;
        assert_eq!(
            d.wake_at(seen, wake),
            Some(opened + SECOND * 30),
            "next, the head's deadline"
        );
        assert_eq!(d.due(seen, opened + SECOND * 30), Due::Close);
    }

    #[test]
    fn a_drain_does_not_extend_the_first_heads_deadline() {
        let opened = Instant::now();
        let d = deadlines(opened, 10, 60);
        let seen = Seen {
            waiting_for_first_head: true,
            closing: true,
            last_heard: Some(opened),
        };
        assert_eq!(d.wake_at(seen, opened), Some(opened + SECOND * 10));
        assert_eq!(d.due(seen, opened + SECOND * 10), Due::Close);
    }

    #[test]
    fn after_the_first_request_only_the_idle_timeout_applies() {
        let opened = Instant::now();
        let d = deadlines(opened, 10, 60);
        let last = opened + SECOND * 100;
        let seen = Seen {
            waiting_for_first_head: false,
            closing: false,
            last_heard: Some(last),
        };
        assert_eq!(d.wake_at(seen, last), Some(last + SECOND * 60));
        assert_eq!(d.due(seen, last + SECOND * 59), Due::Nothing);
        assert_eq!(d.due(seen, last + SECOND * 60), Due::CloseGracefully);
        let closing = Seen { closing: true, ..seen };
        assert_eq!(d.wake_at(closing, last), None, "a closing connection ends by itself");
    }

    #[test]
    fn a_client_never_heard_from_wakes_again_a_whole_idle_timeout_later() {
        let opened = Instant::now();
        let d = deadlines(opened, 30, 1);
        let seen = Seen {
            waiting_for_first_head: true,
            closing: false,
            last_heard: None,
        };
        let now = opened + SECOND * 5;
        assert_eq!(d.wake_at(seen, now), Some(now + SECOND));
        assert_eq!(d.due(seen, now + SECOND), Due::Nothing);
        assert_eq!(d.due(seen, opened + SECOND * 30), Due::Close);
    }
}
