//! `resources/read` answers serialised once and filled per request.
//!
//! A render's document inlines the mount runtime (about a megabyte of JavaScript) and a bootstrap
//! that changes only when the session does; serialising both as JSON on every read was nearly all
//! of the read's cost. A [`ReadTemplate`] is the serialised `result` with holes where the
//! per-request parts go (the fresh `wsToken` and its `expiresAt`) and where the runtime goes (its
//! escaped text, computed once per process and shared by every template). JSON string escaping is
//! character by character, so escaping the pieces apart is escaping the whole.
//!
//! [`ReadTemplates`] keeps them per (URI, session revision, event sequence, epoch): every amend,
//! update or emit moves the revision or the sequence, so a changed session never meets an old
//! document. Bounded by bytes (the runtime is not counted: it is shared).

use std::sync::{Arc, LazyLock};

use bytes::Bytes;
use serde_json::Value;

use super::answer_pieces::{AnswerPiece, KeptText};
use super::resources::script_source;
use crate::runtime_asset::{MODULE_LEXER_JS, RUNTIME_JS};

/// Bytes of templates kept; the least recently used go first.
const CACHE_BYTES: u64 = 64 * 1024 * 1024;

/// A per-process random part makes the markers unguessable, so no prop can plant one.
static NONCE: LazyLock<String> = LazyLock::new(|| uuid::Uuid::new_v4().simple().to_string());

/// The runtime's source as it appears inside the serialised `text` string (deflated once per
/// process, for the first answer that is sent compressed).
static ESCAPED_RUNTIME: LazyLock<Arc<KeptText>> = LazyLock::new(|| escaped_script(RUNTIME_JS));
/// The module lexer's, likewise (documents that may load a module without links).
static ESCAPED_MODULE_LEXER: LazyLock<Arc<KeptText>> = LazyLock::new(|| escaped_script(MODULE_LEXER_JS));

fn escaped_script(source: &str) -> Arc<KeptText> {
    let quoted = serde_json::to_string(&script_source(source)).expect("a string serialises");
    Arc::new(KeptText::new(Bytes::copy_from_slice(
        &quoted.as_bytes()[1..quoted.len() - 1],
    )))
}

/// What a hole of a template is filled with.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Hole {
    WsToken,
    ExpiresAt,
    Runtime,
    ModuleLexer,
}

impl Hole {
    const ALL: [Hole; 4] = [Hole::WsToken, Hole::ExpiresAt, Hole::Runtime, Hole::ModuleLexer];

    /// Letters, digits only: unchanged by `script_json` and by JSON string escaping.
    pub(crate) fn marker(self) -> String {
        let name = match self {
            Hole::WsToken => "WsToken",
            Hole::ExpiresAt => "ExpiresAt",
            Hole::Runtime => "Runtime",
            Hole::ModuleLexer => "ModuleLexer",
        };
        format!("svcHole{name}{}", *NONCE)
    }
}

enum Piece {
    Text(Arc<KeptText>),
    Hole(Hole),
}

/// A serialised `resources/read` result with its holes.
pub(crate) struct ReadTemplate {
    pieces: Vec<Piece>,
}

impl ReadTemplate {
    /// Serialises `result` (built with [`Hole::marker`]s in place of the per-request parts and of
    /// the runtime) and cuts it at each marker.
    pub(crate) fn of(result: &Value) -> Self {
        let serialised = result.to_string();
        let markers: Vec<(Hole, String)> = Hole::ALL.iter().map(|h| (*h, h.marker())).collect();
        let mut pieces = Vec::new();
        let mut rest = serialised.as_str();
        loop {
            let next = markers
                .iter()
                .filter_map(|(hole, marker)| rest.find(marker.as_str()).map(|at| (at, *hole, marker.len())))
                .min_by_key(|(at, _, _)| *at);
            match next {
                Some((at, hole, len)) => {
                    pieces.push(Piece::text(&rest.as_bytes()[..at]));
                    pieces.push(Piece::Hole(hole));
                    rest = &rest[at + len..];
                }
                None => {
                    pieces.push(Piece::text(rest.as_bytes()));
                    break;
                }
            }
        }
        Self { pieces }
    }

