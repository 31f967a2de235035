//! `[retention]`: how long an expired session (and an expired handshake or invite link) is kept,
//! and the sweep every replica runs that deletes it then and trims what a replay no longer serves
//! (docs/agent-api.md, "Retention").

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Deserialize, Serialize, JsonSchema)]
#[serde(default)]
pub struct RetentionSettings {
    /// Days an expired session (a failed render's too) keeps answering as expired before it is
    /// deleted with its gestures, deliveries and frozen cards; then it answers as a session that
    /// never existed. 0: at its expiry. Handshakes past their 10 minutes, and org invite links
    /// whose invite was accepted, revoked or expired, are kept as long.
    #[schemars(range(max = 36_500))]
    pub expired_session_days: u64,
    /// How often each replica sweeps (and once at start-up).
    #[schemars(range(min = 1, max = 86_400))]
    pub sweep_interval_seconds: u64,
    /// Most rows one delete statement removes; the sweep yields between two.
    #[schemars(range(min = 1, max = 100_000))]
    pub batch_rows: u64,
}

impl Default for RetentionSettings {
    fn default() -> Self {
        Self {
            expired_session_days: 7,
            sweep_interval_seconds: 300,
            batch_rows: 500,
        }
    }
}
