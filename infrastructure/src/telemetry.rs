//! Logs: human-readable on a terminal, JSON with `--log-format json`; `RUST_LOG` filters.
//!
//! Two layers write to stderr under the same filter: one writes events, the other only a line
//! when a span closes, with the span's duration (`time.busy`, `time.idle`). So the spans of a
//! handshake, a render and its generation stages and provider calls (and, with
//! `RUST_LOG=info,sea_orm=info`, every database statement) show how long they took, while a
//! request still logs one access line (its own span stays silent: it closes in the middleware).

use tracing::Metadata;
use tracing_subscriber::filter::{Directive, EnvFilter, FilterExt, FilterFn, LevelFilter, filter_fn};
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::SubscriberInitExt;
use tracing_subscriber::{Layer, Registry, fmt};

use crate::settings::LogFormat;

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

/// [`timed_span`] as a filter that says it lets any level through, so that combined with the
/// `RUST_LOG` filter the subscriber's most verbose level is that filter's. Without the hint the
/// subscriber's hint is "any", the `log` crate's maximum level is set to `trace`, and every
/// `log::trace!` in a library (tungstenite traces each frame it reads and writes) went through
/// the filter to be dropped: a sixth of the server binary's own work in a fan-out to 1,000 sockets
/// (BENCHMARKS.md, session 32).
fn timed_spans() -> FilterFn<fn(&Metadata<'_>) -> bool> {
    filter_fn(timed_span as fn(&Metadata<'_>) -> bool).with_max_level_hint(LevelFilter::TRACE)
}

pub fn init(format: LogFormat) {
    // A second init (tests starting several servers) is harmless.
    let rust_log = std::env::var("RUST_LOG").ok();
    let _ = subscriber(format == LogFormat::Json, rust_log.as_deref()).try_init();
}

/// The two layers, boxed rather than optional: an absent (`None`) layer declares an interest in
/// every callsite, which made the libraries' trace-level spans (sea-orm opens several per
/// statement) be built and recorded on every request although no filter lets them out.
fn subscriber(json: bool, rust_log: Option<&str>) -> impl tracing::Subscriber + Send + Sync {
    let layers: Vec<Box<dyn Layer<Registry> + Send + Sync>> = if json {
        vec![
            fmt::layer()
                .json()
                .with_writer(std::io::stderr)
                .with_filter(filter(rust_log))
                .boxed(),
            fmt::layer()
                .json()
                .with_writer(std::io::stderr)
                .with_span_events(FmtSpan::CLOSE)
                .with_filter(filter(rust_log).and(timed_spans()))
                .boxed(),
        ]
    } else {
        vec![
            fmt::layer()
                .with_writer(std::io::stderr)
                .with_filter(filter(rust_log))
                .boxed(),
            fmt::layer()
                .with_writer(std::io::stderr)
                .with_span_events(FmtSpan::CLOSE)
                .with_filter(filter(rust_log).and(timed_spans()))
                .boxed(),
        ]
    };
    tracing_subscriber::registry().with(layers)
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
            tracing::subscriber::with_default(subscriber(json, None), || {
                let statement = tracing::trace_span!(target: "sea_orm::database::transaction", "execute");
                assert!(statement.is_disabled(), "a library's trace span (json: {json})");
                let stage = tracing::info_span!(target: "svc_application::render", "generate");
                assert!(!stage.is_disabled(), "our own info span (json: {json})");
            });
        }
        tracing::subscriber::with_default(subscriber(false, Some("info,sea_orm=trace")), || {
            let statement = tracing::trace_span!(target: "sea_orm::database::transaction", "execute");
            assert!(!statement.is_disabled(), "RUST_LOG asked for it");
        });
    }

    /// The hint becomes the `log` crate's maximum level (`try_init`), where a library's
    /// `log::trace!` is dropped for the price of one comparison.
    #[test]
    fn the_most_verbose_level_is_the_one_rust_log_asks_for() {
        use tracing::Subscriber;
        for json in [false, true] {
            assert_eq!(
                subscriber(json, None).max_level_hint(),
                Some(LevelFilter::INFO),
                "json: {json}"
            );
        }
        assert_eq!(
            subscriber(false, Some("warn,svc=debug")).max_level_hint(),
            Some(LevelFilter::DEBUG)
        );
    }
}
