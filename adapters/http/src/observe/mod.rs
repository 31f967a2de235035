//! What an operator sees of the HTTP surface: a request id on every request, one access-log
//! line per request, and Prometheus metrics at `GET /metrics`.

mod access;
mod endpoint;
mod generation_metrics;
mod metrics;
mod route_label;
mod rpc_label;

pub use access::{AnswerInBody, Observe, RpcLabel};
pub use endpoint::serve_metrics;
pub use generation_metrics::PrometheusTelemetry;
pub(crate) use metrics::{METRICS, held};
pub(crate) use rpc_label::rpc_label;
