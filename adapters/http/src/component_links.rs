//! `component.links` of a card's bootstrap and `ack`: where the component module imports and
//! exports, read once per blueprint ([`PerBlueprint`]) with the server's parser, so the card
//! runtime rewrites the module without a lexer of its own (a fifth of its bytes, sent with every
//! card document only when a gadget bundle needs it; docs/live-channel.md).
//!
//! The parse (oxc, on a thread with the compiler's big stack) is CPU work on stored but untrusted
//! code. A caller on an async worker (the live channel's `subscribe` and polls) uses
//! [`ComponentLinks::read`]: the parse runs on a blocking thread through the CPU gate, once for
//! everyone who asks about the same blueprint and code meanwhile. A caller already on a gated
//! blocking thread (a card document's build) uses [`ComponentLinks::of`].

use std::collections::HashMap;
use std::convert::Infallible;
use std::sync::{Arc, Mutex, PoisonError};

use futures_util::FutureExt;
use futures_util::future::{BoxFuture, Shared};
use serde_json::{Value, json};
use svc_application::ports::module_links::{ModuleLinker, ModuleLinks};
use svc_application::services::cpu_gate::{CpuGate, CpuWorkError};

use crate::per_blueprint::PerBlueprint;

/// Bytes of code and links kept.
const CAPACITY_BYTES: u64 = 32 * 1024 * 1024;

pub(crate) struct ComponentLinks {
    inner: Arc<Inner>,
}

struct Inner {
    linker: Arc<dyn ModuleLinker>,
    gate: CpuGate,
    /// The wire form; `None` when the code does not parse as a module.
    kept: PerBlueprint<Option<Value>>,
    /// Reads under way, by blueprint id and code: a caller that asks meanwhile awaits that read.
    reading: Mutex<HashMap<(String, String), Flight>>,
}

/// One read under way, awaited by everyone who asked for it.
type Flight = Shared<BoxFuture<'static, Option<Value>>>;

/// No entry for this blueprint and code yet.
struct NotKept;

impl ComponentLinks {
    /// Parses with `linker`; [`Self::read`] parses on `gate`.
    pub(crate) fn new(linker: Arc<dyn ModuleLinker>, gate: CpuGate) -> Self {
        Self {
            inner: Arc::new(Inner {
                linker,
                gate,
                kept: PerBlueprint::new(CAPACITY_BYTES, wire_weight),
                reading: Mutex::new(HashMap::new()),
            }),
        }
    }

    /// The links of `code`, the component of `blueprint_id`, in the wire form (es-module-lexer's
    /// field names, which the runtime's rewrite reads); `None` when the code does not parse.
    /// Parses on the calling thread: for callers already off the async workers.
    pub(crate) fn of(&self, blueprint_id: &str, code: &str) -> Option<Value> {
        let links = self
            .inner
            .kept
            .of(blueprint_id, code, |code| {
                Ok::<_, Infallible>(self.inner.linker.links(code).map(|links| wire(&links)))
            })
            .unwrap_or_else(|never| match never {});
        (*links).clone()
    }

    /// What [`Self::of`] answers, for a caller on an async worker: a missing entry is parsed on a
    /// blocking thread through the CPU gate (past the gate's wait, without a slot, as a large
    /// session row is: the live channel has no "busy, retry" answer for an `ack`), once for every
    /// caller that asks about this blueprint and code before it is kept.
    pub(crate) async fn read(&self, blueprint_id: &str, code: &str) -> Option<Value> {
        if let Some(kept) = self.inner.kept_links(blueprint_id, code) {
            return kept;
        }
        let flight = {
            let mut reading = self.inner.reading.lock().unwrap_or_else(PoisonError::into_inner);
            let key = (blueprint_id.to_owned(), code.to_owned());
            match reading.get(&key) {
                Some(flight) => flight.clone(),
                None => {
                    // A read that ended since the look above was kept before it left `reading`.
                    if let Some(kept) = self.inner.kept_links(blueprint_id, code) {
                        return kept;
                    }
                    // Spawned, so a caller that stops waiting leaves the read to the others.
                    let task = tokio::spawn(Arc::clone(&self.inner).read_and_keep(key.clone()));
                    let flight = async move { task.await.ok().flatten() }.boxed().shared();
                    reading.insert(key, flight.clone());
                    flight
                }
            }
        };
        flight.await
    }
}

impl Inner {
    fn kept_links(&self, blueprint_id: &str, code: &str) -> Option<Option<Value>> {
        let kept = self.kept.of(blueprint_id, code, |_| Err(NotKept)).ok()?;
        Some((*kept).clone())
    }

