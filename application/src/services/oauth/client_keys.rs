//! One key per connected client (Document 2: "Each connected client appears as one row in the
//! key list"; "re-authentication is one OAuth round trip"). Every consent mints a fresh key, so
//! when a client's code is redeemed, the keys delivered before to the same client for the same
//! owner are revoked.
//!
//! Why at redemption and not at consent: until the token endpoint answers, the client still
//! holds only its earlier key; a consent whose code is never redeemed (a closed tab, a crashed
//! host) must not disconnect it. The revocation is the key list's own (`ConnectorKeyService::
//! revoke`), so every replica refuses the earlier key at once.

use svc_domain::oauth::KeyGrant;

use super::OAuthService;
use crate::ports::RepositoryError;
use crate::ports::oauth::ClientKeyDelivery;

impl OAuthService {
    /// Records that `grant`'s key now reaches `client_id` and revokes the keys it supersedes.
    /// A failure is logged, not answered: the client already has a working token.
    pub(super) async fn supersede_earlier_keys(&self, client_id: &str, grant: &KeyGrant) {
        if let Err(error) = self.try_supersede_earlier_keys(client_id, grant).await {
            tracing::warn!(key_id = %grant.key_id, error = %error, "could not revoke a client's earlier OAuth keys");
        }
    }

    async fn try_supersede_earlier_keys(&self, client_id: &str, grant: &KeyGrant) -> Result<(), RepositoryError> {
        let client_keys = &self.ports.client_keys;
        client_keys.record(client_id, grant, self.ports.clock.now()).await?;
        let delivered = client_keys.delivered(client_id, &grant.owner_id).await?;
        for key_id in superseded(&delivered) {
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

/// Every delivery but the newest (by time, then key id). Two redemptions racing on replicas
/// both see both deliveries once they have recorded theirs, and agree on which key stays.
fn superseded(delivered: &[ClientKeyDelivery]) -> Vec<&str> {
    let newest = delivered
        .iter()
        .max_by(|a, b| (a.delivered_at, &a.key_id).cmp(&(b.delivered_at, &b.key_id)));
    delivered
        .iter()
        .filter(|delivery| Some(*delivery) != newest)
        .map(|delivery| delivery.key_id.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use chrono::{DateTime, TimeDelta, Utc};

    use super::*;

    fn delivery(key_id: &str, seconds: i64) -> ClientKeyDelivery {
        ClientKeyDelivery {
            key_id: key_id.to_owned(),
            delivered_at: DateTime::<Utc>::UNIX_EPOCH + TimeDelta::seconds(seconds),
        }
    }

    #[test]
    fn all_but_the_newest_delivery_are_superseded() {
        let rows: [(Vec<ClientKeyDelivery>, Vec<&str>); 4] = [
            (vec![], vec![]),
            (vec![delivery("a", 1)], vec![]),
            (
                vec![delivery("b", 2), delivery("a", 1), delivery("c", 3)],
                vec!["b", "a"],
            ),
            // The same instant: the key id decides, the same way on every replica.
            (vec![delivery("y", 5), delivery("x", 5)], vec!["x"]),
        ];
        for (delivered, expected) in rows {
            assert_eq!(superseded(&delivered), expected, "{delivered:?}");
        }
    }
}
