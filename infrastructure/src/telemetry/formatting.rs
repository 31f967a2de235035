//! Whether this thread is formatting a log line: the panic hook must not log a panic raised in
//! there (a field's `Debug` that panics). With only a global subscriber, tracing does dispatch an
//! event from within another, and a line logged while a span's fields are recorded would wait
//! for the lock on that span's fields its own thread holds.

use std::cell::Cell;
use std::fmt;

use tracing::Subscriber;
use tracing_subscriber::field::RecordFields;
use tracing_subscriber::fmt::format::Writer;
use tracing_subscriber::fmt::{FmtContext, FormatEvent, FormatFields};
use tracing_subscriber::registry::LookupSpan;

thread_local! {
    static FORMATTING: Cell<bool> = const { Cell::new(false) };
}

/// Runs `format` marked as formatting, the mark kept through a panic until it has unwound.
pub(super) fn while_formatting<T>(format: impl FnOnce() -> T) -> T {
    struct Restore(bool);
    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = FORMATTING.try_with(|formatting| formatting.set(self.0));
        }
    }
    let _restore = Restore(
        FORMATTING
            .try_with(|formatting| formatting.replace(true))
            .unwrap_or(false),
    );
    format()
}

/// Whether a line is being formatted on this thread (or its thread-locals are gone, when
/// nothing may be logged either).
pub(super) fn formatting() -> bool {
    FORMATTING.try_with(Cell::get).unwrap_or(true)
}

/// `tracing-subscriber`'s own formatters (the coloured terminal format), marked as formatting.
pub(super) struct Marked<F>(pub F);

impl<S, N, E> FormatEvent<S, N> for Marked<E>
where
    S: Subscriber + for<'a> LookupSpan<'a>,
    N: for<'a> FormatFields<'a> + 'static,
    E: FormatEvent<S, N>,
{
    fn format_event(&self, ctx: &FmtContext<'_, S, N>, writer: Writer<'_>, event: &tracing::Event<'_>) -> fmt::Result {
        while_formatting(|| self.0.format_event(ctx, writer, event))
    }
}

impl<'writer, F: FormatFields<'writer>> FormatFields<'writer> for Marked<F> {
    fn format_fields<R: RecordFields>(&self, writer: Writer<'writer>, fields: R) -> fmt::Result {
        while_formatting(|| self.0.format_fields(writer, fields))
    }
}
