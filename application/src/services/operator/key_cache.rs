//! The authentication cache of connector keys: a bearer's hash to its key record, so an
//! authenticated request reads no row. Revocation is honoured at once: the revoking replica
//! forgets the key before it answers, every other replica when the event bus carries the
//! revocation ([`KEY_REVOCATIONS_TOPIC`]). Expiry is checked on every hit; the time to live
//! bounds any change made behind the service's back (a row edited by hand). A revoked key's id is
//! remembered for twice that time, so a lookup that read the row just before the revocation cannot
//! put the old record back (it is neither served nor kept).

use std::time::Duration;

use svc_domain::connector_key::ConnectorKey;
use tokio::sync::broadcast::error::RecvError;

use crate::ports::agent::{EventBus, KEY_REVOCATIONS_TOPIC, LiveEvent};

/// How long a key record is trusted without reading its row again.
const TIME_TO_LIVE: Duration = Duration::from_secs(10);
/// Keys held at most (one entry is a few hundred bytes).
const CAPACITY: u64 = 100_000;

#[derive(Clone)]
pub(crate) struct KeyCache {
    /// Off where a revocation on another replica would not be heard: every lookup reads its row.
    enabled: bool,
    by_hash: moka::sync::Cache<String, ConnectorKey>,
    /// Ids of keys revoked in the last `2 * TIME_TO_LIVE`: a revocation is final, so an entry
    /// for one of them is stale whenever it was read.
    revoked: moka::sync::Cache<String, ()>,
}

impl KeyCache {
    pub(crate) fn new() -> Self {
        Self {
            enabled: true,
            by_hash: moka::sync::Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_live(TIME_TO_LIVE)
                .support_invalidation_closures()
                .build(),
            revoked: moka::sync::Cache::builder()
                .max_capacity(CAPACITY)
                .time_to_live(2 * TIME_TO_LIVE)
                .build(),
        }
    }

    /// Keeps nothing: each lookup reads the key's row.
    pub(crate) fn off(self) -> Self {
        self.by_hash.invalidate_all();
        Self { enabled: false, ..self }
    }

    pub(crate) fn get(&self, key_hash: &str) -> Option<ConnectorKey> {
        if !self.enabled {
            return None;
        }
        let key = self.by_hash.get(key_hash)?;
        if self.revoked.contains_key(&key.id) {
            self.by_hash.invalidate(key_hash);
            return None;
        }
        Some(key)
    }

    pub(crate) fn insert(&self, key: ConnectorKey) {
        if self.enabled && !self.revoked.contains_key(&key.id) {
            self.by_hash.insert(key.key_hash.clone(), key);
        }
    }

    /// Forgets the key with this id; a lookup after this call returns reads its row again.
    pub(crate) fn forget(&self, key_id: &str) {
        self.revoked.insert(key_id.to_owned(), ());
        let key_id = key_id.to_owned();
        if self
            .by_hash
            .invalidate_entries_if(move |_, key| key.id == key_id)
            .is_err()
        {
            self.by_hash.invalidate_all();
        }
    }

    /// Forgets each key whose revocation the bus carries (from any replica); a listener that
    /// fell behind forgets every key. Needs a Tokio runtime; without one (a unit test) only the
    /// revoking service forgets.
    pub(crate) fn listen(&self, bus: &dyn EventBus) {
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let mut revocations = bus.subscribe(KEY_REVOCATIONS_TOPIC);
        let cache = self.clone();
        runtime.spawn(async move {
            loop {
                match revocations.recv().await {
                    Ok(published) => match published.event() {
                        LiveEvent::KeyRevoked { key_id } => cache.forget(key_id),
                        LiveEvent::MissedEvents => cache.by_hash.invalidate_all(),
                        _ => {}
                    },
                    Err(RecvError::Lagged(_)) => cache.by_hash.invalidate_all(),
                    Err(RecvError::Closed) => return,
                }
            }
        });
    }
}

#[cfg(all(test, feature = "testing"))]
mod tests {
    use std::sync::Arc;

    use chrono::Utc;
    use svc_domain::connector_key::ConnectorKeyStatus;

    use super::*;
    use crate::testing::LocalBus;

    fn key(id: &str, hash: &str) -> ConnectorKey {
        ConnectorKey {
            id: id.into(),
            owner_user_id: "u1".into(),
            app_id: None,
            name: None,
            api_key_prefix: "abcdefgh".into(),
            key_hash: hash.into(),
            status: ConnectorKeyStatus::Active,
            created_at: Utc::now(),
            last_used_at: None,
            expires_at: None,
        }
    }

    /// A cache listening to a bus, holding `k1` (hash `h1`) and `k2` (hash `h2`).
    fn listening_with_two_keys() -> (Arc<LocalBus>, KeyCache) {
        let bus = Arc::new(LocalBus::default());
        let cache = KeyCache::new();
        cache.listen(bus.as_ref());
        cache.insert(key("k1", "h1"));
        cache.insert(key("k2", "h2"));
        (bus, cache)
    }

    #[test]
    fn a_record_read_before_the_revocation_is_never_served_after_it() {
        let cache = KeyCache::new();
        let read_before = key("k1", "h1");
        cache.forget("k1");
        cache.insert(read_before.clone());
        assert!(cache.get("h1").is_none(), "not kept after the revocation");
        cache.by_hash.insert("h1".into(), read_before);
        assert!(cache.get("h1").is_none(), "nor served if it slipped in");
        cache.insert(key("k2", "h2"));
        assert_eq!(
            cache.get("h2").map(|k| k.id),
            Some("k2".into()),
            "other keys are cached"
        );
    }

    #[tokio::test]
    async fn a_revocation_heard_on_the_bus_forgets_that_key_only() {
        let (bus, cache) = listening_with_two_keys();
        bus.publish(LiveEvent::KeyRevoked { key_id: "k1".into() });
        for _ in 0..100 {
            if cache.get("h1").is_none() {
                break;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        assert!(cache.get("h1").is_none(), "the revoked key is forgotten");
        assert_eq!(cache.get("h2").map(|k| k.id), Some("k2".into()), "the other key stays");
    }

    #[tokio::test]
    async fn missed_events_forget_every_key() {
        let (bus, cache) = listening_with_two_keys();
        bus.publish(LiveEvent::MissedEvents);
        for _ in 0..100 {
            if cache.get("h1").is_none() && cache.get("h2").is_none() {
                return;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        panic!("a revocation may have been missed: no key is trusted from memory");
    }
}
