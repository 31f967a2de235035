//! The HTTP server loop (in place of `poem::Server`, which offers no header-read timeout and no
//! connection cap): accepts connections under the cap, serves each with hyper's header-read
//! deadline and an idle deadline, and drains on shutdown while still answering health probes.

mod activity;
mod connection;
mod detached_head;
mod drained_body;
mod guarded_body;
mod no_delay;
mod per_address;
mod protocol;
mod self_wakes;
mod slots;
mod unauthenticated_bodies;
mod watch;

use std::future::Future;
use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use poem::IntoResponse;
use poem::endpoint::BoxEndpoint;
use poem::http::StatusCode;
use poem::http::uri::Scheme;
use poem::listener::Acceptor;
use poem::web::{LocalAddr, RemoteAddr};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub use self::guarded_body::BodyBudget;
pub use self::no_delay::NoDelay;
pub use self::unauthenticated_bodies::UnauthenticatedBodies;

use crate::settings::ConnectionSettings;

use self::connection::{Accepted, Stop};
use self::per_address::PerAddress;
use self::slots::{Admission, Slots};

/// Descriptors kept free of connections: the database pool, the data files, the logs.
const RESERVED_DESCRIPTORS: u64 = 256;

/// `[connections]` in the configuration.
#[derive(Debug, Clone)]
pub struct ConnectionLimits {
    /// A request head must arrive within this of the connection opening or the previous response.
    pub header_read_timeout: Duration,
    /// A connection silent both ways for this long is closed (after a request in progress); a
    /// request body that pauses this long while its handler waits is cut off (`guarded_body.rs`).
    pub idle_timeout: Duration,
    /// A request body must arrive whole within this of its handler's first read.
    pub body_read_timeout: Duration,
    /// The bytes all request bodies still arriving may hold at once, but those of
    /// `unauthenticated_bodies`' routes.
    pub body_budget: BodyBudget,
    /// The routes that take no credential, whose bodies have a budget of their own.
    pub unauthenticated_bodies: UnauthenticatedBodies,
    /// Connections served in full, live-channel sockets included.
    pub max_connections: usize,
    /// Connections past the cap admitted for `/healthz` and `/readyz` only.
    pub health_headroom: usize,
    /// Connections one peer address may hold at once (0: no such cap; `per_address.rs`).
    pub max_per_address: usize,
}

impl ConnectionLimits {
    /// `[connections]`: deadlines and the cap (their ranges are checked at load,
    /// `settings::bounds`).
    fn from_settings(c: &ConnectionSettings) -> Self {
        Self {
            header_read_timeout: Duration::from_secs(c.header_read_timeout_seconds),
            idle_timeout: Duration::from_secs(c.idle_timeout_seconds),
            body_read_timeout: Duration::from_secs(c.body_read_timeout_seconds),
            body_budget: BodyBudget::of_mib(c.body_bytes_in_flight_mib),
            unauthenticated_bodies: UnauthenticatedBodies {
                budget: BodyBudget::of_mib(c.unauthenticated_body_bytes_in_flight_mib),
                paths: &[],
            },
            max_connections: c.max_connections,
            health_headroom: c.health_headroom,
            max_per_address: c.max_per_address,
        }
    }

    /// [`ConnectionLimits::from_settings`] for this process: each connection (a live-channel
    /// socket too) is a descriptor, so the soft open-file limit is raised before accepting and
    /// the cap fitted to what it became.
    pub fn for_this_process(c: &ConnectionSettings) -> Self {
        let limits = Self::from_settings(c);
        let open_file_limit = crate::open_files::raise_limit().map(|(_, after)| after);
        limits.fitted_to(open_file_limit)
    }

    /// Reads the bodies of the routes under `paths` (path prefixes) under their own budget.
    pub fn with_unauthenticated_paths(mut self, paths: &'static [&'static str]) -> Self {
        self.unauthenticated_bodies.paths = paths;
        self
    }

    /// The budget a body sent to `path` counts against.
    fn body_budget_of(&self, path: &str) -> &BodyBudget {
        if self.unauthenticated_bodies.serves(path) {
            &self.unauthenticated_bodies.budget
        } else {
            &self.body_budget
        }
    }

    /// Lowers the cap so that connections cannot exhaust the open-file limit.
    pub fn fitted_to(mut self, open_file_limit: Option<u64>) -> Self {
        let Some(limit) = open_file_limit else { return self };
        let room = limit.saturating_sub(RESERVED_DESCRIPTORS);
        let wanted = (self.max_connections + self.health_headroom) as u64;
        if wanted > room {
            let fitted = usize::try_from(room)
                .unwrap_or(usize::MAX)
                .saturating_sub(self.health_headroom)
                .max(1);
            tracing::warn!(
                configured = self.max_connections,
                fitted,
                open_file_limit = limit,
                "connections.max_connections lowered to fit the open-file limit; raise `ulimit -n` to allow more"
            );
            self.max_connections = fitted;
        }
        self
    }
}

/// The health probes of a server: the routes a connection past the cap (or opened during a
/// drain, or in its address's probe place) may still call, and the answer to anything else (on a
/// connection in an address's probe place: none, it is closed).
#[derive(Debug, Clone, Copy)]
pub struct Probes {
    pub paths: &'static [&'static str],
    pub refused: fn() -> poem::Response,
}

