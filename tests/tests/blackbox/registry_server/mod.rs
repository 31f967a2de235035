//! The artifact registry over real HTTP (docs/registry.md), on SQLite, PostgreSQL and MariaDB: publish a
//! gadget and a blueprint, read them back, search by each filter, fetch bundles by hash, and
//! every refusal with its exact code: credentials, versions, bundles, keys, the conformance gate,
//! republishing and yanking; and `svc registry serve` as a process.

mod conformance;
mod credentials;
mod publish;
mod quotas;
mod search;
mod serve;
mod signatures;
mod yank;
