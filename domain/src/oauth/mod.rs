//! OAuth 2.1 for MCP hosts (Document 2): the rules an authorization server must keep, free of I/O.
//!
//! - [`Issuer`]: the one issuer string written into the metadata, `authorization_servers` and `iss`.
//! - [`ClientRegistration`] and [`RedirectUri`]: the open-registration rules (RFC 7591).
//! - [`ClientIdUrl`] and [`client_from_document`]: Client ID Metadata Documents (a URL as `client_id`).
//! - [`CodeChallenge`]: PKCE, `S256` only, verified in constant time (RFC 7636).
//! - [`ResourceIndicator`]: universal or per-app resources (RFC 8707).
//! - [`AuthorizationCode`]: a 5-minute, single-use code bound to its client, redirect URI, PKCE
//!   challenge and resource, carrying the access token sealed with the code itself.

mod client;
mod client_document;
mod code;
mod issuer;
mod pkce;
mod redirect_uri;
mod resource;

pub use client::{
    CLIENT_NAME_MAX_CHARS, ClientName, ClientRegistration, MAX_REDIRECT_URIS, OAuthClient, RegistrationError,
};
pub use client_document::{
    CLIENT_DOCUMENT_MAX_BYTES, ClientDocumentError, ClientIdUrl, ClientIdUrlError, client_from_document,
    is_client_id_url,
};
pub use code::{AuthorizationCode, CODE_LIFETIME_SECONDS, CodeBinding, CodeError, CodeExchange, KeyGrant, hash_code};
pub use issuer::{Issuer, IssuerError};
pub use pkce::{CodeChallenge, PkceError, S256};
pub use redirect_uri::{REDIRECT_URI_MAX_BYTES, RedirectUri, RedirectUriError};
pub use resource::{APP_ID_MAX_CHARS, ResourceIndicator, UnknownResource, resource_matches};

/// `127.0.0.1` (any of 127/8), `[::1]` or `localhost`: hosts whose plain `http` never leaves the machine.
fn is_loopback(url: &url::Url) -> bool {
    match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name.eq_ignore_ascii_case("localhost"),
        None => false,
    }
}
