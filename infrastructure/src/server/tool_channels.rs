//! The tool channels' service: which tools a `streamSpec` channel may poll, and its bounds.

use std::collections::HashMap;
use std::sync::Arc;
use std::time::Duration;

use svc_application::ports::pollable::PollableTool;
use svc_application::services::agent::AgentService;
use svc_application::services::cpu_gate::CpuGate;
use svc_application::services::tool_channels::{
    SESSION_PROJECTION_TOOL, SessionProjectionTool, ToolChannelService, ToolChannelSettings,
};
use svc_http::HttpPollableTool;

use super::StartError;
use crate::settings::Settings;

/// The pollable tools of `streamSpec[*].source.tool` channels: `svc_get_session` and the HTTP
/// data sources of `[[live.poll_tools]]` (docs/live-channel.md).
/// Payloads whose check is not light go through `cpu`, the deployment's gate of heavy work.
pub(super) fn tool_channels(
    settings: &Settings,
    agent: &AgentService,
    cpu: CpuGate,
) -> Result<ToolChannelService, StartError> {
    let live = &settings.live;
    let min_interval = Duration::from_millis(live.tool_channel_min_interval_ms);
    let mut tools: HashMap<String, Arc<dyn PollableTool>> = HashMap::new();
    tools.insert(
        SESSION_PROJECTION_TOOL.to_owned(),
        Arc::new(SessionProjectionTool::new(agent.clone(), min_interval)),
    );
    for source in &live.poll_tools {
        if source.name.is_empty() || !(source.url.starts_with("http://") || source.url.starts_with("https://")) {
            return Err(StartError::Config(format!(
                "live.poll_tools: `{}` needs a name and an http(s) url",
                source.name
            )));
        }
        if tools.contains_key(&source.name) {
            return Err(StartError::Config(format!(
                "live.poll_tools: `{}` is declared twice",
                source.name
            )));
        }
        let tool = HttpPollableTool::new(
            source.url.clone(),
            Duration::from_millis(source.interval_ms),
            Duration::from_millis(source.timeout_ms.unwrap_or(live.tool_poll_timeout_ms)),
        );
        tools.insert(source.name.clone(), Arc::new(tool));
    }
    Ok(ToolChannelService::new(
        tools,
        ToolChannelSettings {
            min_interval,
            max_channels_per_socket: live.tool_channels_per_socket,
            max_payload_bytes: live.tool_channel_max_payload_bytes,
            poll_timeout: Duration::from_millis(live.tool_poll_timeout_ms),
        },
    )
    .with_cpu_gate(cpu))
}
