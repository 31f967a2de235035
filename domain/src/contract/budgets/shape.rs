//! The size of a schema as a JSON document: its values and their nesting.

use serde_json::Value;

use super::limit;
use crate::budget::{Budget, BudgetExceeded};
use crate::contract::pointer_trail::{At, Trail};

/// Node count and nesting depth, walked without recursion (the schema is not yet known to be
/// shallow).
pub(super) fn check_shape(schema: &Value) -> Result<(), BudgetExceeded> {
    let (max_nodes, max_depth) = (limit(Budget::SchemaNodes), limit(Budget::SchemaDepth));
    let mut nodes = 0usize;
    let mut trail = Trail::new();
    let mut pending: Vec<(&Value, usize, At)> = vec![(schema, 0, Trail::root())];
    while let Some((value, depth, at)) = pending.pop() {
        nodes += 1;
        if nodes > max_nodes {
            return Err(BudgetExceeded::new(
                Budget::SchemaNodes,
                "",
                format!("more than {max_nodes} values"),
            ));
        }
        if depth > max_depth {
            return Err(BudgetExceeded::new(
                Budget::SchemaDepth,
                trail.pointer(at),
                format!("nested more than {max_depth} deep"),
            ));
        }
        match value {
            Value::Object(map) => {
                for (key, member) in map {
                    pending.push((member, depth + 1, trail.child(at, key)));
                }
            }
            Value::Array(items) => {
                for (i, item) in items.iter().enumerate() {
                    pending.push((item, depth + 1, trail.child(at, &i.to_string())));
                }
            }
            _ => {}
        }
    }
    Ok(())
}
