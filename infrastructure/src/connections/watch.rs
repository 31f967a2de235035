//! When a connection's watch wakes and what it does then: the first head's deadline, the idle
//! timeout, and a client that stopped reading, as plain decisions over instants so each case can
//! be tested without a socket.
//!
//! A graceful close (the idle timeout's, a drain's) lets the request in progress finish; one
//! whose answer waits on a client that reads nothing would never finish, so writes blocked for
//! the idle timeout close the connection outright. A closing connection is looked at again every
//! idle timeout for that reason.

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
    /// Since when the server's writes have waited on a client that reads nothing.
    pub writes_blocked_since: Option<Instant>,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Deadlines {
    pub head_due_at: Instant,
    pub idle_timeout: Duration,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Due {
    /// Nothing to finish: not even a first head arrived whole, or the client stopped reading
    /// what it asked for.
    Close,
    /// Silent too long: a request in progress (a long-poll) still finishes, then it closes.
    CloseGracefully,
    Nothing,
}

impl Deadlines {
    /// When the watch next wakes.
    pub(super) fn wake_at(&self, seen: Seen, now: Instant) -> Instant {
        let idle_at = seen.last_heard.unwrap_or(now) + self.idle_timeout;
        let next = match (seen.waiting_for_first_head, seen.closing) {
            (true, true) => self.head_due_at,
            (true, false) => idle_at.min(self.head_due_at),
            (false, false) => idle_at,
            // Finishing its request: look again in case its answer stops being read.
            (false, true) => now + self.idle_timeout,
        };
        match seen.writes_blocked_since {
            Some(blocked) => next.min(blocked + self.idle_timeout),
            None => next,
        }
    }

    /// What a wake at `now` does. Every rule is checked on every wake: a wake for the idle
    /// timeout that did nothing would be followed by a wake at the same moment, already past.
    pub(super) fn due(&self, seen: Seen, now: Instant) -> Due {
        if seen.waiting_for_first_head && now >= self.head_due_at {
            return Due::Close;
        }
        if seen
            .writes_blocked_since
            .is_some_and(|blocked| blocked + self.idle_timeout <= now)
        {
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
            writes_blocked_since: None,
        };
        assert_eq!(d.wake_at(seen, opened + SECOND * 9), opened + SECOND * 10);
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
            writes_blocked_since: None,
        };
        let wake = d.wake_at(seen, opened);
        assert_eq!(wake, opened + SECOND);
        assert_eq!(
            d.due(seen, wake),
            Due::CloseGracefully,
            "a wake that does nothing would spin"
        );
        seen.closing = true;
        assert_eq!(d.wake_at(seen, wake), opened + SECOND * 30, "next, the head's deadline");
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
            writes_blocked_since: None,
        };
        assert_eq!(d.wake_at(seen, opened), opened + SECOND * 10);
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
            writes_blocked_since: None,
        };
        assert_eq!(d.wake_at(seen, last), last + SECOND * 60);
        assert_eq!(d.due(seen, last + SECOND * 59), Due::Nothing);
        assert_eq!(d.due(seen, last + SECOND * 60), Due::CloseGracefully);
        let closing = Seen { closing: true, ..seen };
        let now = last + SECOND * 60;
        assert_eq!(
            d.wake_at(closing, now),
            now + SECOND * 60,
            "looked at again, not spun on"
        );
        assert_eq!(
            d.due(closing, now + SECOND * 60),
            Due::Nothing,
            "its request may take long"
        );
    }

    #[test]
    fn a_client_that_stops_reading_is_cut_off_once_writes_have_waited_the_idle_timeout() {
        let opened = Instant::now();
        let d = deadlines(opened, 10, 60);
        let blocked = opened + SECOND * 100;
        let open = Seen {
            waiting_for_first_head: false,
            closing: false,
            last_heard: Some(blocked),
            writes_blocked_since: Some(blocked),
        };
        assert_eq!(d.wake_at(open, blocked), blocked + SECOND * 60);
        assert_eq!(d.due(open, blocked + SECOND * 59), Due::Nothing);
        assert_eq!(d.due(open, blocked + SECOND * 60), Due::Close, "not a graceful close");
        // Closing already (the idle timeout, a drain) when its answer began to wait.
        let closing = Seen {
            closing: true,
            last_heard: Some(opened),
            ..open
        };
        assert_eq!(d.wake_at(closing, blocked), blocked + SECOND * 60);
        assert_eq!(d.due(closing, blocked + SECOND * 60), Due::Close);
    }

    #[test]
    fn a_client_never_heard_from_wakes_again_a_whole_idle_timeout_later() {
        let opened = Instant::now();
        let d = deadlines(opened, 30, 1);
        let seen = Seen {
            waiting_for_first_head: true,
            closing: false,
            last_heard: None,
            writes_blocked_since: None,
        };
        let now = opened + SECOND * 5;
        assert_eq!(d.wake_at(seen, now), now + SECOND);
        assert_eq!(d.due(seen, now + SECOND), Due::Nothing);
        assert_eq!(d.due(seen, opened + SECOND * 30), Due::Close);
    }
}
