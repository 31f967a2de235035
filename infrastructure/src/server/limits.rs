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

/// `[connections]` for this process (`ConnectionLimits::for_this_process`).
pub(super) fn connection_limits(settings: &Settings) -> Result<ConnectionLimits, StartError> {
    ConnectionLimits::for_this_process(&settings.connections).map_err(StartError::Config)
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
