//! Logs: human-readable on a terminal, JSON with `--log-format json`; `RUST_LOG` filters.
//!
//! Two layers write to stderr under the same filter: one writes events, the other only a line
//! when a span closes, with the span's duration (`time.busy`, `time.idle`). So the spans of a
//! handshake, a render and its generation stages and provider calls (and, with
//! `RUST_LOG=info,sea_orm=info`, every database statement) show how long they took, while a
//! request still logs one access line (its own span stays silent: it closes in the middleware).

use tracing::Metadata;
use tracing_subscriber::filter::{Directive, EnvFilter, FilterExt, filter_fn};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, fmt};

/// Libraries that log whole messages below `info` (the WebSocket library traces every frame,
/// `wsToken`s and session tokens included). They are held at `info` whatever `RUST_LOG` asks,
/// so no level of our log carries a credential.
const SECRET_BEARING_TARGETS: [&str; 2] = ["tungstenite", "tokio_tungstenite"];
const DEFAULT_FILTER: &str = "info,sqlx=warn,sea_orm=warn";

/// Spans whose closing is not worth a line: the request span (the access line has its duration).
const UNTIMED_SPANS: &[&str] = &["request"];

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

/// `RUST_LOG` (default `info`, quieter SQL), with the secret-bearing targets capped. A target
/// directive is more specific than a bare level, and `add_directive` replaces one for the same
/// target, so neither `RUST_LOG=trace` nor `RUST_LOG=tungstenite=trace` lifts the cap.
fn filter() -> EnvFilter {
    let base = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new(DEFAULT_FILTER));
    SECRET_BEARING_TARGETS.iter().fold(base, |filter, target| {
        let directive: Directive = format!("{target}=info").parse().expect("a static directive");
        filter.add_directive(directive)
    })
}
