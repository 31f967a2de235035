//! The per-address connection cap (`connections.max_per_address`): one peer may hold at most so
//! many accepted connections at once, so a single client cannot take the whole of
//! `max_connections` (live-channel sockets and long-polls held open) from everyone else. Past it,
//! a new connection from that peer is closed at once; each closing gives its place back.
//!
//! But one: past its cap, a peer has [`PROBE_PLACES`] more place for a health probe alone, since
//! the orchestrator or load balancer that probes the server may share the address of the clients
//! (one host, a proxy) and would otherwise see a healthy server as dead. A connection in that
//! place answers one probe ([`super::Probes`]: `/healthz` or `/readyz`, the registry's `/health`)
//! and closes; any other request on it is closed unanswered, as a connection past the cap is, and
//! a silent one is closed by the header-read timeout (`connection.rs`).
//!
//! Counted by the TCP peer, the only address known before a request is read: behind a reverse
//! proxy every connection is the proxy's, which is why the cap is off by default (README,
//! "Connections"). An IPv6 peer is counted by its /64, the block one host or one subscriber is
//! usually given whole; an IPv4-mapped IPv6 address counts as the IPv4 address it is.

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex, PoisonError};

/// Who a connection is counted against.
type Peer = IpAddr;

/// Places a peer has past its cap, for a health probe alone.
pub const PROBE_PLACES: usize = 1;

/// The places one peer holds.
#[derive(Debug, Default)]
struct Held {
    /// Under the cap.
    served: usize,
    /// Past it, for a probe ([`PROBE_PLACES`] at most).
    probing: usize,
}

type Open = Arc<Mutex<HashMap<Peer, Held>>>;

#[derive(Clone)]
pub struct PerAddress {
    /// 0: no cap.
    max: usize,
    open: Open,
}

/// One connection's place under its peer's cap (or in its probe place), given back when dropped.
pub struct AddressPlace {
    peer: Peer,
    probe_only: bool,
    open: Open,
}

impl AddressPlace {
    /// Whether this is the peer's place past its cap: a health probe alone may use it.
    pub fn probe_only(&self) -> bool {
        self.probe_only
    }
}

impl Drop for AddressPlace {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(held) = open.get_mut(&self.peer) {
            let count = if self.probe_only {
                &mut held.probing
            } else {
                &mut held.served
            };
            *count -= 1;
            if held.served == 0 && held.probing == 0 {
                // No entry outlives its peer's last connection: the map is as large as the
                // peers connected now.
                open.remove(&self.peer);
            }
        }
    }
}

/// Why a connection was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct OverAddressCap;

impl PerAddress {
    pub fn new(max: usize) -> Self {
        Self {
            max,
            open: Arc::default(),
        }
    }

    /// A place for a new connection from `peer` (`None`: not over TCP, or the cap is off: not
    /// counted): under the cap, else the probe place ([`AddressPlace::probe_only`]), or the
    /// refusal when the peer holds `max` and its probe place too.
    pub fn admit(&self, peer: Option<IpAddr>) -> Result<Option<AddressPlace>, OverAddressCap> {
        let Some(peer) = peer.filter(|_| self.max > 0).map(counted_as) else {
            return Ok(None);
        };
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let held = open.entry(peer).or_default();
        let probe_only = if held.served < self.max {
            held.served += 1;
            false
        } else if held.probing < PROBE_PLACES {
            held.probing += 1;
            true
        } else {
            return Err(OverAddressCap);
        };
        Ok(Some(AddressPlace {
            peer,
            probe_only,
            open: Arc::clone(&self.open),
        }))
    }

    /// Peers holding at least one connection (for the log).
    pub fn peers(&self) -> usize {
        self.open.lock().unwrap_or_else(PoisonError::into_inner).len()
    }
}

/// The address `ip` is counted as: itself for IPv4, its /64 for IPv6.
fn counted_as(ip: IpAddr) -> Peer {
    match ip.to_canonical() {
        IpAddr::V4(v4) => IpAddr::V4(v4),
        IpAddr::V6(v6) => IpAddr::V6((u128::from(v6) & !u128::from(u64::MAX)).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ip(text: &str) -> Option<IpAddr> {
        Some(text.parse().unwrap())
    }

    /// The place `peer` is admitted to, `None` when it is refused.
    fn place(cap: &PerAddress, peer: &str) -> Option<AddressPlace> {
        cap.admit(ip(peer)).ok().map(|place| place.expect("counted"))
    }

    #[test]
    fn a_peer_past_its_cap_is_refused_until_one_of_its_connections_closes() {
        let cap = PerAddress::new(2);
        let first = place(&cap, "203.0.113.9").unwrap();
        let second = place(&cap, "203.0.113.9").unwrap();
        assert!(!first.probe_only() && !second.probe_only());
        let probe = place(&cap, "203.0.113.9").expect("past the cap, the probe place");
        assert!(probe.probe_only());
        assert!(place(&cap, "203.0.113.9").is_none(), "past the probe place too");
        let other = place(&cap, "198.51.100.1").expect("another peer has its own");
        assert!(!other.probe_only());
        drop(first);
        let third = place(&cap, "203.0.113.9").expect("a closed connection gave its place back");
        assert!(!third.probe_only());
        drop(probe);
        let probe = place(&cap, "203.0.113.9").expect("a closed probe gave its place back");
        assert!(probe.probe_only());
        drop((second, third, probe, other));
        assert_eq!(cap.peers(), 0, "no entry outlives its peer's connections");
    }

    #[test]
    fn a_place_given_back_under_the_cap_is_served_again_while_the_probe_place_is_held() {
        let cap = PerAddress::new(1);
        let served = place(&cap, "203.0.113.9").unwrap();
        let probe = place(&cap, "203.0.113.9").unwrap();
        drop(served);
        let again = place(&cap, "203.0.113.9").unwrap();
        assert!(!again.probe_only(), "the served place is free while the probe is held");
        drop((probe, again));
        assert_eq!(cap.peers(), 0);
    }

    #[test]
    fn ipv6_peers_are_counted_by_their_64_and_mapped_ipv4_as_ipv4() {
        let cap = PerAddress::new(1);
        let _held = place(&cap, "2001:db8:1:2::1").unwrap();
        let _probe = place(&cap, "2001:db8:1:2:ffff::5").unwrap();
        assert!(place(&cap, "2001:db8:1:2:ffff::7").is_none());
        assert!(!place(&cap, "2001:db8:1:3::1").unwrap().probe_only());
        let _v4 = place(&cap, "192.0.2.1").unwrap();
        let _v4_probe = place(&cap, "192.0.2.1").unwrap();
        assert!(place(&cap, "::ffff:192.0.2.1").is_none());
    }

    #[test]
    fn with_no_cap_or_no_address_nothing_is_counted() {
        let off = PerAddress::new(0);
        let held: Vec<_> = (0..5).map(|_| off.admit(ip("127.0.0.1")).unwrap()).collect();
        assert!(held.iter().all(Option::is_none));
        assert!(PerAddress::new(1).admit(None).unwrap().is_none());
        assert_eq!(off.peers(), 0);
    }
}