    /// Parses `code` off the async workers, keeps the links, and only then ends the read.
    async fn read_and_keep(self: Arc<Self>, key: (String, String)) -> Option<Value> {
        let (blueprint_id, code) = &key;
        let linker = Arc::clone(&self.linker);
        let source: Arc<str> = Arc::from(code.as_str());
        let parse = move || linker.links(&source).map(|links| wire(&links));
        let links = match self.gate.run(parse.clone()).await {
            Ok(links) => links,
            Err(CpuWorkError::Busy(_)) => tokio::task::spawn_blocking(parse).await.ok().flatten(),
            Err(CpuWorkError::Panicked(panic)) => {
                tracing::error!(%panic, "the module links' parse panicked");
                None
            }
        };
        self.kept
            .of(blueprint_id, code, |_| Ok::<_, Infallible>(links.clone()))
            .unwrap_or_else(|never| match never {});
        self.reading.lock().unwrap_or_else(PoisonError::into_inner).remove(&key);
        links
    }
}

/// About what one import or export costs in memory as a `Value` (an order-preserving map of up
/// to seven members, each a key string and a value).
const LINK_BYTES: usize = 1024;

fn wire_weight(links: &Option<Value>) -> usize {
    let count = |list: &str| {
        links
            .as_ref()
            .and_then(|links| links[list].as_array())
            .map_or(0, Vec::len)
    };
    (count("imports") + count("exports")) * LINK_BYTES
}

/// `-1` where the lexer says "none".
fn or_none(offset: Option<u32>) -> i64 {
    offset.map_or(-1, i64::from)
}

