//! Sign-in with an external OpenID Connect provider, svc being its (confidential) client, over
//! the `openidconnect` crate: discovery, the authorization code flow with PKCE S256, `state` and
//! `nonce`, and the ID token checked for issuer, audience, signature, expiry and nonce.
//!
//! The provider's discovery document (with its keys) is fetched on first use and again after
//! [`METADATA_TTL`], or at once when an ID token names a key the cached set lacks (rotation).
//! Every answer of the provider is read up to a size bound and refused unless it is JSON without
//! serde_json's raw-value marker, before the crate parses it (`provider_http`).

mod provider;
mod provider_answer;
mod provider_http;

pub use provider::{METADATA_TTL, OidcProvider, OidcProviderSettings};
