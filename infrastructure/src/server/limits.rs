//! Request and connection limits the server is built with, read from the settings.

use super::*;

/// `--public-demo`: the per-address limit of cold generations; none otherwise.
pub(super) fn public_demo_limit(settings: &Settings) -> Result<Option<GenerationLimit>, StartError> {
    let demo = &settings.public_demo;
    let window = window_of(demo.window_seconds);
    if !demo.enabled {
        return Ok(None);
    }
    if demo.generations_per_window == 0 {
        return Err(StartError::Config(
            "public_demo.generations_per_window must be at least 1".into(),
        ));
    }
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

/// The generation queue of `[generation]`, in hosted mode with each principal's share capped.
pub(super) fn generation_queue(settings: &Settings) -> GenerationQueue {
    let g = &settings.generation;
    let queue = GenerationQueue::new(g.concurrency, g.max_waiting, Duration::from_secs(g.max_wait_seconds));
    super::hosted_quotas::generation_queue(settings, queue)
}

/// `[connections]` for this process (`ConnectionLimits::for_this_process`), the bodies of the
/// routes that take no credential under their own budget.
pub(super) fn connection_limits(settings: &Settings) -> ConnectionLimits {
    ConnectionLimits::for_this_process(&settings.connections)
        .with_unauthenticated_paths(svc_http::UNAUTHENTICATED_BODY_PATHS)
}

/// The tool-call limiter of `[tool_calls]`; `None` when `calls_per_window` is 0.
pub(super) fn tool_call_limit(
    settings: &Settings,
    clock: Arc<dyn Clock>,
) -> Result<Option<ToolCallLimiter>, StartError> {
    let t = &settings.tool_calls;
    // Checked with the limiter off (`calls_per_window = 0`) too: a typo is refused when written,
    // not when the limiter is turned on later.
    let per = match t.per.as_str() {
        "identity" => LimitedPer::Identity,
        "app" => LimitedPer::App,
        other => {
            return Err(StartError::Config(format!(
                "tool_calls.per must be identity or app, not `{other}`"
            )));
        }
    };
    let window = window_of(t.window_seconds);
    if t.calls_per_window == 0 {
        return Ok(None);
    }
    Ok(Some(ToolCallLimiter::new(
        per,
        WindowQuota::new(t.calls_per_window, window),
        clock,
    )))
}

/// A window of whole seconds (from a second to a year: checked at load, `settings::bounds`).
fn window_of(seconds: u64) -> chrono::TimeDelta {
    i64::try_from(seconds)
        .ok()
        .and_then(chrono::TimeDelta::try_seconds)
        .unwrap_or(chrono::TimeDelta::MAX)
}