fn wire(links: &ModuleLinks) -> Value {
    let imports: Vec<Value> = links
        .imports
        .iter()
        .map(|import| {
            json!({
                "n": import.specifier,
                "ss": import.statement_start,
                "se": import.statement_end,
                "s": import.specifier_start,
                "e": import.specifier_end,
                "d": or_none(import.dynamic_at),
                "a": or_none(import.attributes_at),
            })
        })
        .collect();
    let exports: Vec<Value> = links
        .exports
        .iter()
        .map(|export| json!({ "n": export.name, "ln": export.local, "s": export.start, "e": export.end }))
        .collect();
    json!({ "imports": imports, "exports": exports })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;
    use std::time::Duration;

    use svc_application::ports::module_links::{ExportLink, ImportLink};

    use super::*;

    /// Links every code alike, counting its reads.
    struct Counting(AtomicUsize);

    impl ModuleLinker for Counting {
        fn links(&self, code: &str) -> Option<ModuleLinks> {
            self.0.fetch_add(1, Ordering::SeqCst);
            (code != "broken").then(|| ModuleLinks {
                imports: vec![ImportLink {
                    specifier: Some("react".into()),
                    statement_start: 0,
                    statement_end: 25,
                    specifier_start: 19,
                    specifier_end: 24,
                    dynamic_at: None,
                    attributes_at: Some(26),
                }],
                exports: vec![ExportLink {
                    name: "default".into(),
                    local: None,
                    start: 34,
                    end: 41,
                }],
            })
        }
    }

    #[test]
    fn links_are_read_once_per_code_in_the_lexers_shape() {
        let linker = Arc::new(Counting(AtomicUsize::new(0)));
        let links = ComponentLinks::new(linker.clone(), CpuGate::unbounded());
        let first = links.of("bp_1", "import x from 'react'; export default x").unwrap();
        assert_eq!(
            first,
            json!({ "imports": [{ "n": "react", "ss": 0, "se": 25, "s": 19, "e": 24, "d": -1, "a": 26 }],
                    "exports": [{ "n": "default", "ln": null, "s": 34, "e": 41 }] })
        );
        links.of("bp_1", "import x from 'react'; export default x");
        assert_eq!(linker.0.load(Ordering::SeqCst), 1, "kept");
        assert_eq!(links.of("bp_1", "broken"), None, "a changed code is read again");
        assert_eq!(linker.0.load(Ordering::SeqCst), 2);
    }

    /// Reads every code alike once the test lets it go, counting its reads and the reads it was
    /// let go from. It gives up waiting after a while, so that a parse that blocks the test's only
    /// worker (which the test needs to let it go) ends, and the test fails instead of hanging.
    struct Parked {
        reads: AtomicUsize,
        let_go: AtomicUsize,
        go: Mutex<mpsc::Receiver<()>>,
    }

    const GIVES_UP_AFTER: Duration = Duration::from_secs(2);

    impl Parked {
        fn new() -> (Arc<Self>, mpsc::Sender<()>) {
            let (go, went) = mpsc::channel();
            let parked = Self {
                reads: AtomicUsize::new(0),
                let_go: AtomicUsize::new(0),
                go: Mutex::new(went),
            };
            (Arc::new(parked), go)
        }

        fn reads(&self) -> usize {
            self.reads.load(Ordering::SeqCst)
        }
    }

    impl ModuleLinker for Parked {
        fn links(&self, _code: &str) -> Option<ModuleLinks> {
            self.reads.fetch_add(1, Ordering::SeqCst);
            if self.go.lock().unwrap().recv_timeout(GIVES_UP_AFTER).is_ok() {
                self.let_go.fetch_add(1, Ordering::SeqCst);
            }
            Some(ModuleLinks::default())
        }
    }

    const CODE: &str = "export default 1";

    /// Takes `gate`'s one slot until the returned sender is sent to; the task ends with it.
    async fn hold_the_slot(
        gate: &CpuGate,
    ) -> (
        mpsc::Sender<()>,
        tokio::task::JoinHandle<Result<Option<()>, CpuWorkError>>,
    ) {
        let (taken, slot_taken) = tokio::sync::oneshot::channel();
        let (free, freed) = mpsc::channel::<()>();
        let holder = tokio::spawn({
            let gate = gate.clone();
            async move {
                gate.run(move || {
                    let _ = taken.send(());
                    freed.recv().ok()
                })
                .await
            }
        });
        slot_taken.await.unwrap();
        (free, holder)
    }

    // A current-thread runtime: the test's task and the reader share one async worker.
    #[tokio::test]
    async fn a_read_waits_for_a_slot_of_the_cpu_gate_and_parses_while_the_worker_serves_others() {
        let (linker, go) = Parked::new();
        let gate = CpuGate::new(1, Duration::from_secs(600));
        let (free, holder) = hold_the_slot(&gate).await;
        let links = Arc::new(ComponentLinks::new(linker.clone(), gate));
        let reader = tokio::spawn({
            let links = Arc::clone(&links);
            async move { links.read("bp_1", CODE).await }
        });
        for _ in 0..20 {
            tokio::task::yield_now().await;
        }
        assert_eq!(linker.reads(), 0, "no parse while the gate's only slot is taken");
        free.send(()).unwrap();
        holder.await.unwrap().unwrap();
        while linker.reads() == 0 {
            tokio::task::yield_now().await;
        }
        // The parse runs now; this task, on the same worker, lets it go.
        go.send(()).unwrap();
        assert_eq!(reader.await.unwrap(), Some(json!({ "imports": [], "exports": [] })));
        assert_eq!(linker.let_go.load(Ordering::SeqCst), 1, "parsed off the worker");
    }

    // A worker per reader, so that readers on the workers ask at the same time.
    #[tokio::test(flavor = "multi_thread", worker_threads = 8)]
    async fn readers_of_one_blueprint_at_once_share_one_parse() {
        let (linker, go) = Parked::new();
        let links = Arc::new(ComponentLinks::new(
            linker.clone(),
            CpuGate::new(4, Duration::from_secs(600)),
        ));
        let asked = Arc::new(AtomicUsize::new(0));
        let readers: Vec<_> = (0..8)
            .map(|_| {
                let (links, asked) = (Arc::clone(&links), Arc::clone(&asked));
                tokio::spawn(async move {
                    asked.fetch_add(1, Ordering::SeqCst);
                    links.read("bp_1", CODE).await
                })
            })
            .collect();
        while asked.load(Ordering::SeqCst) < 8 || linker.reads() == 0 {
            tokio::task::yield_now().await;
        }
        go.send(()).unwrap();
        for reader in readers {
            assert_eq!(reader.await.unwrap(), Some(json!({ "imports": [], "exports": [] })));
        }
        assert_eq!(linker.reads(), 1, "one parse for eight readers");
        assert_eq!(
            links.read("bp_1", CODE).await,
            Some(json!({ "imports": [], "exports": [] }))
        );
        assert_eq!(linker.reads(), 1, "kept");
        assert_eq!(
            links.of("bp_1", CODE),
            Some(json!({ "imports": [], "exports": [] })),
            "kept for documents too"
        );
        assert_eq!(linker.reads(), 1);
    }

    #[tokio::test]
    async fn a_read_the_busy_gate_refuses_a_slot_is_parsed_without_one() {
        let linker = Arc::new(Counting(AtomicUsize::new(0)));
        let gate = CpuGate::new(1, Duration::from_millis(1));
        let (free, holder) = hold_the_slot(&gate).await;
        let links = ComponentLinks::new(linker.clone(), gate);
        let read = links.read("bp_1", "import x from 'react'; export default x").await;
        assert_eq!(read.unwrap()["exports"][0]["n"], "default", "an ack has no busy answer");
        assert_eq!(linker.0.load(Ordering::SeqCst), 1);
        free.send(()).unwrap();
        holder.await.unwrap().unwrap();
    }
}
