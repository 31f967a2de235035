//! Open files: every live-channel socket is a file descriptor, and the common default soft limit
//! (1024) stops a server near a thousand cards. At start-up the soft limit is raised to the hard
//! limit (as Go's runtime and nginx's `worker_rlimit_nofile` do); when even that is low, a
//! warning names the knob. At the limit, accepting pauses instead of spinning (poem retries a
//! failed accept at once), and the log says why new connections wait.

use std::io;
use std::time::{Duration, Instant};

use poem::http::uri::Scheme;
use poem::listener::Acceptor;
use poem::web::{LocalAddr, RemoteAddr};

/// Below this many descriptors a warning suggests raising `ulimit -n` / `LimitNOFILE`.
const COMFORTABLE_LIMIT: u64 = 8192;
/// Pause before retrying an accept that failed for lack of descriptors.
const EXHAUSTED_PAUSE: Duration = Duration::from_millis(100);
/// At most one warning per this interval while descriptors are exhausted.
const WARN_EVERY: Duration = Duration::from_secs(10);

/// Raises the soft open-file limit to the hard limit; returns (before, after).
#[cfg(unix)]
pub fn raise_limit() -> Option<(u64, u64)> {
    use rustix::process::{Resource, Rlimit, getrlimit, setrlimit};
    let limit = getrlimit(Resource::Nofile);
    let before = limit.current?;
    let after = match limit.maximum {
        Some(hard) if hard > before => {
            let raised = Rlimit {
                current: Some(hard),
                maximum: Some(hard),
            };
            if setrlimit(Resource::Nofile, raised).is_ok() {
                hard
            } else {
                before
            }
        }
        Some(_) => before,
        // No hard limit: a generous soft one.
        None => {
            let raised = Rlimit {
                current: Some(1 << 20),
                maximum: None,
            };
            if setrlimit(Resource::Nofile, raised).is_ok() {
                1 << 20
            } else {
                before
            }
        }
    };
    if after != before {
        tracing::info!(before, after, "raised the open-file limit");
    }
    if after < COMFORTABLE_LIMIT {
        tracing::warn!(
            limit = after,
            "the open-file limit is low: each connection (a live-channel socket too) holds one; raise it with `ulimit -n` or systemd's LimitNOFILE"
        );
    }
    Some((before, after))
}

#[cfg(not(unix))]
pub fn raise_limit() -> Option<(u64, u64)> {
    None
}

fn exhausted(error: &io::Error) -> bool {
    // EMFILE (per process) and ENFILE (system-wide).
    matches!(error.raw_os_error(), Some(24 | 23))
}

/// An acceptor that waits out descriptor exhaustion instead of failing at once in a loop.
pub struct PatientAcceptor<A> {
    inner: A,
    last_warning: Option<Instant>,
}

impl<A> PatientAcceptor<A> {
    pub fn new(inner: A) -> Self {
        Self {
            inner,
            last_warning: None,
        }
    }
}

impl<A: Acceptor> Acceptor for PatientAcceptor<A> {
    type Io = A::Io;

    fn local_addr(&self) -> Vec<LocalAddr> {
        self.inner.local_addr()
    }

    async fn accept(&mut self) -> io::Result<(Self::Io, LocalAddr, RemoteAddr, Scheme)> {
        loop {
            match self.inner.accept().await {
                Err(e) if exhausted(&e) => {
                    if self.last_warning.is_none_or(|at| at.elapsed() >= WARN_EVERY) {
                        self.last_warning = Some(Instant::now());
                        tracing::warn!(error = %e, "out of file descriptors: new connections wait until sockets close; raise `ulimit -n`");
                    }
                    tokio::time::sleep(EXHAUSTED_PAUSE).await;
                }
                other => return other,
            }
        }
    }
}
