//! The process's Prometheus registry. One global: every request and socket of the process
//! counts into it, and `/metrics` encodes it.

use std::sync::LazyLock;

use prometheus::{Encoder, HistogramOpts, HistogramVec, IntCounterVec, IntGauge, Opts, Registry, TextEncoder};

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
    let live_sockets = IntGauge::new("svc_live_sockets", "Open /ws live-channel sockets").expect("valid metric");
    let long_polls = IntGauge::new("svc_long_polls", "Polling-fallback GETs being held open").expect("valid metric");
    for collector in [
        Box::new(requests.clone()) as Box<dyn prometheus::core::Collector>,
        Box::new(latency.clone()),
        Box::new(renders.clone()),
        Box::new(live_sockets.clone()),
        Box::new(long_polls.clone()),
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
