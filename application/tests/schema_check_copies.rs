//! A schema check on a blocking thread takes what it checks, not a copy of it: the HTTP adapter
//! reserves a message's parsed weight for the copies a request holds at once
//! (`parsed_json_budget.rs`), and a tool input may be megabytes.

use serde_json::{Map, Value, json};
use svc_application::services::agent::SchemaCache;
use svc_application::services::cpu_gate::CpuGate;

const MIB: usize = 1 << 20;

#[test]
fn a_checked_value_is_handed_to_the_check_and_back_not_copied() {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let cache = SchemaCache::new(MIB as u64, CpuGate::unbounded());
    // Not compiled before, and a value of 4 MiB: checked on a blocking thread.
    let schema = json!({ "type": "object", "properties": { "text": { "type": "string", "maxLength": 8_000_000 } } });
    let text = "x".repeat(4 * MIB);
    let at = text.as_ptr();
    let value = Value::Object(Map::from_iter([("text".to_owned(), Value::String(text))]));
    let mut checked = None;
    let held = allocation_counter::measure(|| {
        checked = Some(runtime.block_on(cache.check(&schema, value)).unwrap());
    })
    .bytes_max;
    assert!(held < MIB as u64, "the check held {held} bytes on the caller's thread");
    let value = checked.unwrap().expect("valid");
    assert_eq!(
        value["text"].as_str().map(str::as_ptr),
        Some(at),
        "the value it was given"
    );
    // An invalid value: its violations.
    let refused = runtime.block_on(cache.check(&schema, json!({ "text": 1 }))).unwrap();
    assert_eq!(refused.map_err(|violations| violations.len()), Err(1));
}
