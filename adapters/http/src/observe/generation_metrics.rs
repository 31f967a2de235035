//! `PrometheusTelemetry`: the agent plane's figures (cache lookups, queue waits, generation
//! outcomes, group commits) counted into the process's registry, and the gauges read at scrape
//! time (queue depth, database pool use).

use std::time::Duration;

use svc_application::ports::telemetry::{DatabasePoolUsage, GenerationTelemetry, WriteTelemetry};
use svc_application::services::agent::QueueDepth;

use super::metrics::METRICS;

/// Outcomes a generation may be labelled with; anything else counts as `other`, so a new failure
/// code can never grow the label set unseen.
const OUTCOMES: &[&str] = &[
    "rendered",
    "PRODUCTION_FAILED",
    "NO_CREDENTIALS",
    "NO_PLATFORM_KEY",
    "VALIDATION_ERROR",
    "GENERATION_QUEUE_OVERLOADED",
];

pub struct PrometheusTelemetry;

impl GenerationTelemetry for PrometheusTelemetry {
    fn cache_lookup(&self, hit: bool) {
        let result = if hit { "hit" } else { "miss" };
        METRICS.cache_lookups.with_label_values(&[result]).inc();
    }

    fn queue_waited(&self, waited: Duration) {
        METRICS.queue_wait.observe(waited.as_secs_f64());
    }

    fn generation_finished(&self, outcome: &'static str, took: Duration) {
        let outcome = if OUTCOMES.contains(&outcome) { outcome } else { "other" };
        METRICS
            .generation_duration
            .with_label_values(&[outcome])
            .observe(took.as_secs_f64());
    }
}

impl WriteTelemetry for PrometheusTelemetry {
    fn batch_committed(&self, alone: usize, listed: usize) {
        METRICS.db_commits.inc();
        for (statement, writes) in [("alone", alone), ("listed", listed)] {
            if writes > 0 {
                METRICS.db_writes.with_label_values(&[statement]).inc_by(writes as u64);
            }
        }
    }
}

/// Sets the gauges that are read rather than counted, just before a scrape is encoded.
pub(super) fn refresh_gauges(queue: QueueDepth, pool: Option<&dyn DatabasePoolUsage>) {
    let gauge = |state: &str, value: usize| {
        METRICS
            .queue_depth
            .with_label_values(&[state])
            .set(i64::try_from(value).unwrap_or(i64::MAX));
    };
    gauge("running", queue.running);
    gauge("waiting", queue.waiting);
    if let Some(pool) = pool {
        let usage = pool.usage();
        let idle = usage.idle.min(usage.open);
        METRICS
            .db_connections
            .with_label_values(&["in_use"])
            .set(i64::from(usage.open - idle));
        METRICS.db_connections.with_label_values(&["idle"]).set(i64::from(idle));
        METRICS.db_max_connections.set(i64::from(usage.max));
        // Counters brought up to the read lane's own counts (only it sees the reads); one scrape
        // at a time, so two at once cannot both add the same difference.
        static MIRRORING: std::sync::Mutex<()> = std::sync::Mutex::new(());
        let _one_at_a_time = MIRRORING.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for (statement, reads) in [("alone", usage.reads_alone), ("shared", usage.reads_shared)] {
            let counter = METRICS.db_reads.with_label_values(&[statement]);
            counter.inc_by(reads.saturating_sub(counter.get()));
        }
    }
}
