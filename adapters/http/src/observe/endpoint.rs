//! `GET /metrics`: the Prometheus text format, to scrapers on the machine itself only: the TCP
//! peer must be a loopback address and the request must not have passed a proxy (a proxy on
//! the same machine connects from loopback too, and would publish the metrics to everyone).

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::Data;
use poem::{IntoResponse, Request, Response, handler};

use super::generation_metrics::refresh_gauges;
use super::metrics::METRICS;
use crate::route_states::MetricsSources;

#[handler]
pub fn serve_metrics(req: &Request, Data(state): Data<&Arc<MetricsSources>>) -> Response {
    let loopback = req
        .remote_addr()
        .as_socket_addr()
        // A dual-stack listener sees an IPv4 client as `::ffff:a.b.c.d`.
        .is_some_and(|address| address.ip().to_canonical().is_loopback());
    let proxied = req.header("x-forwarded-for").is_some() || req.header("forwarded").is_some();
    if !loopback || proxied {
        return (StatusCode::FORBIDDEN, "metrics are served to loopback clients only").into_response();
    }
    refresh_gauges(state.agent.queue_depth(), state.pool_usage.as_deref());
    METRICS
        .encode()
        .with_content_type("text/plain; version=0.0.4; charset=utf-8")
        .into_response()
}
