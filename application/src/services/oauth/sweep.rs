//! The sweep of authorization codes. Consent mints the key before the client redeems its code,
//! so a code that expires unredeemed (the host crashed, the person closed the tab) would leave an
//! active key that no client holds, listed among the person's keys for ever. The sweep revokes
//! those keys, then deletes codes long past their expiry.
//!
//! It then deletes the registered clients nobody uses: registration is open (10 per 10 minutes
//! per address, for ever), so without it the table would grow without bound. A client is kept
//! while anything refers to it (an authorization code in flight or kept against replays, a key
//! it was delivered that is still active) and for [`UNUSED_CLIENTS_KEPT`] after it registered
//! or last completed an authorization. RFC 7591 lets a server expire a registration; a host that
//! comes back with a deleted `client_id` is told it is unknown and registers again.

use chrono::TimeDelta;

use super::OAuthService;
use crate::ports::RepositoryError;

/// How long a redeemed or settled code is kept after its expiry: a replay within it still
/// revokes the key the code carried (RFC 6749 section 4.1.2); after it, a replay is an unknown code.
pub const SETTLED_CODES_KEPT: TimeDelta = TimeDelta::days(1);

/// How long a registered client nothing refers to is kept after it registered or last completed
/// an authorization: long enough for a person to come back to a half-finished connection.
pub const UNUSED_CLIENTS_KEPT: TimeDelta = TimeDelta::days(30);

/// Codes settled per round, so one sweep's statements stay short whatever piled up.
const SETTLED_PER_ROUND: u64 = 500;

/// What one sweep did.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct CodeSweep {
    /// Keys revoked because their code expired unredeemed.
    pub revoked: usize,
    /// Codes deleted, long past their expiry.
    pub forgotten: u64,
    /// Registered clients deleted, unused for [`UNUSED_CLIENTS_KEPT`].
    pub clients_forgotten: u64,
}

impl OAuthService {
    /// Revokes the key of every code that expired unredeemed, then deletes the codes that expired
    /// more than [`SETTLED_CODES_KEPT`] ago, then the clients unused for [`UNUSED_CLIENTS_KEPT`].
    /// Safe on every replica at once.
    pub async fn sweep_codes(&self) -> Result<CodeSweep, RepositoryError> {
        let mut sweep = CodeSweep::default();
        loop {
            let now = self.ports.clock.now();
            let settled = self.ports.codes.settle_unredeemed(now, SETTLED_PER_ROUND).await?;
            for grant in &settled {
                self.revoke_quietly(grant).await;
            }
            sweep.revoked += settled.len();
            if (settled.len() as u64) < SETTLED_PER_ROUND {
                break;
            }
        }
        let before = self.ports.clock.now() - SETTLED_CODES_KEPT;
        sweep.forgotten = self.ports.codes.forget_expired(before).await?;
        let unused_since = self.ports.clock.now() - UNUSED_CLIENTS_KEPT;
        sweep.clients_forgotten = self.ports.clients.forget_unused(unused_since).await?;
        Ok(sweep)
    }

