//! The registry commands of the `svc` binary as a user meets them: `svc verify` over every Sigstore
//! fixture (exit 0 verified, 1 with the reason), `svc author-key generate`, and login, search,
//! author-key register, publish and install against a loopback fake of the registry's routes
//! (docs/registry.md); the end-to-end run against the real registry server lives with it.

mod credentials;
mod install;
mod publish;
mod search;
mod support;
mod verify;