impl Probes {
    /// `svc serve`'s: `/healthz` and `/readyz`; anything else is 503 `OVERLOADED`.
    pub const SERVER: Self = Self {
        paths: &["/healthz", "/readyz"],
        refused: || {
            let body = serde_json::json!({
                "error": { "code": "OVERLOADED", "message": "the server is at its connection limit or shutting down; only /healthz and /readyz answer on this connection" }
            });
            (StatusCode::SERVICE_UNAVAILABLE, poem::web::Json(body)).into_response()
        },
    };
}

/// Set once shutdown begins; `/readyz` reads it to answer 503 at once.
#[derive(Debug, Clone, Default)]
pub struct Draining(Arc<AtomicBool>);

impl Draining {
    pub fn is_set(&self) -> bool {
        self.0.load(Ordering::Acquire)
    }

    fn set(&self) {
        self.0.store(true, Ordering::Release);
    }
}

/// Serves until `shutdown` resolves; then drains: `/readyz` answers 503, new connections answer
/// only the `probes`, requests in progress finish within `grace`, and whatever remains is dropped.
pub async fn serve<A: Acceptor>(
    mut acceptor: A,
    endpoint: BoxEndpoint<'static>,
    limits: ConnectionLimits,
    probes: Probes,
    shutdown: impl Future<Output = ()>,
    grace: Duration,
    draining: Draining,
) -> io::Result<()> {
    let endpoint = Arc::new(endpoint);
    let slots = Slots::new(limits.max_connections, limits.health_headroom);
    let per_address = PerAddress::new(limits.max_per_address);
    let stop = Stop {
        drain: CancellationToken::new(),
        abort: CancellationToken::new(),
    };
    // Connections served in full; shutdown waits for these.
    let in_service = TaskTracker::new();
    let accept = |accepted: io::Result<(A::Io, LocalAddr, RemoteAddr, Scheme)>| {
        let Ok((io, local, remote, scheme)) = accepted else {
            return;
        };
        // Refused connections are dropped, which closes them at once. A peer past its own cap
        // (and its probe place) is refused before it takes a place under the server's.
        let peer = remote.as_socket_addr().map(|address| address.ip());
        let Ok(address_place) = per_address.admit(peer) else {
            tracing::debug!(
                peers = per_address.peers(),
                "connection refused: its address is at its connection limit"
            );
            return;
        };
        let Some((slot, admission)) = slots.admit(draining.is_set()) else {
            tracing::debug!(open = slots.open(), "connection refused: at the connection limit");
            return;
        };
        let admission = if address_place.as_ref().is_some_and(|place| place.probe_only()) {
            Admission::AddressProbe
        } else {
            admission
        };
        let slot = slot.with_address_place(address_place);
        let accepted = Accepted {
            io,
            local,
            remote,
            scheme,
            slot,
            admission,
            probes,
        };
        let serving = self_wakes::RepolledWhenSelfWoken::new(connection::serve(
            accepted,
            endpoint.clone(),
            limits.clone(),
            stop.clone(),
        ));
        match admission {
            Admission::Full => drop(in_service.spawn(serving)),
            Admission::HealthOnly | Admission::AddressProbe => drop(tokio::spawn(serving)),
        }
    };

    tracing::info!(
        max_connections = limits.max_connections,
        max_per_address = limits.max_per_address,
        header_read_timeout_seconds = limits.header_read_timeout.as_secs(),
        idle_timeout_seconds = limits.idle_timeout.as_secs(),
        "server started"
    );
    tokio::pin!(shutdown);
    loop {
        tokio::select! {
            () = &mut shutdown => break,
            accepted = acceptor.accept() => accept(accepted),
        }
    }

    draining.set();
    stop.drain.cancel();
    in_service.close();
    tracing::info!(
        grace_seconds = grace.as_secs_f32(),
        "draining: finishing requests in progress"
    );
    let deadline = tokio::time::sleep(grace);
    tokio::pin!(deadline);
    loop {
        tokio::select! {
            () = in_service.wait() => break,
            () = &mut deadline => {
                tracing::warn!(left = in_service.len(), "grace period over: dropping the requests still in progress");
                break;
            }
            accepted = acceptor.accept() => accept(accepted),
        }
    }
    stop.abort.cancel();
    // The aborted connections drop their requests at their next poll: waited for, so what a
    // dropped request leaves behind (a hosted render's refund) is under way when this returns.
    if tokio::time::timeout(ABORTED_PATIENCE, in_service.wait()).await.is_err() {
        tracing::warn!(
            left = in_service.len(),
            "connections still open after the grace period ended them"
        );
    }
    Ok(())
}

/// How long the aborted connections get to drop their requests.
const ABORTED_PATIENCE: Duration = Duration::from_secs(1);

#[cfg(test)]
mod tests {
    use super::*;

    fn limits(max_connections: usize) -> ConnectionLimits {
        ConnectionLimits {
            header_read_timeout: Duration::from_secs(10),
            idle_timeout: Duration::from_secs(60),
            body_read_timeout: Duration::from_secs(60),
            body_budget: BodyBudget::new(1 << 20),
            unauthenticated_bodies: UnauthenticatedBodies {
                budget: BodyBudget::new(1 << 20),
                paths: &[],
            },
            max_connections,
            health_headroom: 16,
            max_per_address: 0,
        }
    }

    #[test]
    fn the_cap_leaves_descriptors_for_the_database_and_the_probes() {
        assert_eq!(limits(10_000).fitted_to(Some(1024)).max_connections, 1024 - 256 - 16);
        assert_eq!(limits(500).fitted_to(Some(1024)).max_connections, 500);
        assert_eq!(limits(10_000).fitted_to(None).max_connections, 10_000);
        assert_eq!(limits(10_000).fitted_to(Some(100)).max_connections, 1, "never zero");
    }
}
