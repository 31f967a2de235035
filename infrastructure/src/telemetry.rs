//! Logs: human-readable on a terminal, JSON with `--log-format json`; `RUST_LOG` filters.
//!
//! One layer writes to stderr behind the `RUST_LOG` filter: events, and a line when a span closes,
//! with the span's duration (`time.busy`, `time.idle`, [`span_timings`]). So the spans of a
//! handshake, a render and its generation stages and provider calls (and, with
//! `RUST_LOG=info,sea_orm=info`, every database statement) show how long they took, while a
//! request still logs one access line (its own span stays silent: it closes in the middleware).
//!
//! Every request logs a line, so the line's cost is every request's: lines are formatted where
//! they happen, by formatters of our own except at a terminal ([`line`]: `tracing-subscriber`'s
//! layouts, written straight into the line), in colour only for a terminal ([`colours_wanted`]),
//! and written by a thread of their own, in order, in as few writes as have queued up
//! ([`LogWriter`]). Coloured and written on the request's own thread, the access line doubled
//! `/healthz`'s CPU per request (BENCHMARKS.md, sessions 43 and 44). A panic is a line of the
//! log like any other ([`panics`]).

mod clock;
mod escape;
pub(crate) use escape::escaped_text;
mod fields;
mod formatting;
mod line;
#[cfg(test)]
mod line_tests;
mod panics;
#[cfg(test)]
mod panics_tests;
mod span_fields;
mod span_timings;

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};

use tracing_subscriber::filter::{Directive, EnvFilter};
use tracing_subscriber::fmt::format::{DefaultFields, Format};
use tracing_subscriber::fmt::{FormatEvent, FormatFields, MakeWriter};
use tracing_subscriber::layer::{Layered, SubscriberExt};
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, Registry, fmt};

use tracing_appender::non_blocking::{NonBlocking, NonBlockingBuilder, WorkerGuard};

use crate::settings::LogFormat;

/// Libraries that log whole messages below `info` (the WebSocket library traces every frame,
/// `wsToken`s and session tokens included). They are held at `info` whatever `RUST_LOG` asks,
/// so no level of our log carries a credential.
const SECRET_BEARING_TARGETS: [&str; 2] = ["tungstenite", "tokio_tungstenite"];
const DEFAULT_FILTER: &str = "info,sqlx=warn,sea_orm=warn";

/// The log's writer thread.
const WRITER_THREAD: &str = "svc-log";
/// Lines queued for the writer before a thread that logs waits for it: no line is dropped,
/// and a flood of them slows the server to the speed of stderr, as writing them in place did.
const QUEUED_LINES: usize = 128_000;
/// The writer's buffer: lines that queued up while it wrote go out in one write of up to this.
const WRITE_BUFFER_BYTES: usize = 64 * 1024;

/// Holds the log's writer: dropping it writes the lines still queued and stops the writer,
/// waiting for stderr at most about a second (`tracing-appender`'s guard: what a stalled stderr
/// has not taken by then is lost). Hold it until the command ends; a line logged after it is
/// dropped is lost.
#[must_use = "dropping it stops the log's writer"]
pub struct LogWriter {
    /// Cleared before the writer stops, so that a panic from then on goes to Rust's own hook
    /// instead of a queue nobody reads ([`panics`]).
    running: Option<Arc<AtomicBool>>,
    _writer: Option<WorkerGuard>,
}

impl Drop for LogWriter {
    fn drop(&mut self) {
        if let Some(running) = &self.running {
            running.store(false, Ordering::Release);
        }
    }
}

/// Starts the log on stderr; hold the answer until the command ends. A second init (tests
/// starting several servers) is harmless: the first log stays.
pub fn init(format: LogFormat) -> LogWriter {
    let rust_log = std::env::var("RUST_LOG").ok();
    let (writer, guard) = stderr_writer();
    let ansi = colours_wanted();
    match subscriber(writer, format == LogFormat::Json, ansi, rust_log.as_deref()).try_init() {
        Ok(()) => {
            let running = Arc::new(AtomicBool::new(true));
            panics::log_panics(running.clone());
            LogWriter {
                running: Some(running),
                _writer: Some(guard),
            }
        }
        Err(_) => LogWriter {
            running: None,
            _writer: None,
        },
    }
}

/// Colours (ANSI escapes) only for a person at a terminal: a log written to a file, a pipe or a
/// journal gets plain text. `NO_COLOR` (any value but empty) turns them off there too.
fn colours_wanted() -> bool {
    use std::io::IsTerminal;
    std::io::stderr().is_terminal() && std::env::var_os("NO_COLOR").is_none_or(|value| value.is_empty())
}

