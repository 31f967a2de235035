//! Where the server listens, and whether `--dev-allow-all` may be exposed there.

use crate::settings::Settings;

/// A host name or address that only this machine reaches: `localhost`, or an IPv4/IPv6 loopback
/// address (brackets allowed). A name that merely starts with `127.` is not one.
pub fn is_loopback(host: &str) -> bool {
    let bare = host.strip_prefix('[').and_then(|h| h.strip_suffix(']')).unwrap_or(host);
    bare.eq_ignore_ascii_case("localhost") || bare.parse::<std::net::IpAddr>().is_ok_and(|ip| ip.is_loopback())
}

/// The host as written in a `host:port` authority: a bare IPv6 literal gets its brackets
/// (`::1` -> `[::1]`), anything else (a name, IPv4, an already bracketed literal) stays.
pub fn authority_host(host: &str) -> String {
    if host.parse::<std::net::Ipv6Addr>().is_ok() {
        format!("[{host}]")
    } else {
        host.to_owned()
    }
}

/// The address to bind: `host:port`, with IPv6 literals bracketed so they parse.
pub fn listen_address(host: &str, port: u16) -> String {
    format!("{}:{port}", authority_host(host))
}

/// The `Host` names a loopback-bound server answers besides loopback names: `server.allowed_hosts`
/// and the hosts of the public URLs the operator configured (`public_base_url`, `oauth.issuer`,
/// `mcp_apps.ws_url`). Naming a public URL says requests for its host are this server's, so a
/// server behind a proxy that forwards `Host` needs no second setting; a rebinding attacker's
/// name is none of these.
pub fn allowed_hosts(settings: &Settings, base_url: &str) -> Vec<String> {
    let mut hosts = settings.server.allowed_hosts.clone();
    let configured = [
        settings.server.public_base_url.as_str(),
        base_url,
        settings.oauth.issuer.as_str(),
        settings.mcp_apps.ws_url.as_str(),
    ];
    for url in configured.into_iter().map(str::trim).filter(|url| !url.is_empty()) {
        let Ok(parsed) = reqwest::Url::parse(url) else {
            continue;
        };
        if let Some(host) = parsed.host_str()
            && !is_loopback(host)
            && !hosts.iter().any(|known| known.eq_ignore_ascii_case(host))
        {
            hosts.push(host.to_owned());
        }
    }
    hosts
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
    fn loopback_is_an_address_or_localhost_never_a_lookalike_name() {
        for host in ["127.0.0.1", "127.8.9.10", "localhost", "::1", "[::1]"] {
            assert!(is_loopback(host), "{host}");
        }
        for host in ["0.0.0.0", "10.0.0.1", "127.evil.example", "example.com", "::"] {
            assert!(!is_loopback(host), "{host}");
        }
    }

    #[test]
    fn ipv6_literals_are_bracketed_once_in_an_authority() {
        assert_eq!(listen_address("::1", 7000), "[::1]:7000");
        assert_eq!(listen_address("[::1]", 7000), "[::1]:7000");
        assert_eq!(listen_address("127.0.0.1", 7000), "127.0.0.1:7000");
        assert_eq!(listen_address("localhost", 7000), "localhost:7000");
        for addr in [listen_address("::1", 7000), listen_address("[::1]", 7000)] {
            assert!(addr.parse::<std::net::SocketAddr>().is_ok(), "{addr} must parse");
        }
    }

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

    #[test]
    fn the_hosts_of_configured_public_urls_are_allowed_besides_the_listed_ones() {
        let mut settings = Settings::load_from(None, Vec::new()).unwrap();
        settings.server.allowed_hosts = vec!["tunnel.example".into()];
        settings.server.public_base_url = "https://svc.example.com".into();
        settings.oauth.issuer = "https://auth.example.com/".into();
        settings.mcp_apps.ws_url = "wss://live.example.com/ws".into();
        assert_eq!(
            allowed_hosts(&settings, "https://svc.example.com"),
            [
                "tunnel.example",
                "svc.example.com",
                "auth.example.com",
                "live.example.com"
            ]
        );
        // Nothing configured: loopback names only (the default base URL is loopback).
        let plain = Settings::load_from(None, Vec::new()).unwrap();
        assert!(allowed_hosts(&plain, "http://127.0.0.1:6781").is_empty());
    }
}
