//! `resources/read` answers serialised once and filled per request.
//!
//! A render's document inlines the mount runtime (about a megabyte of JavaScript) and a bootstrap
//! that changes only when the session does; serialising both as JSON on every read was nearly all
//! of the read's cost. A [`ReadTemplate`] is the serialised `result` with holes where the
//! per-request parts go (the fresh `wsToken` and its `expiresAt`) and where the runtime goes (its
//! escaped text, computed once per process and shared by every template). JSON string escaping is
//! character by character, so escaping the pieces apart is escaping the whole.
//!
//! [`ReadTemplates`] keeps them per (URI, session revision, event sequence, epoch): every amend,
//! update or emit moves the revision or the sequence, so a changed session never meets an old
//! document. The URI is the document's one name (`resource_uri`: an epoch has one spelling).
//! Bounded by bytes (the runtime is not counted: it is shared).
//!
//! Building a template is CPU work proportional to the session's props (up to 4 MiB, a few
//! hundred milliseconds with its deflating), so it never runs on an async worker: it runs on a
//! blocking thread through the CPU gate, once per key however many readers ask for it at once
//! (they await the one build), and its text is deflated there too, so a gzipped answer
//! compresses nothing on the worker.

use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex, PoisonError};
use std::time::Duration;

use bytes::Bytes;
use serde_json::Value;
use svc_application::services::cpu_gate::{CpuBusy, CpuGate};
use tokio::sync::watch;

use super::answer_pieces::{AnswerPiece, KeptText};
use super::resources::script_source;
use crate::runtime_asset::{MODULE_LEXER_JS, RUNTIME_JS};

/// Bytes of templates kept; the least recently used go first.
const CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// A per-process random part makes the markers unguessable, so no prop can plant one.
static NONCE: LazyLock<String> = LazyLock::new(|| uuid::Uuid::new_v4().simple().to_string());

/// The runtime's source as it appears inside the serialised `text` string (deflated once per
/// process, for the first answer that is sent compressed).
static ESCAPED_RUNTIME: LazyLock<Arc<KeptText>> = LazyLock::new(|| escaped_script(RUNTIME_JS));
/// The module lexer's, likewise (documents that may load a module without links).
static ESCAPED_MODULE_LEXER: LazyLock<Arc<KeptText>> = LazyLock::new(|| escaped_script(MODULE_LEXER_JS));

fn escaped_script(source: &str) -> Arc<KeptText> {
    let quoted = serde_json::to_string(&script_source(source)).expect("a string serialises");
    Arc::new(KeptText::new(Bytes::copy_from_slice(
        &quoted.as_bytes()[1..quoted.len() - 1],
    )))
}

/// What a hole of a template is filled with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hole {
    WsToken,
    ExpiresAt,
    Runtime,
    ModuleLexer,
}

impl Hole {
    const ALL: [Hole; 4] = [Hole::WsToken, Hole::ExpiresAt, Hole::Runtime, Hole::ModuleLexer];

    /// Letters, digits only: unchanged by `script_json` and by JSON string escaping.
    pub(crate) fn marker(self) -> String {
        let name = match self {
            Hole::WsToken => "WsToken",
            Hole::ExpiresAt => "ExpiresAt",
            Hole::Runtime => "Runtime",
            Hole::ModuleLexer => "ModuleLexer",
        };
        format!("svcHole{name}{}", *NONCE)
    }
}

enum Piece {
    Text(Arc<KeptText>),
    Hole(Hole),
}

/// A serialised `resources/read` result with its holes.
pub(crate) struct ReadTemplate {
    pieces: Vec<Piece>,
}

impl ReadTemplate {
    /// Serialises `result` (built with [`Hole::marker`]s in place of the per-request parts and of
    /// the runtime) and cuts it at each marker.
    pub(crate) fn of(result: &Value) -> Self {
        let serialised = result.to_string();
        let markers: Vec<(Hole, String)> = Hole::ALL.iter().map(|h| (*h, h.marker())).collect();
        let mut pieces = Vec::new();
        let mut rest = serialised.as_str();
        loop {
            let next = markers
                .iter()
                .filter_map(|(hole, marker)| rest.find(marker.as_str()).map(|at| (at, *hole, marker.len())))
                .min_by_key(|(at, _, _)| *at);
            match next {
                Some((at, hole, len)) => {
                    pieces.push(Piece::text(&rest.as_bytes()[..at]));
                    pieces.push(Piece::Hole(hole));
                    rest = &rest[at + len..];
                }
                None => {
                    pieces.push(Piece::text(rest.as_bytes()));
                    break;
                }
            }
        }
        Self { pieces }
    }

