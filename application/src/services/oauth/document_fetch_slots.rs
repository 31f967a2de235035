//! How many Client ID Metadata Documents are fetched at once: a bound for the server, and a
//! smaller share for each host inside it. Anyone may name a URL `client_id`, and a fetch may wait
//! its whole timeout on a host that never answers (its name lookup holding a blocking thread
//! meanwhile). Past either bound a request is refused at once rather than queued behind
//! strangers' URLs; the host's share keeps one slow host from taking every slot and stopping
//! every other client's authorization. Hosts are told apart by name, so someone holding a
//! wildcard domain can still take every slot with many names: the server's bound is what holds
//! then (docs/oauth.md).

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::client_documents::ClientDocumentRefused;

/// Documents fetched at once by this server.
pub const CLIENT_DOCUMENT_FETCHES_AT_ONCE: usize = 16;
/// Documents fetched at once from one host (its name, whatever the port).
pub const CLIENT_DOCUMENT_FETCHES_PER_HOST: usize = 4;

#[derive(Clone)]
pub(super) struct DocumentFetchSlots {
    server: Arc<Semaphore>,
    /// Fetches in flight per host; a host leaves the map when its last fetch ends.
    hosts: Arc<Mutex<HashMap<String, usize>>>,
}

/// Held for the length of one fetch; gives its slot and its host's share back when dropped.
pub(super) struct DocumentFetchSlot {
    _server: OwnedSemaphorePermit,
    hosts: Arc<Mutex<HashMap<String, usize>>>,
    host: String,
}

impl DocumentFetchSlots {
    pub(super) fn new() -> Self {
        Self {
            server: Arc::new(Semaphore::new(CLIENT_DOCUMENT_FETCHES_AT_ONCE)),
            hosts: Arc::default(),
        }
    }

    /// A slot for one fetch from `host`, or why there is none now.
    pub(super) fn try_take(&self, host: &str) -> Result<DocumentFetchSlot, ClientDocumentRefused> {
        let mut hosts = self.hosts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let in_flight = hosts.get(host).copied().unwrap_or(0);
        if in_flight >= CLIENT_DOCUMENT_FETCHES_PER_HOST {
            return Err(ClientDocumentRefused::HostBusy);
        }
        let server = self
            .server
            .clone()
            .try_acquire_owned()
            .map_err(|_| ClientDocumentRefused::Busy)?;
        hosts.insert(host.to_owned(), in_flight + 1);
        Ok(DocumentFetchSlot {
            _server: server,
            hosts: self.hosts.clone(),
            host: host.to_owned(),
        })
    }

    #[cfg(test)]
    pub(super) fn free(&self) -> usize {
        self.server.available_permits()
    }
}

impl Drop for DocumentFetchSlot {
    fn drop(&mut self) {
        let mut hosts = self.hosts.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        if let Some(in_flight) = hosts.get_mut(&self.host) {
            *in_flight -= 1;
            if *in_flight == 0 {
                hosts.remove(&self.host);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_past_its_share_is_refused_while_other_hosts_are_fetched() {
        let slots = DocumentFetchSlots::new();
        let held: Vec<_> = (0..CLIENT_DOCUMENT_FETCHES_PER_HOST)
            .map(|_| slots.try_take("slow.example").expect("within the share"))
            .collect();
        assert!(matches!(
            slots.try_take("slow.example"),
            Err(ClientDocumentRefused::HostBusy)
        ));
        let other = slots.try_take("other.example").expect("another host's share");
        drop(other);
        drop(held);
        assert_eq!(slots.free(), CLIENT_DOCUMENT_FETCHES_AT_ONCE, "every slot given back");
        assert!(slots.hosts.lock().unwrap().is_empty(), "no host left behind");
        slots.try_take("slow.example").expect("the host's share is free again");
    }

    #[test]
    fn the_server_bound_holds_across_hosts() {
        let slots = DocumentFetchSlots::new();
        let _held: Vec<_> = (0..CLIENT_DOCUMENT_FETCHES_AT_ONCE)
            .map(|i| {
                slots
                    .try_take(&format!("host{}.example", i % 5))
                    .expect("within both bounds")
            })
            .collect();
        assert!(matches!(
            slots.try_take("fresh.example"),
            Err(ClientDocumentRefused::Busy)
        ));
        assert_eq!(
            slots.hosts.lock().unwrap().get("fresh.example"),
            None,
            "a refused fetch holds no share"
        );
    }
}
