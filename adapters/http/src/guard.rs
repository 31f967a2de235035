//! DNS-rebinding protection: a server bound to loopback answers only requests whose `Host` names a
//! loopback host or a configured allowed host. The request target's own authority stands in for
//! `Host` where it has one: HTTP/2 carries the host as `:authority` (and clients send no `Host`),
//! and an HTTP/1.1 request in absolute form names it there (RFC 9112 says to ignore `Host` then). The tool routes also check `Origin`, when sent;
//! the runtime bundle and the live channel do not, because mounted cards load them from the host's
//! sandbox origin (they carry their own token).

use std::future::Future;

use poem::http::StatusCode;
use poem::{Endpoint, IntoResponse, Middleware, Request, Response};

use crate::layered;

#[derive(Debug, Clone)]
pub struct HostGuard {
    /// Off when the server listens on a non-loopback address (a deployment behind a proxy).
    enabled: bool,
    /// Extra host names (without port) accepted besides loopback names.
    allowed_hosts: Vec<String>,
    check_origin: bool,
}

impl HostGuard {
    pub fn new(enabled: bool, allowed_hosts: Vec<String>) -> Self {
        Self {
            enabled,
            allowed_hosts: allowed_hosts.into_iter().map(|h| h.to_ascii_lowercase()).collect(),
            check_origin: true,
        }
    }

    /// The same guard without the `Origin` check, for routes that mounted cards call.
    pub fn host_only(&self) -> Self {
        Self {
            check_origin: false,
            ..self.clone()
        }
    }

    fn host_allowed(&self, host: &str) -> bool {
        // Userinfo (`localhost:x@evil.example`) would otherwise read as the name before its `:`.
        if host.contains('@') {
            return false;
        }
        // Compared without case, in place: no lower-cased copy per request.
        let name = host_name(host);
        ["localhost", "127.0.0.1", "[::1]", "::1"]
            .iter()
            .any(|loopback| name.eq_ignore_ascii_case(loopback))
            || ends_with_ignoring_case(name, ".localhost")
            || self.allowed_hosts.iter().any(|h| h.eq_ignore_ascii_case(name))
    }

    fn check(&self, req: &Request) -> Result<(), &'static str> {
        if !self.enabled {
            return Ok(());
        }
        if !self.host_allowed(target_host(req)) {
            return Err("Host header is not an allowed host");
        }
        if let Some(origin) = req.header(poem::http::header::ORIGIN).filter(|_| self.check_origin)
            && origin != "null"
        {
            let authority = origin.split("://").nth(1).unwrap_or(origin);
            if !self.host_allowed(authority) {
                return Err("Origin is not an allowed host");
            }
        }
        Ok(())
    }
}

/// The host a request is for: its target's authority when it has one, else its `Host` header.
fn target_host(req: &Request) -> &str {
    match req.uri().authority() {
        Some(authority) => authority.as_str(),
        None => req.header(poem::http::header::HOST).unwrap_or_default(),
    }
}

/// The host without the port (`[::1]:80` -> `[::1]`), in the case it was written.
fn host_name(authority: &str) -> &str {
    let authority = authority.trim();
    if authority.starts_with('[') {
        return authority.find(']').map_or(authority, |end| &authority[..=end]);
    }
    authority.split(':').next().unwrap_or_default()
}

fn ends_with_ignoring_case(name: &str, suffix: &str) -> bool {
    let (name, suffix) = (name.as_bytes(), suffix.as_bytes());
    name.len() >= suffix.len() && name[name.len() - suffix.len()..].eq_ignore_ascii_case(suffix)
}

impl<E: Endpoint> Middleware<E> for HostGuard {
    type Output = GuardEndpoint<E>;

    fn transform(&self, ep: E) -> Self::Output {
        GuardEndpoint {
            inner: ep,
            guard: self.clone(),
        }
    }
}

pub struct GuardEndpoint<E> {
    inner: E,
    guard: HostGuard,
}

impl<E: Endpoint> Endpoint for GuardEndpoint<E> {
    type Output = Response;

    fn call(&self, req: Request) -> impl Future<Output = poem::Result<Self::Output>> + Send {
        if let Err(reason) = self.guard.check(&req) {
            tracing::warn!(reason, host = target_host(&req), "request refused by the host guard");
            return layered::answer_now((StatusCode::FORBIDDEN, reason).into_response());
        }
        layered::pass_on(&self.inner, req)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loopback_names_pass_and_others_do_not() {
        let guard = HostGuard::new(true, vec!["svc.example.com".into()]);
        for ok in [
            "localhost:6781",
            "127.0.0.1",
            "[::1]:6781",
            "svc.example.com",
            "app.localhost:1",
            "LOCALHOST:6781",
            "App.LocalHost",
            "[::1]",
            "SVC.Example.Com:443",
        ] {
            assert!(guard.host_allowed(ok), "{ok}");
        }
        for bad in [
            "evil.com",
            "127.0.0.1.evil.com",
            "",
            "localhost.evil.com:80",
            "localhost:6781@evil.com",
            "xlocalhost",
            "[::1",
            "[::2]:6781",
            "svc.example.com.evil.com",
        ] {
            assert!(!guard.host_allowed(bad), "{bad}");
        }
    }

    fn request(target: &str, host: Option<&str>) -> Request {
        let mut builder = Request::builder().uri(target.parse().unwrap());
        if let Some(host) = host {
            builder = builder.header("host", host);
        }
        builder.finish()
    }

    #[test]
    fn the_targets_authority_stands_in_for_host() {
        let guard = HostGuard::new(true, vec![]);
        // HTTP/2: `:authority` only, no `Host`.
        assert!(guard.check(&request("http://127.0.0.1:6781/mcp", None)).is_ok());
        assert_eq!(
            guard.check(&request("http://rebound.example:6781/mcp", None)),
            Err("Host header is not an allowed host")
        );
        // Absolute form names the host; a `Host` beside it is not what decides.
        assert!(
            guard
                .check(&request("http://evil.example/mcp", Some("localhost")))
                .is_err()
        );
        assert!(
            guard
                .check(&request("http://localhost:1@rebound.example/mcp", None))
                .is_err(),
            "userinfo is not the host"
        );
        // Origin form: `Host` decides, and a request with neither is refused.
        assert!(guard.check(&request("/mcp", Some("localhost:6781"))).is_ok());
        assert!(guard.check(&request("/mcp", Some("evil.example"))).is_err());
        assert!(guard.check(&request("/mcp", None)).is_err());
    }
}
