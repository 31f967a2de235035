//! What a parsed JSON value holds on the heap, for caches that weigh what they keep: its text's
//! length understates it up to forty times (`[0,0,...]` is two bytes an element as text and a
//! 72-byte `Value` each once parsed, its array's spare capacity besides).
//!
//! The rule is the one parse builds a value by: serde_json (built with `preserve_order`) pushes an
//! array's elements one by one into a `Vec` that doubles as it grows and is not shrunk, and
//! inserts an object's members one by one into an `IndexMap`, a `Vec` of entries (hash, key and
//! value) beside a hashbrown table of their indices, both grown to the table's capacity. The
//! protocol adapter weighs JSON text by the same functions before parsing it (its `json_weight`
//! compiles this file as its own module: an adapter does not depend on another), and both are
//! checked against the heap a parse takes as an allocator counts it
//! (`adapters/protocol/tests/parsed_heap.rs`). Allocator bookkeeping (a few bytes an
//! allocation) is not counted.

use std::mem::size_of;

use serde_json::Value;

/// One member in an object's entries: its hash, its key and its value (`indexmap::Bucket`).
const ENTRY_BYTES: usize = size_of::<usize>() + size_of::<String>() + size_of::<Value>();

/// The control bytes a hashbrown table has past one a bucket: a group's width, 16 where groups
/// are SSE2 (8 on some other targets: then an overestimate by 8 bytes).
const TABLE_TRAILING_CONTROL_BYTES: usize = 16;

/// The heap an array of `len` elements takes for its slots, pushed one by one: doubled from
/// the smallest capacity a growing `Vec` takes past empty. (Weighing a parsed value reads its
/// capacity instead: only the protocol adapter's weigher, which compiles this file, calls this.)
#[cfg_attr(not(test), allow(dead_code))]
pub(crate) fn array_slots_bytes(len: usize) -> usize {
    /// std's `RawVec`, for elements of 1 KiB and under.
    const MIN_VEC_CAPACITY: usize = 4;
    let capacity = match len {
        0 => 0,
        n => n.checked_next_power_of_two().unwrap_or(n).max(MIN_VEC_CAPACITY),
    };
    capacity.saturating_mul(size_of::<Value>())
}

/// The heap an object of `len` members takes beside its keys' bytes and what its values hold,
/// its members inserted one by one: the index table at the fewest buckets (a power of two, at
/// least 4) whose capacity holds them, and the entries at that capacity.
pub(crate) fn object_members_bytes(len: usize) -> usize {
    if len == 0 {
        return 0;
    }
    let buckets = match len {
        1..=3 => 4,
        4..=7 => 8,
        8..=14 => 16,
        // 7/8 of a larger table's buckets hold members.
        n => (n.saturating_mul(8) / 7)
            .checked_next_power_of_two()
            .unwrap_or(usize::MAX),
    };
    let capacity = if buckets <= 8 { buckets - 1 } else { buckets / 8 * 7 };
    let table = buckets
        .saturating_mul(size_of::<usize>() + 1)
        .saturating_add(TABLE_TRAILING_CONTROL_BYTES);
    capacity.saturating_mul(ENTRY_BYTES).saturating_add(table)
}

/// The heap bytes `value` owns (not counting the `Value` itself, which its owner holds): its
/// strings' and arrays' capacities, and its objects' as their parse leaves them (a map does not
/// tell its capacity; one built otherwise, a copy of one, is at most that).
pub(crate) fn heap_bytes(value: &Value) -> usize {
    match value {
        Value::Null | Value::Bool(_) | Value::Number(_) => 0,
        Value::String(text) => text.capacity(),
        Value::Array(items) => items.capacity() * size_of::<Value>() + items.iter().map(heap_bytes).sum::<usize>(),
        Value::Object(members) => {
            object_members_bytes(members.len())
                + members
                    .iter()
                    .map(|(key, member)| key.capacity() + heap_bytes(member))
                    .sum::<usize>()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_array_of_small_numbers_weighs_far_more_than_its_text() {
        let text = format!("[{}0]", "0,".repeat(9_999));
        let value: Value = serde_json::from_str(&text).unwrap();
        let heap = heap_bytes(&value);
        assert!(heap >= 10_000 * size_of::<Value>(), "{heap}");
        assert!(heap > 20 * text.len(), "{heap} against {} bytes of text", text.len());
        assert_eq!(heap, array_slots_bytes(10_000), "slots at the capacity the parse left");
    }

    #[test]
    fn strings_and_members_count_their_bytes() {
        let long = "x".repeat(1_000);
        let value = serde_json::json!({ "title": long, "tags": ["a", "b"] });
        let heap = heap_bytes(&value);
        assert!(
            heap >= 1_000 + "title".len() + "tags".len() + 2 * size_of::<Value>(),
            "{heap}"
        );
        assert_eq!(heap_bytes(&Value::Null), 0);
    }

    /// A map's table grows from 4 buckets by doubling, holding one fewer than its buckets up to
    /// 8 and 7/8 of them past that, and its entries take the table's capacity.
    #[test]
    fn an_object_takes_its_table_and_entries_at_the_capacity_that_holds_its_members() {
        let object = |buckets: usize, capacity: usize| capacity * ENTRY_BYTES + buckets * 9 + 16;
        assert_eq!(object_members_bytes(0), 0);
        for (len, buckets, capacity) in [
            (1, 4, 3),
            (3, 4, 3),
            (4, 8, 7),
            (7, 8, 7),
            (8, 16, 14),
            (14, 16, 14),
            (15, 32, 28),
            (28, 32, 28),
            (29, 64, 56),
            (56, 64, 56),
            (57, 128, 112),
        ] {
            assert_eq!(object_members_bytes(len), object(buckets, capacity), "{len} members");
        }
        assert_eq!(object_members_bytes(usize::MAX), usize::MAX, "saturated, not wrapped");
    }
}
