//! The keys this replica's bound sockets were opened with, each asked about once per interval.
//!
//! A revocation through `/ops` is announced on the bus and ends a key's channels at once. A key
//! that reaches its `expiresAt`, or one revoked in the keys file, announces nothing: one sweep per
//! replica asks the key store about every distinct key every `live.key_recheck_seconds` and ends
//! the channels of a key that no longer authenticates. The cost is one read per key, not per
//! socket: 10,000 cards opened under a handful of keys cost a handful of reads a minute.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;

use futures_util::StreamExt;
use futures_util::future::BoxFuture;
use tokio_util::sync::CancellationToken;

use super::sockets::LiveSockets;

/// Whether a key has stopped authenticating. A store that cannot answer says no: a database
/// blip must not end every card's channel (the next sweep asks again).
pub(crate) type KeyCheck = Arc<dyn Fn(String) -> BoxFuture<'static, bool> + Send + Sync>;

/// Keys asked about at once by one sweep: a slow store delays a sweep, not every key in turn.
const CHECKS_AT_ONCE: usize = 8;

/// The watched keys of one replica, and the sweep that asks about them (started with the first).
#[derive(Clone)]
pub(crate) struct KeyWatch {
    inner: Arc<Inner>,
}

struct Inner {
    keys: Mutex<Keys>,
    every: Duration,
    check: KeyCheck,
    sockets: LiveSockets,
    sweeping: std::sync::Once,
}

#[derive(Default)]
struct Keys {
    watched: HashMap<String, Watched>,
    /// Numbers the entries, so a socket of an ended entry never counts against a newer one.
    generations: u64,
}

struct Watched {
    generation: u64,
    sockets: usize,
    /// Cancelled when the key was found no longer live; stays so while its sockets close.
    ended: CancellationToken,
}

/// One bound socket's key, watched while the socket holds it.
pub(crate) struct WatchedKey {
    inner: Arc<Inner>,
    key_id: String,
    generation: u64,
    ended: CancellationToken,
}

impl WatchedKey {
    /// Resolves when a sweep found the key no longer authenticates.
    pub(crate) async fn ended(&self) {
        self.ended.cancelled().await
    }
}

impl Drop for WatchedKey {
    fn drop(&mut self) {
        let mut keys = self.inner.keys.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(watched) = keys.watched.get_mut(&self.key_id)
            && watched.generation == self.generation
        {
            watched.sockets -= 1;
            if watched.sockets == 0 {
                keys.watched.remove(&self.key_id);
            }
        }
    }
}

impl KeyWatch {
    /// Sweeps every `every` (at least a millisecond) until `sockets` close (the server's
    /// shutdown).
    pub(crate) fn new(every: Duration, check: KeyCheck, sockets: LiveSockets) -> Self {
        Self {
            inner: Arc::new(Inner {
                keys: Mutex::default(),
                every: every.max(Duration::from_millis(1)),
                check,
                sockets,
                sweeping: std::sync::Once::new(),
            }),
        }
    }

    /// Watches `key_id`, which the caller has just found live, for as long as the returned guard
    /// lives. A key an earlier sweep found dead starts afresh (it was restored meanwhile): the
    /// sockets still closing under the old verdict do not end the new one.
    pub(crate) fn watch(&self, key_id: &str) -> WatchedKey {
        self.inner.sweeping.call_once(|| {
            tokio::spawn(sweep(Arc::downgrade(&self.inner)));
        });
        let mut keys = self.inner.keys.lock().unwrap_or_else(|e| e.into_inner());
        let Keys { watched, generations } = &mut *keys;
        let current = watched.get(key_id).filter(|w| !w.ended.is_cancelled());
        if current.is_none() {
            *generations += 1;
            let fresh = Watched {
                generation: *generations,
                sockets: 0,
                ended: CancellationToken::new(),
            };
            watched.insert(key_id.to_owned(), fresh);
        }
        let entry = watched.get_mut(key_id).expect("inserted above");
        entry.sockets += 1;
        WatchedKey {
            inner: self.inner.clone(),
            key_id: key_id.to_owned(),
            generation: entry.generation,
            ended: entry.ended.clone(),
        }
    }
}

async fn sweep(inner: Weak<Inner>) {
    let (every, sockets) = match inner.upgrade() {
        Some(inner) => (inner.every, inner.sockets.clone()),
        None => return,
    };
    let mut interval = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
    interval.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
    loop {
        tokio::select! {
            _ = interval.tick() => {}
            () = sockets.closing() => return,
        }
        let Some(inner) = inner.upgrade() else { return };
        tokio::select! {
            () = inner.sweep_once() => {}
            () = sockets.closing() => return,
        }
    }
}

