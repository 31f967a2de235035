//! Stored contracts parsed once per text, not once per read.
//!
//! A session's contract never changes after its handshake, yet every read of the session on a
//! server database (replicas: every `svc_get_session`, `svc_consume`, `resources/read`) brought
//! its text back and parsed it into a JSON tree: the largest part of turning a row into a record
//! (issue 18, BENCHMARKS.md). Parsing is a function of the text alone, so the parsed contract is
//! kept under its text and shared (a [`Contract`] is immutable and cheap to clone); the hashes a
//! contract computes on demand are then computed once per text as well. Bounded by an estimate of
//! the memory kept, and forgotten when unused.

use std::sync::LazyLock;
use std::time::Duration;

use moka::sync::Cache;
use svc_domain::contract::Contract;

/// Estimated bytes kept at most; the least used go first.
const KEPT_BYTES: u64 = 32 * 1024 * 1024;
/// A parsed contract's heap per byte of its text (an order-preserving JSON tree: a 353-byte
/// contract measured 5,884 bytes), plus the text kept as the key.
const HEAP_PER_TEXT_BYTE: usize = 18;
/// Each entry's own overhead (the cache's node, the `Arc`s), whatever its size.
const ENTRY_OVERHEAD: usize = 256;
/// A contract nobody read for this long is forgotten (as the SQLite read cache forgets rows).
const IDLE: Duration = Duration::from_secs(300);

static PARSED: LazyLock<Cache<String, Contract>> = LazyLock::new(|| {
    Cache::builder()
        .max_capacity(KEPT_BYTES)
        .weigher(|text: &String, _: &Contract| {
            let estimate = text
                .len()
                .saturating_mul(HEAP_PER_TEXT_BYTE)
                .saturating_add(ENTRY_OVERHEAD);
            u32::try_from(estimate).unwrap_or(u32::MAX)
        })
        .time_to_idle(IDLE)
        .build()
});

/// The contract `text` parses to: kept from an earlier read of the same text, or `parse`d now
/// (and kept when it parses).
pub(super) fn parsed<E>(text: &str, parse: impl FnOnce(&str) -> Result<Contract, E>) -> Result<Contract, E> {
    if let Some(contract) = PARSED.get(text) {
        return Ok(contract);
    }
    let contract = parse(text)?;
    PARSED.insert(text.to_owned(), contract.clone());
    Ok(contract)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contract_of(text: &str) -> Result<Contract, String> {
        let value: serde_json::Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
        Contract::try_from(value).map_err(|e| e.to_string())
    }

    #[test]
    fn the_same_text_is_parsed_once_and_shared() {
        let text = json!({ "propsSpec": { "type": "object", "title": "parsed once" } }).to_string();
        let mut parses = 0;
        let first = parsed(&text, |t| {
            parses += 1;
            contract_of(t)
        })
        .unwrap();
        let again = parsed(&text, |t| {
            parses += 1;
            contract_of(t)
        })
        .unwrap();
        assert_eq!(parses, 1);
        assert_eq!(first, again);
        assert_eq!(
            first.as_map().get("propsSpec"),
            Some(&json!({ "type": "object", "title": "parsed once" }))
        );
    }

    #[test]
    fn another_text_is_another_contract_and_a_failure_is_not_kept() {
        let one = parsed(r#"{"propsSpec":{"title":"one"}}"#, contract_of).unwrap();
        let two = parsed(r#"{"propsSpec":{"title":"two"}}"#, contract_of).unwrap();
        assert_ne!(one, two);
        let corrupt = "{\"propsSpec\": [not json";
        assert!(parsed(corrupt, contract_of).is_err());
        let mut parses = 0;
        let _ = parsed(corrupt, |t| {
            parses += 1;
            contract_of(t)
        });
        assert_eq!(parses, 1, "a text that failed to parse is parsed (and refused) again");
    }
}