    /// The serialised result for one request, as pieces to write one after the other: the
    /// template's own (shared, not copied) and the filled-in parts. `ws_token` and `expires_at`
    /// must need no JSON or HTML escaping (a base64url token, an RFC 3339 time: they do not).
    pub(crate) fn fill(&self, ws_token: &str, expires_at: &str) -> Vec<AnswerPiece> {
        let fresh = |text: &str| AnswerPiece::Fresh(Bytes::copy_from_slice(text.as_bytes()));
        self.pieces
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => AnswerPiece::Kept(Arc::clone(text)),
                Piece::Hole(Hole::WsToken) => fresh(ws_token),
                Piece::Hole(Hole::ExpiresAt) => fresh(expires_at),
                Piece::Hole(Hole::Runtime) => AnswerPiece::Kept(Arc::clone(&ESCAPED_RUNTIME)),
                Piece::Hole(Hole::ModuleLexer) => AnswerPiece::Kept(Arc::clone(&ESCAPED_MODULE_LEXER)),
            })
            .collect()
    }

    /// Deflates its own text and the shared texts its holes take (each once), so that a gzipped
    /// answer finds them deflated.
    fn deflate(&self) {
        for piece in &self.pieces {
            match piece {
                Piece::Text(text) => text.deflate(),
                Piece::Hole(Hole::Runtime) => ESCAPED_RUNTIME.deflate(),
                Piece::Hole(Hole::ModuleLexer) => ESCAPED_MODULE_LEXER.deflate(),
                Piece::Hole(Hole::WsToken | Hole::ExpiresAt) => {}
            }
        }
    }

    /// Its own text, twice since it is kept deflated too (the deflated copy is at most about the
    /// text's size).
    fn own_bytes(&self) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Text(text) => text.text().len() * 2,
                Piece::Hole(_) => 0,
            })
            .sum()
    }
}

impl Piece {
    fn text(bytes: &[u8]) -> Self {
        Self::Text(Arc::new(KeptText::new(Bytes::copy_from_slice(bytes))))
    }
}

/// Which state of which document a template is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct DocumentKey {
    pub uri: String,
    pub revision: i64,
    pub event_sequence: i64,
    pub epoch: u32,
}

/// Longest a reader waits for a template's build once it runs (the wait for a CPU slot before it
/// is the gate's own, `limits.cpu_heavy_wait_ms`). A build is linear in a document bounded by the
/// props budget, a fraction of a second for the largest; past this the machine is overloaded and
/// the reader is answered busy, while the build goes on and is kept for the next read.
const BUILD_DEADLINE: Duration = Duration::from_secs(5);

/// Why a read got no template.
#[derive(Debug, Clone)]
pub(crate) enum BuildRefused {
    /// No CPU slot freed within the gate's wait, or the build outran [`BUILD_DEADLINE`].
    Busy(CpuBusy),
    /// The build panicked, or its task stopped (the runtime shutting down); for the log.
    Failed(String),
}

/// How far the build of one key got.
enum Progress {
    WaitingForSlot,
    Running,
    Done(Result<Arc<ReadTemplate>, BuildRefused>),
}

/// The templates of recently read documents.
pub(crate) struct ReadTemplates {
    kept: moka::sync::Cache<DocumentKey, Arc<ReadTemplate>>,
    /// Builds under way, each watched by every reader of its key. A build is a task of its own,
    /// not a reader's: a reader that goes away stops nothing, and the task removes its entry when
    /// it ends, whoever waits.
    building: Arc<Mutex<HashMap<DocumentKey, watch::Receiver<Progress>>>>,
}

impl Default for ReadTemplates {
    fn default() -> Self {
        Self {
            kept: moka::sync::Cache::builder()
                .max_capacity(CACHE_BYTES)
                .weigher(|key: &DocumentKey, template: &Arc<ReadTemplate>| {
                    u32::try_from(key.uri.len() + template.own_bytes()).unwrap_or(u32::MAX)
                })
                .build(),
            building: Arc::default(),
        }
    }
}

impl ReadTemplates {
    /// The template of `key`, when it is kept.
    pub(crate) fn get(&self, key: &DocumentKey) -> Option<Arc<ReadTemplate>> {
        self.kept.get(key)
    }

