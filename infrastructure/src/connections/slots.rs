//! The connection cap: every open connection (a live-channel socket included) holds a slot until
//! its descriptor closes. Past `max_connections`, a few more are admitted for health probes only,
//! so a load balancer still sees the server; past that, a connection is closed at once.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use super::per_address::AddressPlace;

/// What an admitted connection may do.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Admission {
    /// Every route.
    Full,
    /// `/healthz` and `/readyz` only, one request, then closed.
    HealthOnly,
    /// In its peer's probe place, past the peer's own cap (`per_address.rs`): as `HealthOnly`,
    /// but any other request closes the connection unanswered, as that cap does.
    AddressProbe,
}

impl Admission {
    /// Whether the connection answers the health probes alone, once.
    pub fn probes_only(self) -> bool {
        self != Self::Full
    }
}

#[derive(Clone)]
pub struct Slots {
    open: Arc<AtomicUsize>,
    max_connections: usize,
    health_headroom: usize,
}

/// One open connection's place under the cap, given back when dropped, with its place under its
/// peer's cap (`per_address.rs`) if it has one.
pub struct Slot {
    open: Arc<AtomicUsize>,
    _address: Option<AddressPlace>,
}

impl Slot {
    /// This slot, also holding `place` until the connection closes.
    pub fn with_address_place(mut self, place: Option<AddressPlace>) -> Self {
        self._address = place;
        self
    }
}

impl Drop for Slot {
    fn drop(&mut self) {
        self.open.fetch_sub(1, Ordering::AcqRel);
    }
}

impl Slots {
    pub fn new(max_connections: usize, health_headroom: usize) -> Self {
        Self {
            open: Arc::new(AtomicUsize::new(0)),
            max_connections,
            health_headroom,
        }
    }

    /// A slot for a new connection, or `None` when even the headroom is taken.
    pub fn admit(&self, draining: bool) -> Option<(Slot, Admission)> {
        let before = self.open.fetch_add(1, Ordering::AcqRel);
        let slot = Slot {
            open: self.open.clone(),
            _address: None,
        };
        match before {
            // While shutting down, new connections only answer the probes.
            n if n < self.max_connections && !draining => Some((slot, Admission::Full)),
            n if n < self.max_connections + self.health_headroom => Some((slot, Admission::HealthOnly)),
            _ => None,
        }
    }

    pub fn open(&self) -> usize {
        self.open.load(Ordering::Acquire)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn past_the_cap_only_the_headroom_is_admitted_for_probes() {
        let slots = Slots::new(2, 1);
        let a = slots.admit(false).unwrap();
        let b = slots.admit(false).unwrap();
        assert_eq!((a.1, b.1), (Admission::Full, Admission::Full));
        let c = slots.admit(false).unwrap();
        assert_eq!(c.1, Admission::HealthOnly);
        assert!(slots.admit(false).is_none());
        assert_eq!(slots.open(), 3, "a refused connection gives its slot back");
        drop((a, c));
        assert_eq!(slots.admit(false).unwrap().1, Admission::Full);
    }

    #[test]
    fn while_draining_new_connections_only_answer_probes() {
        let slots = Slots::new(2, 1);
        assert_eq!(slots.admit(true).unwrap().1, Admission::HealthOnly);
    }
}
