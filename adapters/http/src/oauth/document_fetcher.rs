//! `ReqwestClientDocumentFetcher`: reads Client ID Metadata Documents. Anyone can make the server
//! fetch a URL by naming it as `client_id`, so the fetch is narrow: 5 KB, 5 seconds, no
//! redirects, no proxy, and (outside dev mode) no private, loopback or link-local targets, checked
//! on the addresses the connection actually uses (a resolver that drops them), so a name that
//! resolves to an internal address cannot reach it.

use std::error::Error;
use std::net::{IpAddr, SocketAddr};
use std::sync::Arc;
use std::time::Duration;

use async_trait::async_trait;
use svc_application::ports::oauth::{ClientDocumentFetchError, ClientDocumentFetcher};
use svc_domain::oauth::{CLIENT_DOCUMENT_MAX_BYTES, ClientIdUrl};

/// The whole fetch, connection to last byte.
pub const CLIENT_DOCUMENT_FETCH_SECONDS: u64 = 5;

pub struct ReqwestClientDocumentFetcher {
    client: reqwest::Client,
    allow_private_targets: bool,
}

impl ReqwestClientDocumentFetcher {
    /// `allow_private_targets`: dev mode, where a client's document is served on loopback.
    pub fn new(allow_private_targets: bool) -> Self {
        let builder = reqwest::Client::builder()
            .redirect(reqwest::redirect::Policy::none())
            .no_proxy()
            .timeout(Duration::from_secs(CLIENT_DOCUMENT_FETCH_SECONDS))
            .user_agent(concat!("svc/", env!("CARGO_PKG_VERSION")));
        let builder = if allow_private_targets {
            builder
        } else {
            builder.dns_resolver(Arc::new(PublicAddressesOnly))
        };
        Self {
            client: builder.build().unwrap_or_default(),
            allow_private_targets,
        }
    }
}

#[async_trait]
impl ClientDocumentFetcher for ReqwestClientDocumentFetcher {
    async fn fetch(&self, url: &ClientIdUrl) -> Result<Vec<u8>, ClientDocumentFetchError> {
        // An address written in the URL is not resolved, so the resolver never sees it.
        if !self.allow_private_targets
            && let Ok(parsed) = url::Url::parse(url.as_str())
            && let Some(ip) = literal_address(&parsed)
            && !is_public(ip)
        {
            return Err(ClientDocumentFetchError::PrivateTarget);
        }
        let mut response = self
            .client
            .get(url.as_str())
            .header("accept", "application/json")
            .send()
            .await
            .map_err(fetch_error)?;
        let status = response.status();
        if status.is_redirection() {
            return Err(ClientDocumentFetchError::Redirected);
        }
        if !status.is_success() {
            return Err(ClientDocumentFetchError::Status(status.as_u16()));
        }
        let too_large = ClientDocumentFetchError::TooLarge(CLIENT_DOCUMENT_MAX_BYTES);
        if response
            .content_length()
            .is_some_and(|n| n > CLIENT_DOCUMENT_MAX_BYTES as u64)
        {
            return Err(too_large);
        }
        let mut body = Vec::new();
        while let Some(chunk) = response.chunk().await.map_err(fetch_error)? {
            body.extend_from_slice(&chunk);
            if body.len() > CLIENT_DOCUMENT_MAX_BYTES {
                return Err(too_large);
            }
        }
        Ok(body)
    }
}

fn fetch_error(error: reqwest::Error) -> ClientDocumentFetchError {
    if error.is_timeout() {
        return ClientDocumentFetchError::TimedOut(CLIENT_DOCUMENT_FETCH_SECONDS);
    }
    let mut source: Option<&(dyn Error + 'static)> = Some(&error);
    while let Some(cause) = source {
        if cause.is::<NoPublicAddress>() {
            return ClientDocumentFetchError::PrivateTarget;
        }
        source = cause.source();
    }
    ClientDocumentFetchError::Unreachable
}

fn literal_address(url: &url::Url) -> Option<IpAddr> {
    match url.host()? {
        url::Host::Ipv4(ip) => Some(IpAddr::V4(ip)),
        url::Host::Ipv6(ip) => Some(IpAddr::V6(ip)),
        url::Host::Domain(_) => None,
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the host resolves to no public address")]
struct NoPublicAddress;

/// Resolves names to their public addresses only; a name with none fails to connect.
struct PublicAddressesOnly;

impl reqwest::dns::Resolve for PublicAddressesOnly {
    fn resolve(&self, name: reqwest::dns::Name) -> reqwest::dns::Resolving {
        Box::pin(async move {
            let resolved = tokio::net::lookup_host((name.as_str(), 0)).await?;
            let public: Vec<SocketAddr> = resolved.filter(|address| is_public(address.ip())).collect();
            if public.is_empty() {
                return Err(Box::new(NoPublicAddress) as Box<dyn Error + Send + Sync>);
            }
            Ok(Box::new(public.into_iter()) as reqwest::dns::Addrs)
        })
    }
}

/// Whether `ip` is a globally routed address: not private (RFC 1918, RFC 4193), loopback,
/// link-local, shared (RFC 6598), documentation, benchmarking, multicast, reserved or
/// unspecified. IPv4-mapped and NAT64 IPv6 addresses are judged by the IPv4 address they carry.
/// (`IpAddr::is_global` says the same but is not stable.)
fn is_public(ip: IpAddr) -> bool {
    match ip {
        IpAddr::V4(v4) => {
            let [a, b, c, _] = v4.octets();
            !(v4.is_private()
                || v4.is_loopback()
                || v4.is_link_local()
                || v4.is_unspecified()
                || v4.is_broadcast()
                || v4.is_documentation()
                || v4.is_multicast()
                || a == 0
                || a >= 240
                || (a == 100 && (b & 0xc0) == 64)
                || (a == 192 && b == 0 && c == 0)
                || (a == 198 && (b & 0xfe) == 18))
        }
        IpAddr::V6(v6) => {
            if let Some(v4) = v6.to_ipv4_mapped() {
                return is_public(IpAddr::V4(v4));
            }
            let s = v6.segments();
            if s[0] == 0x64 && s[1] == 0xff9b {
                let [.., high, low] = s;
                let embedded = std::net::Ipv4Addr::from((u32::from(high) << 16) | u32::from(low));
                return is_public(IpAddr::V4(embedded));
            }
            !(v6.is_loopback()
                || v6.is_unspecified()
                || v6.is_multicast()
                || (s[0] & 0xfe00) == 0xfc00
                || (s[0] & 0xffc0) == 0xfe80
                || (s[0] == 0x2001 && s[1] == 0x0db8))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn public_addresses() {
        for public in [
            "93.184.215.14",
            "1.1.1.1",
            "2606:4700:4700::1111",
            "::ffff:8.8.8.8",
            "64:ff9b::808:808",
        ] {
            assert!(is_public(public.parse().unwrap()), "{public}");
        }
        for private in [
            "127.0.0.1",
            "10.1.2.3",
            "172.16.0.1",
            "192.168.1.1",
            "169.254.169.254",
            "100.64.0.1",
            "0.0.0.0",
            "255.255.255.255",
            "192.0.0.8",
            "198.18.0.1",
            "203.0.113.5",
            "224.0.0.1",
            "240.0.0.1",
            "::1",
            "::",
            "fd00::1",
            "fe80::1",
            "ff02::1",
            "2001:db8::1",
            "::ffff:127.0.0.1",
            "::ffff:169.254.169.254",
            "64:ff9b::a00:1",
        ] {
            assert!(!is_public(private.parse().unwrap()), "{private}");
        }
    }
}
