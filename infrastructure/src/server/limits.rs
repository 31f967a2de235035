//! Request and connection limits the server is built with, read from the settings.

use super::*;

/// `--public-demo`: the per-address limit of cold generations; none otherwise.
pub(super) fn public_demo_limit(settings: &Settings) -> Result<Option<GenerationLimit>, StartError> {
    let demo = &settings.public_demo;
    if !demo.enabled {
        return Ok(None);
    }
    if demo.generations_per_window == 0 {
        return Err(StartError::Config(
            "public_demo.generations_per_window must be at least 1".into(),
        ));
    }
    let window = i64::try_from(demo.window_seconds)
        .ok()
        .filter(|s| *s > 0)
        .and_then(chrono::TimeDelta::try_seconds)
        .ok_or_else(|| StartError::Config("public_demo.window_seconds must be a positive number".into()))?;
    tracing::info!(
        generations = demo.generations_per_window,
        window_seconds = demo.window_seconds,
        trust_proxy = demo.trust_proxy,
        "public demo: cold generations are limited per remote address"
    );
    Ok(Some(GenerationLimit::per_address(WindowQuota::new(
        demo.generations_per_window,
        window,
    ))))
}

/// `[connections]`: deadlines and the cap, each at least 1.
pub(super) fn connection_limits(settings: &Settings) -> Result<ConnectionLimits, StartError> {
    let c = &settings.connections;
    let positive = |name: &str, value: u64| {
        (value > 0)
            .then_some(value)
            .ok_or_else(|| StartError::Config(format!("connections.{name} must be at least 1")))
    };
    Ok(ConnectionLimits {
        header_read_timeout: Duration::from_secs(positive(
            "header_read_timeout_seconds",
            c.header_read_timeout_seconds,
        )?),
        idle_timeout: Duration::from_secs(positive("idle_timeout_seconds", c.idle_timeout_seconds)?),
        max_connections: usize::try_from(positive("max_connections", c.max_connections as u64)?).unwrap_or(usize::MAX),
        health_headroom: c.health_headroom,
    })
}

/// The tool-call limiter of `[tool_calls]`; `None` when `calls_per_window` is 0.
pub(super) fn tool_call_limit(
    settings: &Settings,
    clock: Arc<dyn Clock>,
) -> Result<Option<ToolCallLimiter>, StartError> {
    let t = &settings.tool_calls;
    if t.calls_per_window == 0 {
        return Ok(None);
    }
    let per = match t.per.as_str() {
        "identity" => LimitedPer::Identity,
        "app" => LimitedPer::App,
        other => {
            return Err(StartError::Config(format!(
                "tool_calls.per must be identity or app, not `{other}`"
            )));
        }
    };
    let window = i64::try_from(t.window_seconds)
        .ok()
        .filter(|s| *s > 0)
        .and_then(chrono::TimeDelta::try_seconds)
        .ok_or_else(|| StartError::Config("tool_calls.window_seconds must be a positive number".into()))?;
    Ok(Some(ToolCallLimiter::new(
        per,
        WindowQuota::new(t.calls_per_window, window),
        clock,
    )))
}
