//! The requests the server holds open on purpose (a `svc_consume` long-poll, the live channel's
//! polling GET) as the server's shutdown sees them: once the drain begins, each answers at once
//! with what it has (nothing new), so its client polls again, on another replica behind a proxy,
//! instead of having its answer cut off when the grace period ends.

use tokio_util::sync::{CancellationToken, WaitForCancellationFutureOwned};

#[derive(Clone, Default)]
pub struct HeldRequests(CancellationToken);

impl HeldRequests {
    /// Called as the drain begins: every held request answers now, and any later one at once.
    pub fn release_all(&self) {
        self.0.cancel();
    }

    /// Resolves once the drain has begun.
    pub(crate) fn released(&self) -> WaitForCancellationFutureOwned {
        self.0.clone().cancelled_owned()
    }
}
