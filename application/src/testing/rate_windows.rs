//! [`InMemorySharedWindows`]: the shared windows' rule in memory, per (quota, key): a fixed
//! window opened by its first admitted request, refusals uncounted, a give-back uncounting one
//! request of the window it was counted in.

use std::collections::HashMap;
use std::sync::Mutex;

use chrono::{DateTime, TimeDelta, Utc};

use super::lock;
use crate::ports::RepositoryError;
use crate::ports::rate_windows::SharedWindows;

/// An open window: when it opened and how many it admitted.
type OpenWindow = (DateTime<Utc>, u32);

#[derive(Default)]
pub struct InMemorySharedWindows(Mutex<HashMap<(String, String), OpenWindow>>);

impl InMemorySharedWindows {
    /// How many requests `key`'s current window of `quota` has admitted.
    pub fn admitted(&self, quota: &str, key: &str) -> u32 {
        lock(&self.0).get(&(quota.into(), key.into())).map_or(0, |w| w.1)
    }
}

#[async_trait::async_trait]
impl SharedWindows for InMemorySharedWindows {
    async fn admit(
        &self,
        quota: &str,
        key: &str,
        limit: u32,
        window: TimeDelta,
        now: DateTime<Utc>,
    ) -> Result<Option<TimeDelta>, RepositoryError> {
        let mut windows = lock(&self.0);
        let entry = windows.entry((quota.into(), key.into())).or_insert((now, 0));
        if now >= entry.0 + window {
            *entry = (now, 0);
        }
        if entry.1 >= limit {
            return Ok(Some(entry.0 + window - now));
        }
        entry.1 += 1;
        Ok(None)
    }

    async fn give_back(
        &self,
        quota: &str,
        key: &str,
        window: TimeDelta,
        admitted_at: DateTime<Utc>,
    ) -> Result<(), RepositoryError> {
        if let Some(entry) = lock(&self.0).get_mut(&(quota.into(), key.into()))
            && entry.0 <= admitted_at
            && admitted_at < entry.0 + window
        {
            entry.1 = entry.1.saturating_sub(1);
        }
        Ok(())
    }
}
