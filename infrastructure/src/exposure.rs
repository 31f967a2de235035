//! Where the server listens, and whether `--dev-allow-all` may be exposed there.

use crate::settings::Settings;

/// A host name or address that only this machine reaches.
pub fn is_loopback(host: &str) -> bool {
    matches!(host, "127.0.0.1" | "localhost" | "::1") || host.starts_with("127.")
}

/// `--dev-allow-all` accepts any bearer: on a non-loopback address anyone who reaches the port
/// acts as `builder`, so that needs the operator's explicit acknowledgement.
pub fn check_dev_allow_all(settings: &Settings) -> Result<(), String> {
    let server = &settings.server;
    if !server.dev_allow_all || server.dev_allow_all_remote || is_loopback(&server.host) {
        return Ok(());
    }
    Err(format!(
        "--dev-allow-all on {} would let anyone who reaches the port act as `builder`; bind to 127.0.0.1, \
         or acknowledge it with --dev-allow-all-remote (server.dev_allow_all_remote = true)",
        server.host
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn dev_allow_all_off_loopback_needs_the_acknowledgement() {
        let mut s = Settings::load_from(None, Vec::new()).unwrap();
        s.server.dev_allow_all = true;
        assert!(check_dev_allow_all(&s).is_ok(), "loopback is fine");
        s.server.host = "0.0.0.0".into();
        let err = check_dev_allow_all(&s).unwrap_err();
        assert!(
            err.contains("0.0.0.0") && err.contains("--dev-allow-all-remote"),
            "{err}"
        );
        s.server.dev_allow_all_remote = true;
        assert!(check_dev_allow_all(&s).is_ok());
        s.server.dev_allow_all = false;
        s.server.dev_allow_all_remote = false;
        assert!(check_dev_allow_all(&s).is_ok(), "strict auth may listen anywhere");
    }
}
