//! Logs: human-readable on a terminal, JSON with `--log-format json`; `RUST_LOG` filters.

use tracing_subscriber::EnvFilter;
use tracing_subscriber::filter::Directive;

/// Libraries that log whole messages below `info` (the WebSocket library traces every frame,
/// `wsToken`s and session tokens included). They are held at `info` whatever `RUST_LOG` asks,
/// so no level of our log carries a credential.
const SECRET_BEARING_TARGETS: [&str; 2] = ["tungstenite", "tokio_tungstenite"];

pub fn init(format: &str) {
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter())
        .with_writer(std::io::stderr);
    // A second init (tests starting several servers) is harmless.
    let _ = if format == "json" {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}

/// `RUST_LOG` (default `info`, quieter SQL), with the secret-bearing targets capped. A target
/// directive is more specific than a bare level, and `add_directive` replaces one for the same
/// target, so neither `RUST_LOG=trace` nor `RUST_LOG=tungstenite=trace` lifts the cap.
fn filter() -> EnvFilter {
    let base = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,sea_orm=warn"));
    SECRET_BEARING_TARGETS.iter().fold(base, |filter, target| {
        let directive: Directive = format!("{target}=info").parse().expect("a static directive");
        filter.add_directive(directive)
    })
}
