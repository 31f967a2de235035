//! MCP tool annotations (2025-06-18): hints for hosts, never a security boundary. Every tool
//! states all four, so a host never falls back to the spec's pessimistic defaults.
//!
//! `destructive`: the call may lose a prior state (a delete, a revoke, an overwrite in place).
//! `open_world`: the call reaches beyond this server (a language model provider, an email).

use serde::Serialize;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    #[serde(rename = "readOnlyHint")]
    pub read_only: bool,
    #[serde(rename = "destructiveHint")]
    pub destructive: bool,
    #[serde(rename = "idempotentHint")]
    pub idempotent: bool,
    #[serde(rename = "openWorldHint")]
    pub open_world: bool,
}

impl Annotations {
    /// Reads only: safe to repeat, changes nothing.
    pub const READ: Self = Self {
        read_only: true,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    /// Adds something new each call (a handshake, a key, an org).
    pub const CREATE: Self = Self {
        read_only: false,
        destructive: false,
        idempotent: false,
        open_world: false,
    };
    /// Sets a state; repeating the call changes nothing more, nothing is lost.
    pub const SET: Self = Self {
        read_only: false,
        destructive: false,
        idempotent: true,
        open_world: false,
    };
    /// Replaces or removes a state; repeating the call changes nothing more.
    pub const OVERWRITE: Self = Self {
        read_only: false,
        destructive: true,
        idempotent: true,
        open_world: false,
    };

    /// The same hints, for a call that also reaches beyond this server.
    pub const fn open_world(self) -> Self {
        Self {
            open_world: true,
            ..self
        }
    }
}
