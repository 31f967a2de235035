//! Wire types of the service: tool arguments and results of `/mcp` and `/ops` (the same types the
//! handlers receive and answer, so `tools/list` input and output schemas come from them), JSON-RPC error codes, MCP protocol versions and the
//! recommended agent system prompt.

mod agent_prompt;
pub mod agent_results;
mod agent_tools;
mod codes;
pub mod json_weight;
pub mod jsonrpc;
pub mod live_frames;
pub mod ops_results;
pub mod ops_tools;
mod whole_number;

pub use agent_prompt::AGENT_SYSTEM_PROMPT;
pub use agent_tools::*;
pub use codes::*;

/// The protocol revision of the service (Document 1, Versioning).
pub const SERVICE_PROTOCOL_VERSION: &str = "draft-2026-06-12";

/// MCP protocol revisions this server speaks, newest first. A client asking for one of them gets
/// it back; any other request is answered with the newest.
pub const MCP_PROTOCOL_VERSIONS: [&str; 4] = ["2025-11-25", "2025-06-18", "2025-03-26", "2024-11-05"];
