//! Drafts already agreed, by their exact JSON text. A warm agent sends the same draft with every
//! handshake; negotiation is a function of the draft alone (the budgets, every schema compiled,
//! the amendments), and the agreed contract keeps its hash once computed, so a draft seen before
//! skips all of it, and the CPU gate's thread hand-off with it.
//!
//! The key is the draft's compact text, not a hash of it: drafts are untrusted, and two texts
//! are the same key only if they are equal. The same draft with its keys in another order is
//! another key (negotiated once more, to the same answer). Declined drafts are not kept.

use std::time::Duration;

use serde_json::Value;
use svc_domain::contract::Negotiated;

/// Text the memo may hold: the drafts' and, about as large, their agreed contracts'.
const MEMO_BYTES: u64 = 16 * 1024 * 1024;
/// A draft no handshake sent for this long is forgotten.
const MEMO_IDLE: Duration = Duration::from_secs(10 * 60);

#[derive(Clone)]
pub(super) struct NegotiationMemo(moka::sync::Cache<String, Negotiated>);

impl Default for NegotiationMemo {
    fn default() -> Self {
        Self(
            moka::sync::Cache::builder()
                .max_capacity(MEMO_BYTES)
                // The agreed contract weighs about what its draft does.
                .weigher(|draft: &String, _| u32::try_from(draft.len().saturating_mul(2)).unwrap_or(u32::MAX))
                .time_to_idle(MEMO_IDLE)
                .build(),
        )
    }
}

/// A draft as the memo knows it.
pub(super) struct DraftKey(String);

impl DraftKey {
    pub(super) fn of(draft: &Value) -> Self {
        Self(draft.to_string())
    }
}

impl NegotiationMemo {
    /// What `draft` was agreed as, if a handshake negotiated it before.
    pub(super) fn agreed(&self, draft: &DraftKey) -> Option<Negotiated> {
        self.0.get(&draft.0)
    }

    pub(super) fn remember(&self, draft: DraftKey, agreed: &Negotiated) {
        self.0.insert(draft.0, agreed.clone());
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;
    use svc_domain::contract::negotiate;

    use super::*;

    #[test]
    fn only_the_same_text_finds_what_was_agreed() {
        let memo = NegotiationMemo::default();
        let draft = json!({ "propsSpec": { "type": "object", "properties": { "t": { "type": "string" } } } });
        let agreed = negotiate(&draft).unwrap();
        memo.remember(DraftKey::of(&draft), &agreed);
        assert_eq!(memo.agreed(&DraftKey::of(&draft.clone())), Some(agreed));
        let other = json!({ "propsSpec": { "type": "object", "properties": { "t": { "type": "number" } } } });
        assert_eq!(memo.agreed(&DraftKey::of(&other)), None);
    }
}
