//! Logs: human-readable on a terminal, JSON with `--log-format json`; `RUST_LOG` filters.
//!
//! Two layers write to stderr under the same filter: one writes events, the other only a line
//! when a span closes, with the span's duration (`time.busy`, `time.idle`). So the spans of a
//! handshake, a render and its generation stages and provider calls (and, with
//! `RUST_LOG=info,sea_orm=info`, every database statement) show how long they took, while a
//! request still logs one access line (its own span stays silent: it closes in the middleware).

use tracing::Metadata;
use tracing_subscriber::filter::{EnvFilter, FilterExt, filter_fn};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, fmt};

const DEFAULT_FILTER: &str = "info,sqlx=warn,sea_orm=warn";

/// Spans whose closing is not worth a line: the request span (the access line has its duration).
const UNTIMED_SPANS: &[&str] = &["request"];

fn filter() -> EnvFilter {
    EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER))
}

fn timed_span(meta: &Metadata<'_>) -> bool {
    meta.is_span() && !UNTIMED_SPANS.contains(&meta.name())
}

pub fn init(format: &str) {
    let json = format == "json";
    let registry = tracing_subscriber::registry()
        .with(json.then(|| fmt::layer().json().with_writer(std::io::stderr).with_filter(filter())))
        .with((!json).then(|| fmt::layer().with_writer(std::io::stderr).with_filter(filter())))
        .with(json.then(|| {
            fmt::layer()
                .json()
                .with_writer(std::io::stderr)
                .with_span_events(FmtSpan::CLOSE)
                .with_filter(filter().and(filter_fn(timed_span)))
        }))
        .with((!json).then(|| {
            fmt::layer()
                .with_writer(std::io::stderr)
                .with_span_events(FmtSpan::CLOSE)
                .with_filter(filter().and(filter_fn(timed_span)))
        }));
    // A second init (tests starting several servers) is harmless.
    let _ = registry.try_init();
}