    /// The serialised result for one request, as pieces to write one after the other: the
    /// template's own (shared, not copied) and the filled-in parts. `ws_token` and `expires_at`
    /// must need no JSON or HTML escaping (a base64url token, an RFC 3339 time: they do not).
    pub(crate) fn fill(&self, ws_token: &str, expires_at: &str) -> Vec<AnswerPiece> {
        let fresh = |text: &str| AnswerPiece::Fresh(Bytes::copy_from_slice(text.as_bytes()));
        self.pieces
            .iter()
            .map(|piece| match piece {
                Piece::Text(text) => AnswerPiece::Kept(Arc::clone(text)),
                Piece::Hole(Hole::WsToken) => fresh(ws_token),
                Piece::Hole(Hole::ExpiresAt) => fresh(expires_at),
                Piece::Hole(Hole::Runtime) => AnswerPiece::Kept(Arc::clone(&ESCAPED_RUNTIME)),
                Piece::Hole(Hole::ModuleLexer) => AnswerPiece::Kept(Arc::clone(&ESCAPED_MODULE_LEXER)),
            })
            .collect()
    }

    /// Its own text, twice when it has been sent compressed (the deflated copy is at most about
    /// the text's size).
    fn own_bytes(&self) -> usize {
        self.pieces
            .iter()
            .map(|p| match p {
                Piece::Text(text) => text.text().len() * 2,
                Piece::Hole(_) => 0,
            })
            .sum()
    }
}

impl Piece {
    fn text(bytes: &[u8]) -> Self {
        Self::Text(Arc::new(KeptText::new(Bytes::copy_from_slice(bytes))))
    }
}

/// Which state of which document a template is.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub(crate) struct DocumentKey {
    pub uri: String,
    pub revision: i64,
    pub event_sequence: i64,
    pub epoch: u32,
}

/// The templates of recently read documents.
pub(crate) struct ReadTemplates {
    cache: moka::sync::Cache<DocumentKey, Arc<ReadTemplate>>,
}

impl Default for ReadTemplates {
    fn default() -> Self {
        Self {
            cache: moka::sync::Cache::builder()
                .max_capacity(CACHE_BYTES)
                .weigher(|key: &DocumentKey, template: &Arc<ReadTemplate>| {
                    u32::try_from(key.uri.len() + template.own_bytes()).unwrap_or(u32::MAX)
                })
                .build(),
        }
    }
}

impl ReadTemplates {
    /// The template of `key`, when it is kept.
    pub(crate) fn get(&self, key: &DocumentKey) -> Option<Arc<ReadTemplate>> {
        self.cache.get(key)
    }

    /// The template of `key`, built by `build` when it is not kept.
    pub(crate) fn get_or_build(&self, key: DocumentKey, build: impl FnOnce() -> ReadTemplate) -> Arc<ReadTemplate> {
        self.cache.get_with(key, || Arc::new(build()))
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_filled_template_is_the_result_serialised_with_its_parts() {
        let with_holes = json!({ "text": format!("<a>{}</a>{}", Hole::WsToken.marker(), Hole::Runtime.marker()),
            "expiresAt": Hole::ExpiresAt.marker() });
        let filled: Vec<u8> = ReadTemplate::of(&with_holes)
            .fill("tok.en", "2026-11-27T00:00:00.000Z")
            .iter()
            .flat_map(|piece| piece.text().to_vec())
            .collect();
        let expected = json!({ "text": format!("<a>tok.en</a>{}", script_source(RUNTIME_JS)),
            "expiresAt": "2026-11-27T00:00:00.000Z" });
        assert_eq!(String::from_utf8(filled).unwrap(), expected.to_string());
    }
}
