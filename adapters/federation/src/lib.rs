//! `JwtFederatedVerifier`: checks a federated bearer against its issuer's published keys.
//!
//! Only asymmetric algorithms are accepted (RS256, ES256, EdDSA), and only the one the key's own
//! type allows, so `alg: none` and an HS256 token "signed" with a public key never verify. The
//! audience must be the app id and the issuer the app's issuer; `exp` is required, `exp` and
//! `nbf` are checked with a small leeway. Keys come from the explicit JWKS URL or from the
//! issuer's OpenID Connect discovery document, are cached, and are fetched again when a token
//! names an unknown `kid` (key rotation), at most once per refresh floor per issuer.

mod keys;
mod verify;

pub use keys::{JwksCache, KeyFetchSettings};
pub use verify::JwtFederatedVerifier;
