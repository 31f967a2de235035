//! Storage and policy of the OAuth surface (Document 2, "Configuration of the OAuth surface":
//! two collections, registered clients and authorization codes, with put, get and consume; and
//! the optional resource validator). The SQL adapter shares them between replicas.

use chrono::{DateTime, Utc};
use svc_domain::oauth::{AuthorizationCode, ClientIdUrl, Issuer, KeyGrant, OAuthClient, ResourceIndicator};

use super::RepositoryError;

#[async_trait::async_trait]
pub trait OAuthClientRepository: Send + Sync {
    /// A duplicate client id is a `Conflict`.
    async fn insert(&self, client: &OAuthClient) -> Result<(), RepositoryError>;
    async fn get(&self, client_id: &str) -> Result<Option<OAuthClient>, RepositoryError>;
    /// Records the resource of the client's latest completed authorization (`lastResource`) and
    /// when it completed (`at`).
    async fn record_last_resource(
        &self,
        client_id: &str,
        resource: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), RepositoryError>;
    /// Deletes the registered clients nothing refers to any more: no authorization code (in flight
    /// or kept against replays) and no delivered key still usable (not revoked, and not expired
    /// before `unused_since`; a revocation leaves the delivery's row), and neither registered nor
    /// authorized since `unused_since`. Answers how many it deleted.
    async fn forget_unused(&self, unused_since: DateTime<Utc>) -> Result<u64, RepositoryError>;
}

/// One connection of a client for an owner: the keys delivered to it replace each other. A
/// connection to one app (`/apps/<appId>`) and a universal one are different connections, as
/// are two apps: a host that reuses one `client_id` for several connectors keeps each.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ClientConnection<'a> {
    pub client_id: &'a str,
    pub owner_id: &'a str,
    /// The app of a per-app resource; `None` for a universal one.
    pub app_id: Option<&'a str>,
}

/// A key a redeemed code delivered to a connection.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientKeyDelivery {
    pub key_id: String,
    /// Assigned by the database in the order deliveries were recorded: the same order on every
    /// replica, whatever their clocks say.
    pub seq: i64,
}

/// The keys redeemed codes delivered to each client for each owner, shared by replicas, so a
/// client that connects again has its earlier key revoked (Document 2: one key-list row per
/// connected client).
#[async_trait::async_trait]
pub trait OAuthClientKeyRepository: Send + Sync {
    /// Records that `key_id` was delivered to `connection` at `at`; answers the delivery's `seq`.
    async fn record(
        &self,
        connection: ClientConnection<'_>,
        key_id: &str,
        at: DateTime<Utc>,
    ) -> Result<i64, RepositoryError>;
    /// The deliveries to `connection` not forgotten yet, in no particular order.
    async fn delivered(&self, connection: ClientConnection<'_>) -> Result<Vec<ClientKeyDelivery>, RepositoryError>;
    /// Forgets a delivery once its key is revoked (nothing to do when there is none).
    async fn forget(&self, key_id: &str) -> Result<(), RepositoryError>;
}

/// What consuming a code found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CodeConsumption {
    /// No code has this hash.
    Unknown,
    /// This call consumed the code (as it was before); no other call ever gets it.
    Consumed(AuthorizationCode),
    /// The code had been consumed before: a replay.
    Replayed(AuthorizationCode),
}

#[async_trait::async_trait]
pub trait AuthorizationCodeRepository: Send + Sync {
    async fn insert(&self, code: &AuthorizationCode) -> Result<(), RepositoryError>;
    /// Atomic `AuthorizationCode::consume` of the code whose hash is `code_hash`: of racing
    /// callers (on any replica) exactly one gets `Consumed`.
    async fn consume(&self, code_hash: &str, now: DateTime<Utc>) -> Result<CodeConsumption, RepositoryError>;
    /// Settles at most `limit` codes that expired unredeemed by `now`: marks each consumed (of
    /// racing sweeps on any replica exactly one settles a code, as with `consume`) and answers
    /// the keys they carried, which no client can receive any more.
    async fn settle_unredeemed(&self, now: DateTime<Utc>, limit: u64) -> Result<Vec<KeyGrant>, RepositoryError>;
    /// Deletes the codes that expired before `before` and were redeemed or settled (never one
    /// still unsettled: its key is revoked first); answers how many.
    async fn forget_expired(&self, before: DateTime<Utc>) -> Result<u64, RepositoryError>;
}

/// Document 2's `validateResource(issuer, resource)`: a deployment's say on which well-formed
/// resources exist. Called at authorize before the consent step and for app-scoped metadata.
#[async_trait::async_trait]
pub trait ResourceValidator: Send + Sync {
    async fn accepts(&self, issuer: &Issuer, resource: &ResourceIndicator) -> Result<bool, RepositoryError>;
}

/// Why a client's metadata document could not be read. The messages finish the sentence "the
/// client's metadata document could not be fetched: ..." shown to the person and the client.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientDocumentFetchError {
    #[error("its host is a private, loopback or link-local address")]
    PrivateTarget,
    #[error("it answered with a redirect, and redirects are not followed")]
    Redirected,
    #[error("it answered HTTP {0}")]
    Status(u16),
    #[error("it is larger than {0} bytes")]
    TooLarge(usize),
    #[error("it did not answer within {0} seconds")]
    TimedOut(u64),
    #[error("its host could not be reached")]
    Unreachable,
}

/// Reads a Client ID Metadata Document over the network, within the limits a server fetching
/// URLs chosen by strangers needs: bounded size and time, no redirects, no private targets.
#[async_trait::async_trait]
pub trait ClientDocumentFetcher: Send + Sync {
    async fn fetch(&self, url: &ClientIdUrl) -> Result<Vec<u8>, ClientDocumentFetchError>;
}