    /// The template of `key`, built by `build` (and deflated) on a blocking thread through `gate`
    /// when it is not kept; readers of a key whose build is under way await that build.
    pub(crate) async fn get_or_build(
        &self,
        key: DocumentKey,
        gate: &CpuGate,
        build: impl FnOnce() -> ReadTemplate + Send + 'static,
    ) -> Result<Arc<ReadTemplate>, BuildRefused> {
        if let Some(kept) = self.kept.get(&key) {
            return Ok(kept);
        }
        let progress = {
            let mut building = self.building.lock().unwrap_or_else(PoisonError::into_inner);
            match building.get(&key) {
                Some(progress) => progress.clone(),
                None => {
                    // A build that ended since the look above was kept before it left `building`.
                    if let Some(kept) = self.kept.get(&key) {
                        return Ok(kept);
                    }
                    let (report, progress) = watch::channel(Progress::WaitingForSlot);
                    building.insert(key.clone(), progress.clone());
                    let (kept, building) = (self.kept.clone(), Arc::clone(&self.building));
                    tokio::spawn(build_and_keep(kept, building, key, gate.clone(), build, report));
                    progress
                }
            }
        };
        outcome(progress).await
    }
}

/// Builds the template of `key` on the gate, keeps it, and reports to its readers.
async fn build_and_keep(
    kept: moka::sync::Cache<DocumentKey, Arc<ReadTemplate>>,
    building: Arc<Mutex<HashMap<DocumentKey, watch::Receiver<Progress>>>>,
    key: DocumentKey,
    gate: CpuGate,
    build: impl FnOnce() -> ReadTemplate + Send + 'static,
    report: watch::Sender<Progress>,
) {
    let built = match gate
        .start(move || {
            let template = build();
            template.deflate();
            Arc::new(template)
        })
        .await
    {
        Err(busy) => Err(BuildRefused::Busy(busy)),
        Ok(running) => {
            report.send_replace(Progress::Running);
            running.await.map_err(|panicked| {
                tracing::error!(error = %panicked, "building a resources/read template failed");
                BuildRefused::Failed(panicked.to_string())
            })
        }
    };
    if let Ok(template) = &built {
        kept.insert(key.clone(), Arc::clone(template));
    }
    building.lock().unwrap_or_else(PoisonError::into_inner).remove(&key);
    report.send_replace(Progress::Done(built));
}

