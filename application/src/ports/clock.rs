use chrono::{DateTime, Utc};

/// The only source of "now" for the application; the domain receives it as an argument.
pub trait Clock: Send + Sync {
    fn now(&self) -> DateTime<Utc>;
}

/// The only source of identifiers and secrets, so tests can make them deterministic.
pub trait Ids: Send + Sync {
    /// A UUID string, time-ordered (v7: sessions, handshakes, blueprints, requests), so rows
    /// inserted together sit together in their primary-key index.
    fn uuid(&self) -> String;
    /// A ULID string (orgs, invites, ledger rows: sortable by creation).
    fn ulid(&self) -> String;
    /// `len` characters of base62 drawn from a CSPRNG seeded by the OS (app ids, coupon codes, secrets).
    fn base62(&self, len: usize) -> String;
}
