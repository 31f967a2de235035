//! The hosted plane (`svc serve --hosted`, docs/hosted.md): the caller's own provider keys,
//! sealed at rest, and credits charged by reservation before a cold generation (stored, so a
//! render whose process died is refunded by a sweep).

mod credit_reservations;
mod generation_account;
mod provider_keys;

pub use credit_reservations::{CreditReservations, INTERRUPTED_REASON, ReservationError, SweepOutcome};
pub use generation_account::{AppPayers, GenerationAccount, GenerationPricing, Reservation, payer_of};
pub use provider_keys::{ProviderKeyService, ProviderKeyServiceError, ProviderKeySummary, Rotation, SetProviderKey};