/// What the build `progress` watches comes to, for one reader: a slot is awaited as long as the
/// gate allows, the build itself up to [`BUILD_DEADLINE`].
async fn outcome(mut progress: watch::Receiver<Progress>) -> Result<Arc<ReadTemplate>, BuildRefused> {
    let stopped = || BuildRefused::Failed("the template's build stopped".into());
    progress
        .wait_for(|p| !matches!(p, Progress::WaitingForSlot))
        .await
        .map(drop)
        .map_err(|_| stopped())?;
    let done = tokio::time::timeout(BUILD_DEADLINE, progress.wait_for(|p| matches!(p, Progress::Done(_)))).await;
    match done {
        Err(_) => Err(BuildRefused::Busy(CpuBusy { retry_after_seconds: 1 })),
        Ok(Err(_)) => Err(stopped()),
        Ok(Ok(done)) => match &*done {
            Progress::Done(built) => built.clone(),
            Progress::WaitingForSlot | Progress::Running => Err(stopped()),
        },
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::mpsc;

    use serde_json::json;

    use super::*;

    #[test]
    fn a_filled_template_is_the_result_serialised_with_its_parts() {
        let with_holes = json!({ "text": format!("<a>{}</a>{}", Hole::WsToken.marker(), Hole::Runtime.marker()),
            "expiresAt": Hole::ExpiresAt.marker() });
        let filled: Vec<u8> = ReadTemplate::of(&with_holes)
            .fill("tok.en", "2026-11-27T00:00:00.000Z")
            .iter()
            .flat_map(|piece| piece.text().to_vec())
            .collect();
        let expected = json!({ "text": format!("<a>tok.en</a>{}", script_source(RUNTIME_JS)),
            "expiresAt": "2026-11-27T00:00:00.000Z" });
        assert_eq!(String::from_utf8(filled).unwrap(), expected.to_string());
    }

    fn key(uri: &str) -> DocumentKey {
        DocumentKey {
            uri: uri.to_owned(),
            revision: 1,
            event_sequence: 0,
            epoch: 1,
        }
    }

    fn card() -> ReadTemplate {
        ReadTemplate::of(&json!({ "text": format!("<p>card</p>{}", Hole::Runtime.marker()) }))
    }

    /// A build that waits for `released` (a regression that built on the worker would stop this
    /// test's only worker thread: it gives up after a while instead).
    fn held_build(
        builds: &Arc<AtomicUsize>,
        released: &Arc<Mutex<mpsc::Receiver<()>>>,
    ) -> impl FnOnce() -> ReadTemplate + Send + 'static {
        let (builds, released) = (Arc::clone(builds), Arc::clone(released));
        move || {
            builds.fetch_add(1, Ordering::SeqCst);
            let _ = released.lock().unwrap().recv_timeout(Duration::from_secs(10));
            card()
        }
    }

    async fn until_built(builds: &AtomicUsize, count: usize) {
        while builds.load(Ordering::SeqCst) < count {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
    }

    /// On a runtime of one thread: the readers of one key wait for one build while the thread
    /// goes on with other work, and the template they get is deflated already.
    #[tokio::test]
    async fn readers_of_one_key_await_one_build_that_runs_off_the_worker() {
        let templates = Arc::new(ReadTemplates::default());
        let gate = CpuGate::new(2, Duration::from_secs(5));
        let builds = Arc::new(AtomicUsize::new(0));
        let (release, released) = mpsc::channel::<()>();
        let released = Arc::new(Mutex::new(released));
        let readers: Vec<_> = (0..3)
            .map(|_| {
                let (templates, gate, build) = (Arc::clone(&templates), gate.clone(), held_build(&builds, &released));
                tokio::spawn(async move { templates.get_or_build(key("ui://svc/render/s1"), &gate, build).await })
            })
            .collect();
        until_built(&builds, 1).await;
        // This thread is free while the build waits: the readers have all arrived meanwhile.
        tokio::time::sleep(Duration::from_millis(50)).await;
        assert!(readers.iter().all(|reader| !reader.is_finished()));
        release.send(()).unwrap();
        let mut got = Vec::new();
        for reader in readers {
            got.push(reader.await.unwrap().expect("built"));
        }
        assert_eq!(
            builds.load(Ordering::SeqCst),
            1,
            "one build for every reader of the key"
        );
        assert!(got.iter().all(|template| Arc::ptr_eq(template, &got[0])));
        assert!(got[0].pieces.iter().all(|piece| match piece {
            Piece::Text(text) => text.is_deflated(),
            Piece::Hole(_) => true,
        }));
        assert!(ESCAPED_RUNTIME.is_deflated(), "the shared runtime too");
        let kept = templates.get(&key("ui://svc/render/s1")).expect("kept");
        assert!(Arc::ptr_eq(&kept, &got[0]));
        assert!(templates.building.lock().unwrap().is_empty());
    }

    #[tokio::test]
    async fn a_reader_that_goes_away_leaves_its_build_to_finish_and_be_kept() {
        let templates = Arc::new(ReadTemplates::default());
        let gate = CpuGate::new(1, Duration::from_secs(5));
        let builds = Arc::new(AtomicUsize::new(0));
        let (release, released) = mpsc::channel::<()>();
        let released = Arc::new(Mutex::new(released));
        let reader = {
            let (templates, gate, build) = (Arc::clone(&templates), gate.clone(), held_build(&builds, &released));
            tokio::spawn(async move { templates.get_or_build(key("ui://svc/render/s2"), &gate, build).await })
        };
        until_built(&builds, 1).await;
        reader.abort();
        release.send(()).unwrap();
        while templates.get(&key("ui://svc/render/s2")).is_none() {
            tokio::time::sleep(Duration::from_millis(1)).await;
        }
        let again = templates
            .get_or_build(key("ui://svc/render/s2"), &gate, card)
            .await
            .unwrap();
        assert_eq!(
            builds.load(Ordering::SeqCst),
            1,
            "{} bytes, built once",
            again.own_bytes()
        );
    }

    #[tokio::test]
    async fn with_every_slot_taken_each_reader_is_refused_busy_and_nothing_is_kept() {
        let templates = Arc::new(ReadTemplates::default());
        let gate = CpuGate::new(1, Duration::from_millis(20));
        let (release, released) = mpsc::channel::<()>();
        let holder = gate.clone();
        let holding =
            tokio::spawn(async move { holder.run(move || released.recv_timeout(Duration::from_secs(10))).await });
        while gate.run(|| ()).await.is_ok() {
            tokio::task::yield_now().await;
        }
        let readers = (0..2).map(|_| templates.get_or_build(key("ui://svc/render/s3"), &gate, card));
        for refused in futures_util::future::join_all(readers).await {
            assert!(matches!(
                refused,
                Err(BuildRefused::Busy(CpuBusy { retry_after_seconds: 1 }))
            ));
        }
        assert!(templates.get(&key("ui://svc/render/s3")).is_none());
        assert!(templates.building.lock().unwrap().is_empty());
        release.send(()).unwrap();
        holding.await.unwrap().unwrap().unwrap();
        assert!(
            templates
                .get_or_build(key("ui://svc/render/s3"), &gate, card)
                .await
                .is_ok(),
            "the slot is free again"
        );
    }
}
