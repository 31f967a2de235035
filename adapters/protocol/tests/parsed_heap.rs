//! The parsed-JSON weight (`json_weight::parsed_weight`) and the SQL read cache's weigher
//! (`json_heap::heap_bytes`) against the heap a parse really takes, counted by this test
//! binary's allocator (`allocation_counter`): never below it, and at most half again above it.

use serde_json::Value;
use svc_protocol::json_weight::parsed_weight;

// The SQL adapter's weigher, compiled here as it is (the protocol crate does not depend on it).
#[path = "../../sql/src/json_heap.rs"]
#[allow(dead_code)]
mod json_heap;

/// The heap `text` takes parsed into a `Value`, as the allocator counts it on this thread (what
/// the parse allocated and still holds: its scratch space freed, its arrays' and maps' spare
/// capacity counted), and the value.
fn measured(text: &str) -> (usize, Value) {
    let mut parsed = None;
    let held =
        allocation_counter::measure(|| parsed = Some(serde_json::from_str::<Value>(text).unwrap())).bytes_current;
    (usize::try_from(held).unwrap(), parsed.unwrap())
}

/// The most an estimate may be over the measured heap.
const AT_MOST_OVER: f64 = 1.5;

/// Both estimates of `text` are at least what its parse holds and at most [`AT_MOST_OVER`] times
/// it (an estimate of nothing is nothing).
fn assert_honest(shape: &str, text: &str) {
    let weight = parsed_weight(text.as_bytes()).unwrap();
    let (heap, value) = measured(text);
    let cached = json_heap::heap_bytes(&value);
    for (estimate, name) in [(weight, "parsed_weight"), (cached, "heap_bytes")] {
        assert!(
            estimate >= heap,
            "{shape}: {name} {estimate} is under the {heap} bytes the parse holds"
        );
        assert!(
            estimate as f64 <= AT_MOST_OVER * heap as f64,
            "{shape}: {name} {estimate} is more than {AT_MOST_OVER} times the {heap} bytes the parse holds"
        );
    }
}

fn members(n: usize) -> String {
    let members: Vec<String> = (0..n).map(|i| format!(r#""k{i}":{i}"#)).collect();
    format!("{{{}}}", members.join(","))
}

#[test]
fn an_object_of_small_members_is_weighed_at_least_as_it_is_held() {
    for n in (1..=300).chain([1_000, 4_096, 10_000, 50_000]) {
        assert_honest(&format!("{n} small members"), &members(n));
    }
}

#[test]
fn an_object_of_one_member_is_weighed_at_least_as_it_is_held() {
    assert_honest("one member", r#"{"a":1}"#);
    assert_honest("one member holding a string", r#"{"title":"a card about the weather"}"#);
    assert_honest("empty", "{}");
}

#[test]
fn nested_objects_are_weighed_at_least_as_they_are_held() {
    for depth in [1, 2, 10, 100] {
        let text = format!("{}0{}", r#"{"k":"#.repeat(depth), "}".repeat(depth));
        assert_honest(&format!("{depth} nested"), &text);
    }
    let rows: Vec<String> = (0..2_000)
        .map(|i| format!(r#"{{"id":{i},"name":"row {i}","tags":["a","b"],"meta":{{"x":1.5,"y":null}}}}"#))
        .collect();
    assert_honest("an array of records", &format!("[{}]", rows.join(",")));
    let wide: Vec<String> = (0..50).map(|i| format!(r#""m{i}":{}"#, members(i % 20 + 1))).collect();
    assert_honest("objects of objects", &format!("{{{}}}", wide.join(",")));
}

#[test]
fn a_long_array_of_small_numbers_is_weighed_at_least_as_it_is_held() {
    for n in (1..=300).chain([1_000, 4_096, 4_097, 100_000]) {
        let text = format!("[{}0]", "1,".repeat(n - 1));
        assert_honest(&format!("{n} numbers"), &text);
    }
    assert_honest("empty", "[]");
    let nested: Vec<String> = (0..1_000).map(|i| format!("[{i},{i}.5,-{i}]")).collect();
    assert_honest("arrays of numbers", &format!("[{}]", nested.join(",")));
}

#[test]
fn a_long_string_is_weighed_at_least_as_it_is_held() {
    for len in [1, 100, 65_536, 1 << 20] {
        assert_honest(&format!("{len} bytes"), &format!(r#""{}""#, "x".repeat(len)));
    }
    let escaped = r#"caf\u00e9 \"quoted\"\n"#.repeat(10_000);
    assert_honest("escaped", &format!(r#"["{escaped}"]"#));
    let strings: Vec<String> = (0..1_000)
        .map(|i| format!(r#""{}""#, "s".repeat(i % 64 + 16)))
        .collect();
    assert_honest("an array of strings", &format!("[{}]", strings.join(",")));
}
