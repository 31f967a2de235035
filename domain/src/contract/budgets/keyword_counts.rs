//! What single keywords of a subschema count: the names and values it goes through on each
//! application (its weight in `validation_work`), and its regular expressions against the
//! contract's `contract_patterns` budget.

use serde_json::{Map, Value};

use super::{escape, limit};
use crate::budget::{Budget, BudgetExceeded};

/// What one application of a subschema weighs (see [`super::SchemaGraph::weights`]).
pub(super) fn application_weight(map: &Map<String, Value>) -> usize {
    let names = |key: &str| map.get(key).and_then(Value::as_array).map_or(0, Vec::len);
    let values = |key: &str| map.get(key).map_or(0, json_values);
    1usize
        .saturating_add(names("required"))
        .saturating_add(values("enum"))
        .saturating_add(values("const"))
}

/// JSON values in `value`, itself included; bounded by the `schema_nodes` budget checked before.
fn json_values(value: &Value) -> usize {
    match value {
        Value::Array(items) => 1 + items.iter().map(json_values).sum::<usize>(),
        Value::Object(map) => 1 + map.values().map(json_values).sum::<usize>(),
        _ => 1,
    }
}

/// The regular expressions (`pattern` values, `patternProperties` keys) of one schema, counted
/// against what is left of the contract's `contract_patterns` budget.
#[derive(Debug)]
pub(super) struct PatternCount {
    counted: usize,
    /// How many more the contract's budget allows.
    left: usize,
}

impl PatternCount {
    pub(super) fn within(left: usize) -> Self {
        Self { counted: 0, left }
    }

    pub(super) fn counted(&self) -> usize {
        self.counted
    }

    /// Counts the regular expressions of one subschema, whose JSON Pointer `pointer` gives; a
    /// refusal names the first one past the budget.
    pub(super) fn count(
        &mut self,
        map: &Map<String, Value>,
        pointer: impl FnOnce() -> String,
    ) -> Result<(), BudgetExceeded> {
        let keyed = map
            .get("patternProperties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten();
        let places = map
            .get("pattern")
            .filter(|p| p.is_string())
            .map(|_| vec!["pattern".to_owned()])
            .into_iter()
            .flatten()
            .chain(keyed.map(|(key, _)| format!("patternProperties/{}", escape(key))));
        for place in places {
            if self.left == 0 {
                let max = limit(Budget::ContractPatterns);
                return Err(BudgetExceeded::new(
                    Budget::ContractPatterns,
                    format!("{}/{place}", pointer()),
                    format!("more than {max}"),
                ));
            }
            self.left -= 1;
            self.counted += 1;
        }
        Ok(())
    }
}
