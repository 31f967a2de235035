//! The process's Prometheus registry. One global: every request and socket of the process
//! counts into it, and `/metrics` encodes it.

use std::sync::LazyLock;

use prometheus::{
    Encoder, Histogram, HistogramOpts, HistogramVec, IntCounter, IntCounterVec, IntGauge, IntGaugeVec, Opts, Registry,
    TextEncoder,
};

pub(crate) struct HttpMetrics {
    registry: Registry,
    /// Requests by route template, method and status.
    pub requests: IntCounterVec,
    /// Latency by route template and JSON-RPC label (tool name, or method; `-` for non-RPC).
    pub latency: HistogramVec,
    /// `svc_render` answers by outcome (`rendered`, `failed`, `refused`) and cache use.
    pub renders: IntCounterVec,
    pub live_sockets: IntGauge,
    pub long_polls: IntGauge,
    /// `svc_consume` calls with a timeout being held open.
    pub consume_waits: IntGauge,
    /// Cold generations by outcome (`rendered` or a failure code), counted and timed.
    pub generation_duration: HistogramVec,
    /// Time a cold generation waited for its queue slot.
    pub queue_wait: Histogram,
    /// Generations `running` and `waiting` at the last scrape.
    pub queue_depth: IntGaugeVec,
    /// Handshake cache lookups by `result` (`hit`, `miss`).
    pub cache_lookups: IntCounterVec,
    /// Database pool connections by `state` (`in_use`, `idle`) at the last scrape.
    pub db_connections: IntGaugeVec,
    pub db_max_connections: IntGauge,
    /// The request paths' single-row reads on PostgreSQL by `statement` (`alone`, `shared`),
    /// brought up to the read lane's counts at each scrape.
    pub db_reads: IntCounterVec,
    /// Commits of SQLite's group-commit writer (one fsync each).
    pub db_commits: IntCounter,
    /// Writes those commits carried, by `statement` (`alone`, `listed`).
    pub db_writes: IntCounterVec,
}

/// Latency buckets from 1 ms (a cached read) to 2 minutes (a slow generation).
const LATENCY_BUCKETS: &[f64] = &[
    0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0, 30.0, 60.0, 120.0,
];

pub(crate) static METRICS: LazyLock<HttpMetrics> = LazyLock::new(|| {
    let registry = Registry::new();
    let requests = IntCounterVec::new(
        Opts::new(
            "svc_http_requests_total",
            "HTTP requests answered, by route, method and status",
        ),
        &["route", "method", "status"],
    )
    .expect("valid metric");
    let latency = HistogramVec::new(
        HistogramOpts::new(
            "svc_http_request_duration_seconds",
            "Time to answer a request, by route and JSON-RPC tool or method",
        )
        .buckets(LATENCY_BUCKETS.to_vec()),
        &["route", "rpc"],
    )
    .expect("valid metric");
    let renders = IntCounterVec::new(
        Opts::new(
            "svc_renders_total",
            "svc_render answers, by outcome and whether a cached blueprint served it",
        ),
        &["outcome", "cache"],
    )
    .expect("valid metric");
    let generation_duration = HistogramVec::new(
        HistogramOpts::new(
            "svc_generation_duration_seconds",
            "Cold generations (generate, compile, check, store), by outcome: rendered or the failure code",
        )
        .buckets(LATENCY_BUCKETS.to_vec()),
        &["outcome"],
    )
    .expect("valid metric");
    let queue_wait = Histogram::with_opts(
        HistogramOpts::new(
            "svc_generation_queue_wait_seconds",
            "Time a cold generation waited for a generation slot",
        )
        .buckets(LATENCY_BUCKETS.to_vec()),
    )
    .expect("valid metric");
    let queue_depth = IntGaugeVec::new(
        Opts::new(
            "svc_generation_queue",
            "Cold generations running and waiting for a slot",
        ),
        &["state"],
    )
    .expect("valid metric");
    let cache_lookups = IntCounterVec::new(
        Opts::new(
            "svc_blueprint_cache_lookups_total",
            "Handshake lookups for a cached blueprint, by result (hit, miss)",
        ),
        &["result"],
    )
    .expect("valid metric");
    let db_connections = IntGaugeVec::new(
        Opts::new(
            "svc_db_pool_connections",
            "Open database pool connections, by state (in_use, idle)",
        ),
        &["state"],
    )
    .expect("valid metric");
    let db_max_connections = IntGauge::new(
        "svc_db_pool_max_connections",
        "The most connections the database pool opens",
    )
    .expect("valid metric");
    let db_reads = IntCounterVec::new(
        Opts::new(
            "svc_db_reads_total",
            "Request-path reads on PostgreSQL, by statement: alone, or shared with other reads waiting together",
        ),
        &["statement"],
    )
    .expect("valid metric");
    let db_commits = IntCounter::new(
        "svc_db_commits_total",
        "Commits of the group-commit writer on SQLite (one fsync each)",
    )
    .expect("valid metric");
    let db_writes = IntCounterVec::new(
        Opts::new(
            "svc_db_writes_total",
            "Writes committed by the group-commit writer on SQLite, by statement: alone, or listed with others of their text",
        ),
        &["statement"],
    )
    .expect("valid metric");
    let live_sockets = IntGauge::new("svc_live_sockets", "Open /ws live-channel sockets").expect("valid metric");
    let long_polls = IntGauge::new("svc_long_polls", "Polling-fallback GETs being held open").expect("valid metric");
    let consume_waits =
        IntGauge::new("svc_consume_waits", "svc_consume calls with a timeout being held open").expect("valid metric");
    for collector in [
        Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
        Box::new(latency.clone()),
        Box::new(renders.clone()),
        Box::new(live_sockets.clone()),
        Box::new(long_polls.clone()),
        Box::new(consume_waits.clone()),
        Box::new(generation_duration.clone()),
        Box::new(queue_wait.clone()),
        Box::new(queue_depth.clone()),
        Box::new(cache_lookups.clone()),
        Box::new(db_connections.clone()),
        Box::new(db_max_connections.clone()),
        Box::new(db_reads.clone()),
        Box::new(db_commits.clone()),
        Box::new(db_writes.clone()),
    ] {
        registry.register(collector).expect("metric registered once");
    }
    HttpMetrics {
        registry,
        requests,
        latency,
        renders,
        live_sockets,
        long_polls,
        consume_waits,
        generation_duration,
        queue_wait,
        queue_depth,
        cache_lookups,
        db_connections,
        db_max_connections,
        db_reads,
        db_commits,
        db_writes,
    }
});

impl HttpMetrics {
    /// The Prometheus text exposition of every metric.
    pub fn encode(&self) -> String {
        let mut buffer = Vec::new();
        TextEncoder::new()
            .encode(&self.registry.gather(), &mut buffer)
            .expect("text encoding of gathered metrics");
        String::from_utf8(buffer).expect("the text format is UTF-8")
    }
}

/// Counts one held resource (a socket, a long-poll) until dropped.
pub(crate) struct Held(&'static IntGauge);

pub(crate) fn held(gauge: &'static IntGauge) -> Held {
    gauge.inc();
    Held(gauge)
}

impl Drop for Held {
    fn drop(&mut self) {
        self.0.dec();
    }
}
