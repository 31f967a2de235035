//! Where a large stored row is parsed: a session's props (up to the 4 MiB props budget) and its
//! context parse in tens of milliseconds, long enough to stall an async worker and every request
//! it serves (`/healthz` among them). Rows of at least [`PARSED_ON_THE_GATE`] bytes are parsed on
//! a blocking thread through the CPU gate that bounds all heavy work of untrusted input (the same
//! gate `resources/read` builds its documents on); smaller ones cost less than the hop and are
//! parsed where they are read.
//!
//! A parse waits for a slot at most the gate's wait (`limits.cpu_heavy_wait_ms`) and is never
//! refused: every session read goes through here (`svc_consume`, `svc_get_session`, the live
//! channel's subscribe and polls, `resources/read`), most of which have no "busy, retry" answer.
//! Past the wait it runs on a blocking thread without a slot: readers of large rows then neither
//! queue without bound (each holding its row's text) nor run on an async worker.
//!
//! A parse is not shared between readers of one row: the first read keeps the row in the read
//! cache (`read_cache.rs`), so only readers that arrive within that one parse parse it too, each
//! on a slot. Sharing it would have to keep the read cache's rule that a read sees every write
//! acknowledged before it began, which a replica learns of only when the write is announced.

use std::sync::{Arc, Mutex};

use svc_application::ports::RepositoryError;
use svc_application::services::cpu_gate::{CpuGate, CpuWorkError};

/// Stored text, in bytes, from which a row is parsed off the async workers (a fraction of a
/// millisecond of parsing below it).
pub(crate) const PARSED_ON_THE_GATE: usize = 64 * 1024;

/// Parses rows read by a repository: large ones on `gate`, when there is one.
#[derive(Clone, Default)]
pub(crate) struct RowParser {
    gate: Option<CpuGate>,
}

impl RowParser {
    pub(crate) fn on(gate: Option<CpuGate>) -> Self {
        Self { gate }
    }

    /// `parse` of a row of `stored_bytes` of text, on the gate when the row is large.
    pub(crate) async fn parse<T: Send + 'static>(
        &self,
        stored_bytes: usize,
        parse: impl FnOnce() -> Result<T, RepositoryError> + Send + 'static,
    ) -> Result<T, RepositoryError> {
        let Some(gate) = self.gate.as_ref().filter(|_| stored_bytes >= PARSED_ON_THE_GATE) else {
            return parse();
        };
        // Shared so that a refused slot leaves the parse here to run without one.
        let work = Arc::new(Mutex::new(Some(parse)));
        let on_the_gate = Arc::clone(&work);
        let parsed = gate.run(move || take(&on_the_gate).map(|parse| parse())).await;
        let unavailable = |failed: String| RepositoryError::Unavailable(anyhow::anyhow!(failed));
        match parsed {
            Ok(Some(parsed)) => parsed,
            Ok(None) => unreachable!("the parse runs once, on the gate when admitted"),
            Err(CpuWorkError::Busy(_)) => {
                let parse = take(&work).expect("a refused slot ran nothing");
                tokio::task::spawn_blocking(parse)
                    .await
                    .map_err(|panicked| unavailable(panicked.to_string()))?
            }
            Err(failed) => Err(unavailable(failed.to_string())),
        }
    }
}

fn take<F>(work: &Mutex<Option<F>>) -> Option<F> {
    work.lock().expect("a parse's slot").take()
}
