//! The address a request is counted against by the per-address rate limits (OAuth
//! registrations and consent, public-demo generations).

use std::net::IpAddr;

use poem::Request;

/// The peer address, or with `trust_proxy` the last `X-Forwarded-For` entry (the one the proxy
/// itself wrote; earlier entries are client-supplied). A request without either (not over TCP)
/// counts as `0.0.0.0`.
pub(crate) fn client_ip(req: &Request, trust_proxy: bool) -> IpAddr {
    let forwarded = trust_proxy
        .then(|| req.header("x-forwarded-for"))
        .flatten()
        .and_then(|value| value.rsplit(',').next())
        .and_then(|last| parse_address(last.trim()));
    forwarded
        .or_else(|| req.remote_addr().as_socket_addr().map(|a| a.ip()))
        .unwrap_or(IpAddr::from([0, 0, 0, 0]))
}

/// `203.0.113.9`, `2001:db8::1`, or either with a port (`[2001:db8::1]:443`).
fn parse_address(value: &str) -> Option<IpAddr> {
    value
        .parse::<IpAddr>()
        .ok()
        .or_else(|| value.parse::<std::net::SocketAddr>().ok().map(|a| a.ip()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn forwarded_addresses_count_only_behind_a_trusted_proxy() {
        let req = Request::builder()
            .header("x-forwarded-for", "198.51.100.1, 203.0.113.9")
            .finish();
        assert_eq!(client_ip(&req, true), IpAddr::from([203, 0, 113, 9]));
        assert_ne!(client_ip(&req, false), IpAddr::from([203, 0, 113, 9]));
        let with_port = Request::builder()
            .header("x-forwarded-for", "[2001:db8::1]:443")
            .finish();
        assert_eq!(client_ip(&with_port, true), "2001:db8::1".parse::<IpAddr>().unwrap());
    }
}
