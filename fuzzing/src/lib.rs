//! The bodies of the fuzz targets in `fuzz/` (cargo-fuzz, nightly): each takes arbitrary bytes
//! and drives one parser of untrusted input. A panic, an abort (a stack overflow) or a hang is a
//! finding; so is a broken invariant asserted here. The bodies are plain stable functions, so
//! `tests/corpus.rs` runs every committed seed (`fuzz/corpus/<target>/`) as an ordinary test and
//! a crash found by the fuzzer becomes a regression test by adding its input to the corpus.

mod app_manifest;
mod contract;
mod manifest;
mod transport;
mod tsx;

pub use app_manifest::app_manifest;
pub use contract::contract;
pub use manifest::manifest;
pub use transport::{jsonrpc_request, ws_frame};
pub use tsx::tsx_compile;

/// A target's body: arbitrary bytes in; a panic is a finding.
pub type Body = fn(&[u8]);

/// Every target: its name (the `fuzz/fuzz_targets/<name>.rs` binary and the corpus directory)
/// and its body.
pub const TARGETS: [(&str, Body); 6] = [
    ("contract", contract),
    ("tsx_compile", tsx_compile),
    ("jsonrpc_request", jsonrpc_request),
    ("ws_frame", ws_frame),
    ("manifest", manifest),
    ("app_manifest", app_manifest),
];

/// The input as JSON, when it is JSON at all (what every JSON-fed body starts from).
fn json(data: &[u8]) -> Option<serde_json::Value> {
    serde_json::from_slice(data).ok()
}
