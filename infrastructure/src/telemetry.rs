//! Logs: human-readable on a terminal, JSON with `--log-format json`; `RUST_LOG` filters.

use tracing_subscriber::EnvFilter;

pub fn init(format: &str) {
    let filter = EnvFilter::try_from_default_env().unwrap_or_else(|_| EnvFilter::new("info,sqlx=warn,sea_orm=warn"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_writer(std::io::stderr);
    // A second init (tests starting several servers) is harmless.
    let _ = if format == "json" {
        builder.json().try_init()
    } else {
        builder.try_init()
    };
}
