//! A generating render's hold on its handshake (a cache hit needs none: it consumes the
//! handshake in its session's write). Consuming the handshake first makes two generations for
//! one handshake impossible. If the render then ends before it wrote anything durable (the client
//! sent `notifications/cancelled` during the generation and the render future was dropped), the
//! claim gives the handshake back so the agent can render it again instead of negotiating anew.
//! The render commits the claim just before its first durable write (the blueprint, or the
//! session): from then on the handshake stays used, so a retry can never write a second
//! blueprint under the same id or a second session for the handshake.

use std::sync::Arc;

use chrono::{DateTime, Utc};

use crate::ports::agent::HandshakeRepository;

pub(super) struct HandshakeClaim {
    handshakes: Arc<dyn HandshakeRepository>,
    handshake_id: String,
    committed: bool,
}

impl HandshakeClaim {
    /// Consumes the handshake; `None` when another render already did.
    pub(super) async fn take(
        handshakes: &Arc<dyn HandshakeRepository>,
        handshake_id: &str,
        at: DateTime<Utc>,
    ) -> Result<Option<Self>, crate::ports::RepositoryError> {
        if !handshakes.consume(handshake_id, at).await? {
            return Ok(None);
        }
        Ok(Some(Self {
            handshakes: handshakes.clone(),
            handshake_id: handshake_id.to_owned(),
            committed: false,
        }))
    }

    /// The render is about to write its outcome: the handshake stays consumed.
    pub(super) fn commit(&mut self) {
        self.committed = true;
    }
}

impl Drop for HandshakeClaim {
    fn drop(&mut self) {
        if self.committed {
            return;
        }
        // Drop cannot wait: the release runs on its own. A release lost to a crash leaves the
        // handshake consumed: the agent then negotiates a new one.
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        let (handshakes, id) = (self.handshakes.clone(), std::mem::take(&mut self.handshake_id));
        runtime.spawn(async move {
            if let Err(error) = handshakes.release(&id).await {
                tracing::warn!(handshake_id = %id, ?error, "an unfinished render could not give its handshake back");
            }
        });
    }
}
