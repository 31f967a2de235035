//! The hosted-only domains of `/ops` (Document 3): provider keys and credits. Wired only by a
//! hosted deployment (`svc serve --hosted`); a self-hosted server lists none of these tools.
//! Every tool acts for the caller's wallet owner: its user id, else its app id.

pub mod get_credit_balance;
pub mod list_credit_transactions;
pub mod list_provider_keys;
pub mod remove_provider_key;
pub mod set_provider_key;

use svc_domain::wallet::Principal;

use super::OpsCaller;

/// The owner of the caller's provider keys and wallet.
fn owner(caller: &OpsCaller) -> Principal {
    Principal::user(caller.identity.clone())
}
