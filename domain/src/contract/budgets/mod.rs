//! The complexity budgets of contract schemas (see [`crate::budget`]), checked before a schema is
//! compiled or anything is validated against it: at negotiation, and again whenever a stored
//! contract's schema is compiled, so a contract stored before the budgets existed is refused
//! instead of run.
//!
//! `$ref`s are followed as the validator follows them. A reference reached without descending
//! into the value (`$ref`, `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`,
//! `dependentSchemas`) applies at the same value, so chains and fan-out multiply there: those are
//! counted (`ref_depth`, `schema_expansion`) and a cycle among them is refused. A reference behind
//! `properties`, `items` and the like moves one level down the value, whose nesting the JSON
//! parser already bounds, so recursive schemas (a tree of nodes) stay allowed.

mod in_place_paths;
mod keyword_counts;
mod schema_graph;
mod shape;
#[cfg(test)]
mod tests;

use serde_json::Value;

pub(super) use schema_graph::{SchemaGraph, Step};
use shape::check_shape;

use crate::budget::{Budget, BudgetExceeded};
use crate::text::json_len;

/// Checks a draft or stored contract: its size, then every schema it declares. Paths are JSON
/// Pointers from the contract's root (`/propsSpec/$defs/l13`).
pub fn check_contract_budgets(contract: &Value) -> Result<(), BudgetExceeded> {
    let bytes = json_len(contract);
    let max_bytes = limit(Budget::ContractBytes);
    if bytes > max_bytes {
        return Err(BudgetExceeded::new(Budget::ContractBytes, "", format!("{bytes} bytes")));
    }
    // The regular expressions of all its schemas together: each costs memory once compiled.
    let mut patterns_left = limit(Budget::ContractPatterns);
    for (path, schema) in contract_schemas(contract) {
        let graph = measure_schema_within(schema, patterns_left).map_err(|e| e.under(&path))?;
        patterns_left -= graph.patterns;
    }
    Ok(())
}

/// Checks one schema; paths are JSON Pointers from the schema's root.
pub fn check_schema_budgets(schema: &Value) -> Result<(), BudgetExceeded> {
    measure_schema(schema).map(|_| ())
}

/// Checks one schema and returns its graph of subschemas, which bounds validation work later. A
/// schema compiled on its own (a stored contract's) holds at most a whole contract's patterns.
pub(super) fn measure_schema(schema: &Value) -> Result<SchemaGraph, BudgetExceeded> {
    measure_schema_within(schema, limit(Budget::ContractPatterns))
}

/// [`measure_schema`] with `patterns_left` regular expressions left in the contract's budget.
fn measure_schema_within(schema: &Value, patterns_left: usize) -> Result<SchemaGraph, BudgetExceeded> {
    check_shape(schema)?;
    let graph = SchemaGraph::build(schema, patterns_left)?;
    graph.check_in_place_paths()?;
    Ok(graph)
}

/// Every schema a contract declares, with its JSON Pointer.
fn contract_schemas(contract: &Value) -> Vec<(String, &Value)> {
    let mut found = Vec::new();
    if let Some(props) = contract.get("propsSpec") {
        found.push(("/propsSpec".to_owned(), props));
    }
    for section in ["actionSpec", "streamSpec", "contextSpec"] {
        let Some(entries) = contract.get(section).and_then(Value::as_object) else {
            continue;
        };
        for (name, entry) in entries {
            if let Some(schema) = entry.get("schema") {
                found.push((format!("/{section}/{}/schema", escape(name)), schema));
            }
        }
    }
    found
}

pub(super) fn limit(budget: Budget) -> usize {
    budget.limit().unwrap_or(usize::MAX)
}

/// JSON Pointer escaping of one reference token (RFC 6901).
pub(super) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}
