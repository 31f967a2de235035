//! The hosted plane (`svc serve --hosted`, docs/hosted.md): the caller's own provider keys,
//! sealed at rest, and credits charged by reservation before a cold generation.

mod generation_account;
mod provider_keys;

pub use generation_account::{AppPayers, GenerationAccount, GenerationPricing, Reservation, payer_of};
pub use provider_keys::{ProviderKeyService, ProviderKeyServiceError, ProviderKeySummary, Rotation, SetProviderKey};
