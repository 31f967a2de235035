//! The budget walks hold about their input's bytes, whatever its shape: a long key above many
//! members or subschemas once made every place below it carry the key again (a 2 MiB key over a
//! million items asked for terabytes before any budget was counted).

use serde_json::{Value, json};

use super::budgets::{check_schema_budgets, measure_schema};
use super::validation_work::check_validation_work;

/// A key of 16 KiB of `/` (32 KiB once escaped in a JSON Pointer).
fn long_key() -> String {
    "/".repeat(16 * 1024)
}

/// The most bytes `run` held at once on this thread.
fn peak_bytes(run: impl FnOnce()) -> u64 {
    allocation_counter::measure(run).bytes_max
}

/// Sixteen times the input's JSON and 512 bytes per place the walk reaches (its entry in the
/// walk's lists and maps): a sixtieth of one copy of the key per place, which the walks held.
fn bound(input: &Value) -> u64 {
    16 * input.to_string().len() as u64 + 512 * PLACES
}

/// Items (or subschemas) under the long key.
const PLACES: u64 = 1000;

#[test]
fn the_shape_walk_holds_no_copy_of_a_long_key_per_item() {
    let schema = json!({ "type": "object", long_key(): vec![0; PLACES as usize] });
    let peak = peak_bytes(|| check_schema_budgets(&schema).expect("within the budgets"));
    assert!(peak < bound(&schema), "{peak} bytes held at once");
}

#[test]
fn the_subschema_graph_holds_no_copy_of_a_long_key_per_subschema() {
    let items: Vec<Value> = (0..PLACES).map(|_| json!({})).collect();
    let schema = json!({ "type": "object", "properties": { long_key(): { "type": "array", "prefixItems": items } } });
    let peak = peak_bytes(|| check_schema_budgets(&schema).expect("within the budgets"));
    assert!(peak < bound(&schema), "{peak} bytes held at once");
}

#[test]
fn the_validation_work_count_holds_no_copy_of_a_long_member_name_per_item() {
    let schema = json!({ "type": "object", "additionalProperties": { "type": "array", "items": {} } });
    let graph = measure_schema(&schema).expect("within the budgets");
    let props = json!({ long_key(): vec![0; PLACES as usize] });
    let peak = peak_bytes(|| {
        check_validation_work(&graph, &props).expect("within the budget");
    });
    assert!(peak < bound(&props), "{peak} bytes held at once");
}