impl Inner {
    /// Asks about every watched key not already ended, and ends the ones no longer live.
    async fn sweep_once(&self) {
        let due: Vec<(String, CancellationToken)> = {
            let keys = self.keys.lock().unwrap_or_else(|e| e.into_inner());
            keys.watched
                .iter()
                .filter(|(_, watched)| !watched.ended.is_cancelled())
                .map(|(key, watched)| (key.clone(), watched.ended.clone()))
                .collect()
        };
        futures_util::stream::iter(due)
            .for_each_concurrent(CHECKS_AT_ONCE, |(key, ended)| async move {
                if (self.check)(key).await {
                    ended.cancel();
                }
            })
            .await;
    }
}

#[cfg(test)]
mod tests {
    use std::collections::HashSet;

    use super::*;

    /// A check that records what it was asked and finds the keys in `dead` no longer live.
    fn recording(dead: &'static [&'static str]) -> (KeyCheck, Arc<Mutex<Vec<String>>>) {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let log = asked.clone();
        let check: KeyCheck = Arc::new(move |key: String| {
            log.lock().unwrap().push(key.clone());
            Box::pin(async move { dead.contains(&key.as_str()) })
        });
        (check, asked)
    }

    fn ended(key: &WatchedKey) -> bool {
        key.ended.is_cancelled()
    }

    #[tokio::test]
    async fn each_key_is_asked_once_per_sweep_however_many_sockets_hold_it() {
        let (check, asked) = recording(&["dead"]);
        let watch = KeyWatch::new(Duration::from_secs(60), check, LiveSockets::default());
        let held = [
            watch.watch("live"),
            watch.watch("live"),
            watch.watch("dead"),
            watch.watch("dead"),
        ];
        watch.inner.sweep_once().await;
        let once: HashSet<String> = asked.lock().unwrap().iter().cloned().collect();
        assert_eq!(asked.lock().unwrap().len(), 2, "{asked:?}");
        assert_eq!(once, HashSet::from(["live".to_owned(), "dead".to_owned()]));
        assert_eq!(held.each_ref().map(ended), [false, false, true, true]);
        // An ended key is not asked about again while its sockets close.
        watch.inner.sweep_once().await;
        assert_eq!(asked.lock().unwrap().len(), 3, "only `live` again: {asked:?}");
    }

    /// A socket the bind check let through under a key an earlier sweep found dead (restored
    /// since) is not ended by the old verdict, nor by the old sockets leaving.
    #[tokio::test]
    async fn a_key_found_dead_then_restored_is_watched_afresh() {
        let (check, asked) = recording(&["k1"]);
        let watch = KeyWatch::new(Duration::from_secs(60), check, LiveSockets::default());
        let old = watch.watch("k1");
        watch.inner.sweep_once().await;
        assert!(ended(&old));
        let new = watch.watch("k1");
        assert!(!ended(&new), "the bind check vouched for the key again");
        drop(old);
        assert_eq!(watch.inner.keys.lock().unwrap().watched["k1"].sockets, 1);
        watch.inner.sweep_once().await;
        assert!(ended(&new), "asked again, and dead again");
        assert_eq!(asked.lock().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn a_key_no_socket_holds_is_forgotten() {
        let (check, asked) = recording(&[]);
        let watch = KeyWatch::new(Duration::from_secs(60), check, LiveSockets::default());
        let first = watch.watch("k1");
        let second = watch.watch("k1");
        drop(first);
        watch.inner.sweep_once().await;
        drop(second);
        watch.inner.sweep_once().await;
        assert_eq!(*asked.lock().unwrap(), ["k1"]);
        assert!(watch.inner.keys.lock().unwrap().watched.is_empty());
    }

    #[tokio::test]
    async fn the_sweep_runs_every_interval_and_stops_when_the_sockets_close() {
        let (check, asked) = recording(&["k1"]);
        let sockets = LiveSockets::default();
        let every = Duration::from_millis(200);
        let watch = KeyWatch::new(every, check, sockets.clone());
        let key = watch.watch("k1");
        tokio::task::yield_now().await;
        assert!(asked.lock().unwrap().is_empty(), "not before the first interval");
        tokio::time::timeout(Duration::from_secs(5), key.ended())
            .await
            .expect("a sweep ends the dead key");
        sockets.close_all();
        let other = watch.watch("k2");
        tokio::time::sleep(every * 3).await;
        assert!(!ended(&other));
        assert_eq!(*asked.lock().unwrap(), ["k1"], "no sweep after the sockets closed");
    }
}
