//! Panics as log lines: Rust's own hook writes a panic's message to stderr at once, in plain text,
//! ahead of the lines still queued for the log's writer and outside a JSON log's format. Logged,
//! a panic is an `ERROR` line of target `svc::panic` in order with the rest, in the log's format,
//! inside the spans of the request that panicked (so it carries its `request_id`).

use std::panic::PanicHookInfo;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tracing::Level;
use tracing::subscriber::NoSubscriber;

use super::formatting;

const TARGET: &str = "svc::panic";

/// Routes panics into the log from now on; a panic the log cannot take goes to the hook that
/// was there before.
/// `writer_running`: whether the log's writer still takes lines.
pub(super) fn log_panics(writer_running: Arc<AtomicBool>) {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !writer_running.load(Ordering::Acquire) || !logged(info) {
            previous(info);
        }
    }));
}

/// Logs the panic unless it cannot: once the log's writer has stopped (the command is ending;
/// a line would be dropped), inside the log itself (a panic raised while a line or a span's fields
/// were formatted on this thread, see `formatting`), in the log's writer thread (which cannot queue
/// a line for itself: a full queue would wait forever), with no subscriber, or with a filter that
/// keeps `svc::panic` errors out.
fn logged(info: &PanicHookInfo<'_>) -> bool {
    if formatting::formatting() || std::thread::current().name() == Some(super::WRITER_THREAD) {
        return false;
    }
    let has_log = tracing::dispatcher::get_default(|dispatch| !dispatch.is::<NoSubscriber>());
    if !has_log || !tracing::enabled!(target: TARGET, Level::ERROR) {
        return false;
    }
    let message = info
        .payload()
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| info.payload().downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(a panic without a message)");
    let location = info.location().map(ToString::to_string).unwrap_or_default();
    let thread = std::thread::current();
    let thread = thread.name().unwrap_or("<unnamed>");
    match backtrace_style() {
        None => tracing::error!(target: TARGET, thread, location, "panicked: {message}"),
        Some(full) => {
            let backtrace = std::backtrace::Backtrace::force_capture();
            let backtrace = if full {
                format!("{backtrace:#}")
            } else {
                format!("{backtrace}")
            };
            tracing::error!(target: TARGET, thread, location, backtrace, "panicked: {message}");
        }
    }
    true
}

/// Whether a backtrace is wanted and whether in full, as Rust's hook reads `RUST_BACKTRACE`:
/// unset or `0`, none; `full`, full; anything else, short.
fn backtrace_style() -> Option<bool> {
    match std::env::var_os("RUST_BACKTRACE") {
        None => None,
        Some(value) if value == "0" => None,
        Some(value) => Some(value == "full"),
    }
}
