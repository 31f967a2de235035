//! A small program embedding the server as a library (`svc::embed::EmbeddedServer`), as a user's
//! own binary would. Black-box tests spawn it (`CARGO_BIN_EXE_embedded-example`).
//!
//! `embedded-example --data-dir DIR [--host H] [--port P] [--database-url URL] [--key SECRET]`
//!
//! Without `--key` the server runs in the open mode (any bearer is accepted) and may only listen
//! on loopback; with it, only that bearer (and keys the server mints) authenticate. The first
//! line of stdout is `embedded svc listening on <base URL>`; a failure is one line on stderr.

use std::process::ExitCode;
use std::sync::Arc;

use svc::embed::{EmbeddedServer, StaticKeys};

fn main() -> ExitCode {
    match run() {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("embedded-example: {message}");
            ExitCode::FAILURE
        }
    }
}

fn run() -> Result<(), String> {
    let mut server = EmbeddedServer::builder().port(0);
    let mut args = std::env::args().skip(1);
    while let Some(flag) = args.next() {
        let value = args.next().ok_or_else(|| format!("{flag} needs a value"))?;
        server = match flag.as_str() {
            "--data-dir" => server.data_dir(value),
            "--host" => server.host(value),
            "--port" => server.port(value.parse().map_err(|e| format!("--port: {e}"))?),
            "--database-url" => server.database_url(value),
            "--key" => server.key_check(Arc::new(StaticKeys::new([("example", value)]))),
            other => return Err(format!("unknown flag {other}")),
        };
    }
    let runtime = tokio::runtime::Runtime::new().map_err(|e| e.to_string())?;
    runtime.block_on(async move {
        let app = server.build().await.map_err(|e| e.to_string())?;
        println!("embedded svc listening on {}", app.base_url);
        app.run_until(std::future::pending()).await.map_err(|e| e.to_string())
    })
}
