//! How long the filters of `svc_ops_list_blueprints` may be. Each is checked where it arrives
//! (the tool's `inputSchema`), so a caller cannot make a listing read, embed or compare
//! megabytes: `persona` and `intentKeywords` are embedded on every call, and the exact filters
//! are compared with short columns.

use super::operator_texts::PERSONA_MAX_CHARS;

/// A `contractHash` is sha256 hex: 64 characters. A longer one matches nothing anyway.
pub const CONTRACT_HASH_MAX_CHARS: usize = 64;
/// A generator slug (`builtin`, `standard`, `advanced`, `user`, or a configured one).
pub const GENERATOR_MAX_CHARS: usize = 64;
/// The `persona` filter is compared with stored personas: as long as one may be written.
pub const PERSONA_FILTER_MAX_CHARS: usize = PERSONA_MAX_CHARS;
/// Words of `intentKeywords`, each up to [`INTENT_KEYWORD_MAX_CHARS`]: together no longer than
/// what the embedder reads of a text (4,096 characters).
pub const INTENT_KEYWORDS_MAX_ITEMS: usize = 20;
pub const INTENT_KEYWORD_MAX_CHARS: usize = 200;
/// A `nextCursor` names a creation time and a blueprint id (base64url): well under this.
pub const CURSOR_MAX_CHARS: usize = 512;

// The words together stay within what the embedder reads of a text (4,096 characters).
const _: () = assert!(INTENT_KEYWORDS_MAX_ITEMS * (INTENT_KEYWORD_MAX_CHARS + 1) <= 4_096);
