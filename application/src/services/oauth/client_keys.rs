//! One key per connected client (Document 2: "Each connected client appears as one row in the
//! key list"; "re-authentication is one OAuth round trip"). Every consent mints a fresh key, so
//! when a client's code is redeemed, the keys delivered before to the same connection (client,
//! owner and app, `ClientConnection`) are revoked.
//!
//! Why at redemption and not at consent: until the token endpoint answers, the client still
//! holds only its earlier key; a consent whose code is never redeemed (a closed tab, a crashed
//! host) must not disconnect it. The revocation is the key list's own (`ConnectorKeyService::
//! revoke`), so every replica refuses the earlier key at once. A redemption revokes only the
//! deliveries recorded before its own, in the database's order: never the key it is handing
//! out, and two racing redemptions agree on which key stays (the later one's).

use svc_domain::oauth::{KeyGrant, ResourceIndicator};

use super::OAuthService;
use crate::ports::RepositoryError;
use crate::ports::oauth::{ClientConnection, ClientKeyDelivery};

impl OAuthService {
    /// Records that `grant`'s key now reaches `client_id` for `resource` and revokes the keys
    /// it supersedes. A failure is logged, not answered: the client already has a working token.
    pub(super) async fn supersede_earlier_keys(&self, client_id: &str, resource: Option<&str>, grant: &KeyGrant) {
        if let Err(error) = self.try_supersede_earlier_keys(client_id, resource, grant).await {
            tracing::warn!(key_id = %grant.key_id, error = %error, "could not revoke a client's earlier OAuth keys");
        }
    }

    async fn try_supersede_earlier_keys(
        &self,
        client_id: &str,
        resource: Option<&str>,
        grant: &KeyGrant,
    ) -> Result<(), RepositoryError> {
        // The code's resource was classified at authorize; one that no longer classifies is
        // left alone rather than taken for another connection.
        let Ok(indicator) = ResourceIndicator::classify(&self.issuer, resource) else {
            return Ok(());
        };
        let connection = ClientConnection {
            client_id,
            owner_id: &grant.owner_id,
            app_id: indicator.app_id(),
        };
        let client_keys = &self.ports.client_keys;
        let own = client_keys
            .record(connection, &grant.key_id, self.ports.clock.now())
            .await?;
        let delivered = client_keys.delivered(connection).await?;
        for key_id in superseded(&delivered, own) {
            let earlier = KeyGrant {
                key_id: key_id.to_owned(),
                owner_id: grant.owner_id.clone(),
            };
            // Kept when the revocation failed: the next redemption tries again.
            if self.revoke_quietly(&earlier).await {
                client_keys.forget(key_id).await?;
            }
        }
        Ok(())
    }
}

/// The deliveries recorded before the one numbered `own`.
fn superseded(delivered: &[ClientKeyDelivery], own: i64) -> Vec<&str> {
    delivered
        .iter()
        .filter(|delivery| delivery.seq < own)
        .map(|delivery| delivery.key_id.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn delivery(key_id: &str, seq: i64) -> ClientKeyDelivery {
        ClientKeyDelivery {
            key_id: key_id.to_owned(),
            seq,
        }
    }

    #[test]
    fn only_deliveries_recorded_before_ones_own_are_superseded() {
        let rows: [(Vec<ClientKeyDelivery>, i64, Vec<&str>); 4] = [
            (vec![delivery("own", 1)], 1, vec![]),
            (
                vec![delivery("b", 2), delivery("a", 1), delivery("own", 3)],
                3,
                vec!["b", "a"],
            ),
            // A racing redemption recorded after this one: it is the later, so it stays, and
            // this one's key is left for it to revoke.
            (vec![delivery("own", 4), delivery("later", 5)], 4, vec![]),
            (
                vec![delivery("a", 1), delivery("own", 4), delivery("later", 5)],
                4,
                vec!["a"],
            ),
        ];
        for (delivered, own, expected) in rows {
            assert_eq!(superseded(&delivered, own), expected, "{delivered:?}");
        }
    }
}
