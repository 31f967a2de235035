//! What a password reset ends besides the old password.
//!
//! Every console session of the account: whoever held the old password is signed out of the
//! browser, and the person who reset signs in again with the new one.
//!
//! Every connector key of the account too, when its address had never been verified. Under open
//! sign-up anyone may create an account for a stranger's address and connect hosts with it
//! before the address's owner ever sees it; the owner's reset is the first proof of the address,
//! and keys minted before it were minted by whoever chose the password. A verified account keeps
//! its keys: a person who forgot their password keeps their connected hosts (and can revoke any
//! key from the console or `/ops`).

use std::sync::Arc;

use super::AccountServiceError;
use crate::ports::RepositoryError;
use crate::ports::console_sessions::ConsoleSessionStore;
use crate::services::operator::{ConnectorKeyService, ConnectorKeyServiceError};

#[derive(Clone)]
pub struct ResetSignOut {
    pub keys: ConnectorKeyService,
    pub console_sessions: Arc<dyn ConsoleSessionStore>,
}

impl ResetSignOut {
    /// Signs `user_id` out after its password was reset; `was_verified`: its address was
    /// verified before the reset.
    pub(super) async fn after_reset(&self, user_id: &str, was_verified: bool) -> Result<(), AccountServiceError> {
        self.console_sessions.delete_of_principal(user_id).await?;
        if !was_verified {
            let revoked = self.keys.revoke_all_of(user_id).await.map_err(|error| match error {
                ConnectorKeyServiceError::Storage(storage) => storage,
                // The owner revoking its own keys: no rule can refuse it.
                other => RepositoryError::Unavailable(anyhow::Error::new(other)),
            })?;
            if revoked > 0 {
                tracing::info!(
                    user_id,
                    revoked,
                    "revoked the keys of an account whose address was first proven by a password reset"
                );
            }
        }
        Ok(())
    }
}
