//! Panics as log lines: Rust's own hook writes a panic's message to stderr at once, in plain text,
//! ahead of the lines still queued for the log's writer and outside a JSON log's format. Logged,
//! a panic is an `ERROR` line of target `svc::panic` in order with the rest, in the log's format,
//! inside the spans of the request that panicked (so it carries its `request_id`).

use std::panic::PanicHookInfo;

use tracing::Level;
use tracing::subscriber::NoSubscriber;

use super::formatting;

const TARGET: &str = "svc::panic";

/// Routes panics into the log from now on; a panic the log cannot take goes to the hook that
/// was there before.
pub(super) fn log_panics() {
    let previous = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !logged(info) {
            previous(info);
        }
    }));
}

/// Logs the panic unless it cannot: a panic inside the log itself (raised while a line or a
/// span's fields were formatted on this thread, see `formatting`), in the log's writer thread
/// (which cannot queue a line for itself: a full queue would wait forever), with no subscriber,
/// or with a filter that keeps `svc::panic` errors out.
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
    // Captured as Rust's hook would: only when RUST_BACKTRACE (or RUST_LIB_BACKTRACE) asks.
    let backtrace = std::backtrace::Backtrace::capture();
    if backtrace.status() == std::backtrace::BacktraceStatus::Captured {
        tracing::error!(target: TARGET, thread = thread.name(), location, %backtrace, "panicked: {message}");
    } else {
        tracing::error!(target: TARGET, thread = thread.name(), location, "panicked: {message}");
    }
    true
}