/// stderr behind a queue and a thread of its own, which writes what has queued up at once and
/// flushes when the queue is empty, so a line is out as soon as the writer is free.
fn stderr_writer() -> (NonBlocking, WorkerGuard) {
    NonBlockingBuilder::default()
        .lossy(false)
        .buffered_lines_limit(QUEUED_LINES)
        .thread_name(WRITER_THREAD)
        .finish(std::io::BufWriter::with_capacity(WRITE_BUFFER_BYTES, std::io::stderr()))
}

/// The log's one layer behind `RUST_LOG`'s filter: lines of events, and of timed spans as they
/// close ([`span_timings`]). Boxed, and the same for every format, rather than optional: an
/// absent (`None`) layer declares an interest in every callsite, which made the libraries'
/// trace-level spans (sea-orm opens several per statement) be built and recorded on every
/// request although no filter lets them out. A terminal gets `tracing-subscriber`'s own coloured
/// format; a file, a pipe or a journal ours.
fn subscriber<W>(writer: W, json: bool, ansi: bool, rust_log: Option<&str>) -> impl tracing::Subscriber + Send + Sync
where
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let lines: LogLayer = if json {
        lines(span_fields::JsonFields, line::JsonLine, false, writer)
    } else if ansi {
        lines(
            formatting::Marked(DefaultFields::new()),
            formatting::Marked(Format::default()),
            true,
            writer,
        )
    } else {
        lines(span_fields::TextFields, line::TextLine, false, writer)
    };
    tracing_subscriber::registry().with(filter(rust_log)).with(lines)
}

/// What the log's layer sits on: the registry of spans behind the `RUST_LOG` filter.
type Filtered = Layered<EnvFilter, Registry>;
type LogLayer = Box<dyn Layer<Filtered> + Send + Sync>;

/// Events formatted by `line`, a span's fields kept as `span_fields` formats them, and a line for
/// each timed span as it closes.
fn lines<N, E, W>(span_fields: N, line: E, ansi: bool, writer: W) -> LogLayer
where
    N: for<'w> FormatFields<'w> + Send + Sync + 'static,
    E: FormatEvent<Filtered, N> + Send + Sync + 'static,
    W: for<'w> MakeWriter<'w> + Send + Sync + 'static,
{
    let lines = fmt::layer()
        .fmt_fields(span_fields)
        .event_format(line)
        .with_ansi(ansi)
        .with_writer(writer);
    Box::new(span_timings::WithSpanTimings { lines })
}

/// `RUST_LOG` (default `info`, quieter SQL), with the secret-bearing targets capped. A target
/// directive is more specific than a bare level, and `add_directive` replaces one for the same
/// target, so neither `RUST_LOG=trace` nor `RUST_LOG=tungstenite=trace` lifts the cap.
fn filter(rust_log: Option<&str>) -> EnvFilter {
    let base = rust_log
        .and_then(|directives| EnvFilter::try_new(directives).ok())
        .unwrap_or_else(|| EnvFilter::new(DEFAULT_FILTER));
    SECRET_BEARING_TARGETS.iter().fold(base, |filter, target| {
        let directive: Directive = format!("{target}=info").parse().expect("a static directive");
        filter.add_directive(directive)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spans_no_filter_lets_out_are_never_built() {
        for json in [false, true] {
            tracing::subscriber::with_default(subscriber(std::io::sink, json, false, None), || {
                let statement = tracing::trace_span!(target: "sea_orm::database::transaction", "execute");
                assert!(statement.is_disabled(), "a library's trace span (json: {json})");
                let stage = tracing::info_span!(target: "svc_application::render", "generate");
                assert!(!stage.is_disabled(), "our own info span (json: {json})");
            });
        }
        tracing::subscriber::with_default(
            subscriber(std::io::sink, false, false, Some("info,sea_orm=trace")),
            || {
                let statement = tracing::trace_span!(target: "sea_orm::database::transaction", "execute");
                assert!(!statement.is_disabled(), "RUST_LOG asked for it");
            },
        );
    }

    /// The hint becomes the `log` crate's maximum level (`try_init`), where a library's
    /// `log::trace!` is dropped for the price of one comparison. Without it the `log` crate's
    /// maximum level was `trace`, and every `log::trace!` of tungstenite (each frame read and
    /// written) went through the filter to be dropped: a sixth of the server binary's own work
    /// in a fan-out to 1,000 sockets (BENCHMARKS.md, session 32).
    #[test]
    fn the_most_verbose_level_is_the_one_rust_log_asks_for() {
        use tracing::Subscriber;
        use tracing_subscriber::filter::LevelFilter;
        for json in [false, true] {
            assert_eq!(
                subscriber(std::io::sink, json, false, None).max_level_hint(),
                Some(LevelFilter::INFO),
                "json: {json}"
            );
        }
        assert_eq!(
            subscriber(std::io::sink, false, false, Some("warn,svc=debug")).max_level_hint(),
            Some(LevelFilter::DEBUG)
        );
    }
}