    /// How often the sweep should run: a stray key outlives its code by at most this.
    pub fn code_sweep_interval(&self) -> std::time::Duration {
        let lifetime = self.code_lifetime.to_std().unwrap_or_default();
        lifetime.clamp(std::time::Duration::from_secs(1), std::time::Duration::from_secs(300))
    }
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, Utc};

    use super::*;
    use crate::ports::Clock;
    use crate::ports::oauth::OAuthClientRepository;
    use crate::services::oauth::test_flow::{REDIRECT, VERIFIER, approved_code};
    use crate::services::oauth::{RegisterClient, TokenRequest};
    use crate::services::operator::RevokeConnectorKey;
    use crate::testing::OAuthFakes;

    /// A client registered and connected by `ada` with a key of hers expiring at `expires_at`
    /// (consent, then the token request): answers the client's id and the id of the key it was
    /// delivered (which lives no longer than the one typed).
    async fn connected_client(
        fakes: &OAuthFakes,
        service: &OAuthService,
        expires_at: Option<DateTime<Utc>>,
    ) -> (String, String) {
        let (client_id, code) = approved_code(fakes, service, expires_at).await;
        let token = service
            .exchange(&TokenRequest {
                grant_type: Some("authorization_code".into()),
                code: Some(code),
                redirect_uri: Some(REDIRECT.into()),
                client_id: Some(client_id.clone()),
                code_verifier: Some(VERIFIER.into()),
                resource: None,
            })
            .await
            .unwrap();
        let delivered = fakes
            .operator
            .connector_key_service()
            .authenticate(token.expose())
            .await
            .unwrap()
            .expect("the delivered key authenticates");
        (client_id, delivered.id)
    }

    /// Moves the clock `by` and sweeps: answers how many clients the sweep deleted.
    async fn sweep_after(fakes: &OAuthFakes, service: &OAuthService, by: TimeDelta) -> u64 {
        fakes.operator.clock.advance(by);
        service.sweep_codes().await.unwrap().clients_forgotten
    }

    #[tokio::test]
    async fn a_connected_client_is_kept_while_its_key_is_active_and_deleted_once_it_is_revoked() {
        let fakes = OAuthFakes::default();
        let service = fakes.service();
        let (client_id, key_id) = connected_client(&fakes, &service, None).await;

        // Its code is long gone and it has not authorized for the kept time: its key keeps it.
        assert_eq!(sweep_after(&fakes, &service, UNUSED_CLIENTS_KEPT * 2).await, 0);
        assert!(
            fakes.store.get(&client_id).await.unwrap().is_some(),
            "its key is active"
        );

        // The person revokes the key in the key list: the delivery's record stays, and no longer
        // keeps the client.
        fakes
            .operator
            .connector_key_service()
            .revoke(RevokeConnectorKey {
                caller_user_id: "ada".into(),
                caller_locked_app: None,
                key_id,
            })
            .await
            .unwrap();
        assert_eq!(sweep_after(&fakes, &service, TimeDelta::minutes(1)).await, 1);
        assert!(
            fakes.store.get(&client_id).await.unwrap().is_none(),
            "deleted: a host that comes back with its id registers again"
        );
    }

    #[tokio::test]
    async fn a_delivered_key_that_expired_before_the_kept_time_began_no_longer_keeps_its_client() {
        let fakes = OAuthFakes::default();
        let service = fakes.service();
        let expiry = fakes.operator.clock.now() + TimeDelta::days(5);
        let (client_id, _) = connected_client(&fakes, &service, Some(expiry)).await;

        // Unused for the kept time, but its key expired only after that time began: kept.
        let first = UNUSED_CLIENTS_KEPT + TimeDelta::days(1);
        assert_eq!(sweep_after(&fakes, &service, first).await, 0);
        assert!(fakes.store.get(&client_id).await.unwrap().is_some());

        // Later the kept time begins after the expiry: nothing keeps the client.
        assert_eq!(sweep_after(&fakes, &service, TimeDelta::days(5)).await, 1);
        assert!(fakes.store.get(&client_id).await.unwrap().is_none());
    }

    #[tokio::test]
    async fn a_registered_client_never_used_is_deleted_once_it_has_been_unused_for_the_kept_time() {
        let fakes = OAuthFakes::default();
        let service = fakes.service();
        let client = service
            .register(RegisterClient {
                redirect_uris: vec!["http://127.0.0.1:47613/callback".into()],
                client_name: None,
            })
            .await
            .unwrap();
        let clock = &fakes.operator.clock;

        clock.advance(UNUSED_CLIENTS_KEPT - TimeDelta::hours(1));
        assert_eq!(service.sweep_codes().await.unwrap().clients_forgotten, 0);
        assert!(fakes.store.get(&client.client_id).await.unwrap().is_some(), "kept");

        clock.advance(TimeDelta::hours(2));
        assert_eq!(service.sweep_codes().await.unwrap().clients_forgotten, 1);
        assert!(
            fakes.store.get(&client.client_id).await.unwrap().is_none(),
            "deleted: a host that comes back with its id registers again"
        );
    }
}
