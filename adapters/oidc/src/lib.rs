//! Sign-in with an external OpenID Connect provider, svc being its (confidential) client, over
//! the `openidconnect` crate: discovery, the authorization code flow with PKCE S256, `state` and
//! `nonce`, and the ID token checked for issuer, audience, signature, expiry and nonce.
//!
//! The provider's discovery document (with its keys) is fetched on first use and again after
//! [`METADATA_TTL`], or at once when an ID token names a key the cached set lacks (rotation).

mod provider;

pub use provider::{METADATA_TTL, OidcProvider, OidcProviderSettings};
