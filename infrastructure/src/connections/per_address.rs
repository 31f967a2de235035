//! The per-address connection cap (`connections.max_per_address`): one peer may hold at most so
//! many accepted connections at once, so a single client cannot take the whole of
//! `max_connections` (live-channel sockets and long-polls held open) from everyone else. Past it,
//! a new connection from that peer is closed at once; each closing gives its place back.
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

#[derive(Clone)]
pub struct PerAddress {
    /// 0: no cap.
    max: usize,
    open: Arc<Mutex<HashMap<Peer, usize>>>,
}

/// One connection's place under its peer's cap, given back when dropped.
pub struct AddressPlace {
    peer: Peer,
    open: Arc<Mutex<HashMap<Peer, usize>>>,
}

impl Drop for AddressPlace {
    fn drop(&mut self) {
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        if let Some(count) = open.get_mut(&self.peer) {
            *count -= 1;
            if *count == 0 {
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
    /// counted), or the refusal when the peer already holds `max`.
    pub fn admit(&self, peer: Option<IpAddr>) -> Result<Option<AddressPlace>, OverAddressCap> {
        let Some(peer) = peer.filter(|_| self.max > 0).map(counted_as) else {
            return Ok(None);
        };
        let mut open = self.open.lock().unwrap_or_else(PoisonError::into_inner);
        let count = open.entry(peer).or_default();
        if *count >= self.max {
            return Err(OverAddressCap);
        }
        *count += 1;
        Ok(Some(AddressPlace {
            peer,
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

    #[test]
    fn a_peer_past_its_cap_is_refused_until_one_of_its_connections_closes() {
        let cap = PerAddress::new(2);
        let first = cap.admit(ip("203.0.113.9")).unwrap();
        let second = cap.admit(ip("203.0.113.9")).unwrap();
        assert!(first.is_some() && second.is_some());
        assert_eq!(cap.admit(ip("203.0.113.9")).err(), Some(OverAddressCap));
        assert!(
            cap.admit(ip("198.51.100.1")).unwrap().is_some(),
            "another peer has its own"
        );
        drop(first);
        let third = cap.admit(ip("203.0.113.9")).unwrap();
        assert!(third.is_some(), "a closed connection gave its place back");
        drop((second, third));
        assert_eq!(cap.peers(), 0, "no entry outlives its peer's connections");
    }

    #[test]
    fn ipv6_peers_are_counted_by_their_64_and_mapped_ipv4_as_ipv4() {
        let cap = PerAddress::new(1);
        let _held = cap.admit(ip("2001:db8:1:2::1")).unwrap();
        assert_eq!(cap.admit(ip("2001:db8:1:2:ffff::7")).err(), Some(OverAddressCap));
        assert!(cap.admit(ip("2001:db8:1:3::1")).unwrap().is_some());
        let _v4 = cap.admit(ip("192.0.2.1")).unwrap();
        assert_eq!(cap.admit(ip("::ffff:192.0.2.1")).err(), Some(OverAddressCap));
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
