//! How many Client ID Metadata Documents are fetched at once: a bound for the server, and a
//! smaller share for each site inside it. Anyone may name a URL `client_id`, and a fetch may wait
//! its whole timeout on a host that never answers (its name lookup holding a blocking thread
//! meanwhile). Past either bound a request is refused at once rather than queued behind
//! strangers' URLs; the site's share keeps one slow site from taking every slot and stopping
//! every other client's authorization.
//!
//! A site is the host's registrable domain (its public suffix and one label more, from the Public
//! Suffix List compiled into the `psl` crate): whoever holds a wildcard domain has every name
//! under it, so `a.evil.example`, `b.evil.example`, ... share one site's share instead of each
//! taking four of the sixteen slots; `alice.github.io` and `bob.github.io` (under the suffix
//! `github.io`, names different people hold) are two. An IP literal, `localhost`, or a name that
//! is itself a public suffix is a site of its own (docs/oauth.md).

use std::collections::HashMap;
use std::net::IpAddr;
use std::sync::{Arc, Mutex};

use tokio::sync::{OwnedSemaphorePermit, Semaphore};

use super::client_documents::ClientDocumentRefused;

/// Documents fetched at once by this server.
pub const CLIENT_DOCUMENT_FETCHES_AT_ONCE: usize = 16;
/// Documents fetched at once from one site (the host's registrable domain, whatever the port).
pub const CLIENT_DOCUMENT_FETCHES_PER_HOST: usize = 4;

#[derive(Clone)]
pub(super) struct DocumentFetchSlots {
    server: Arc<Semaphore>,
    /// Fetches in flight per site ([`site_of`]); a site leaves the map when its last fetch ends.
    hosts: Arc<Mutex<HashMap<String, usize>>>,
}

/// Held for the length of one fetch; gives its slot and its site's share back when dropped.
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

    /// A slot for one fetch from `host` (a URL's host name or IP literal), or why there is none
    /// now.
    pub(super) fn try_take(&self, host: &str) -> Result<DocumentFetchSlot, ClientDocumentRefused> {
        let host = site_of(host);
        let host = host.as_str();
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

/// What the share of `host` is counted under: its registrable domain, or the host itself when it
/// has none (an IP literal, `localhost`, a public suffix).
fn site_of(host: &str) -> String {
    let host = host.trim_end_matches('.').to_ascii_lowercase();
    let bracketless = host.trim_start_matches('[').trim_end_matches(']');
    if bracketless.parse::<IpAddr>().is_ok() {
        return host;
    }
    psl::domain_str(&host).map_or_else(|| host.clone(), str::to_owned)
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
    fn the_names_of_one_registrable_domain_share_one_share() {
        let slots = DocumentFetchSlots::new();
        let held: Vec<_> = ["a", "b", "c", "d"]
            .iter()
            .map(|label| {
                slots
                    .try_take(&format!("{label}.evil.example"))
                    .expect("within the share")
            })
            .collect();
        for fifth in ["e.evil.example", "evil.example", "x.y.evil.example", "E.Evil.Example."] {
            assert!(
                matches!(slots.try_take(fifth), Err(ClientDocumentRefused::HostBusy)),
                "{fifth}"
            );
        }
        // Under a public suffix of the list's private section, each registrable domain is
        // someone else's: its own share.
        let _github: Vec<_> = (0..CLIENT_DOCUMENT_FETCHES_PER_HOST)
            .map(|_| slots.try_take("alice.github.io").expect("alice's share"))
            .collect();
        slots.try_take("bob.github.io").expect("bob's share, not alice's");
        assert!(matches!(
            slots.try_take("www.alice.github.io"),
            Err(ClientDocumentRefused::HostBusy)
        ));
        // Under a multi-label public suffix, likewise.
        let _couk: Vec<_> = (0..CLIENT_DOCUMENT_FETCHES_PER_HOST)
            .map(|i| slots.try_take(&format!("n{i}.shop.co.uk")).expect("the shop's share"))
            .collect();
        assert!(matches!(
            slots.try_take("n9.shop.co.uk"),
            Err(ClientDocumentRefused::HostBusy)
        ));
        drop(held);
        slots.try_take("e.evil.example").expect("the share is free again");
    }

    #[test]
    fn ip_literals_and_names_without_a_registrable_domain_are_their_own_site() {
        for (host, site) in [
            ("127.0.0.1", "127.0.0.1"),
            ("[::1]", "[::1]"),
            ("localhost", "localhost"),
            ("github.io", "github.io"),
            ("a.b.evil.example", "evil.example"),
            ("alice.github.io", "alice.github.io"),
            ("x.shop.co.uk", "shop.co.uk"),
        ] {
            assert_eq!(site_of(host), site, "{host}");
        }
        let slots = DocumentFetchSlots::new();
        let _held: Vec<_> = (0..CLIENT_DOCUMENT_FETCHES_PER_HOST)
            .map(|_| slots.try_take("127.0.0.1").expect("within the share"))
            .collect();
        slots.try_take("127.0.0.2").expect("another address is another site");
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
