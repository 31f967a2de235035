//! Artifact signatures of the registry: who signed a gadget or a blueprint, and over what.
//!
//! - [`payload`]: the bytes a signature covers (sha384 of a gadget bundle, RFC 8785 JSON of a
//!   blueprint manifest) and the `sha384-<base64>` digest both sides compare first.
//! - [`ed25519`]: pinned per-publisher author keys (private artifacts).
//! - [`sigstore`]: keyless Sigstore bundles verified offline against a trusted root (public
//!   artifacts).
//! - [`registry_ports`]: both, behind the registry's verifier ports.

pub mod ed25519;
pub mod payload;
pub mod registry_ports;
pub mod sigstore;
