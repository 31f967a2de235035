//! JSON-RPC error codes of Document 1, plus one of ours (`REQUEST_CANCELLED`, for a request the
//! client cancelled). Retired codes (-32004, -32005, -32010, -32011, -32012, -32013, -32020) have
//! no constant, so they cannot be emitted.

pub const PARSE_ERROR: i64 = -32700;
pub const INVALID_REQUEST: i64 = -32600;
pub const METHOD_NOT_FOUND: i64 = -32601;
pub const INVALID_PARAMS: i64 = -32602;
pub const INTERNAL_ERROR: i64 = -32603;
pub const UNAUTHORIZED: i64 = -32007;
pub const SESSION_NOT_FOUND: i64 = -32002;
pub const APP_NOT_FOUND: i64 = -32003;
pub const MOUNT_UNAVAILABLE: i64 = -32006;
pub const GENERATION_OVERLOADED: i64 = -32014;
/// Not in Document 1: the answer to a request the client cancelled with `notifications/cancelled`
/// while it ran (the code JSON-RPC peers such as LSP use for a cancelled request).
pub const REQUEST_CANCELLED: i64 = -32800;
