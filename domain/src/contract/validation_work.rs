//! The `validation_work` budget: how many steps validating one value takes, counted on the
//! schema's graph before the validator runs: each subschema application, weighed by what its
//! `required`, `enum` and `const` make it go through (`SchemaGraph::weights`). The per-value budgets
//! (`schema_expansion`) cannot see a schema whose `allOf` branches each step into the same member
//! and `$ref` the schema again: the work doubles at every level of the value, 2^40 at depth 40.
//! Counting follows the value, so it stops as soon as the count passes the budget.

use std::collections::HashMap;

use serde_json::Value;

use super::budgets::{SchemaGraph, Step, escape, limit};
use super::pointer_trail::{At, Trail};
use crate::budget::{Budget, BudgetExceeded};

/// Subschemas to apply at one place in the value, with how many times each applies.
type Applied = HashMap<usize, usize>;

/// Checks that validating `instance` against the schema of `graph` stays within the budget and
/// answers its steps; the path of a refusal is the JSON Pointer into the value where the count
/// passed it.
pub(super) fn check_validation_work(graph: &SchemaGraph, instance: &Value) -> Result<usize, BudgetExceeded> {
    check_work_within(graph, instance, limit(Budget::ValidationWork))
}

/// [`check_validation_work`] against `max` steps instead of the budget; answers the count.
pub(super) fn check_work_within(graph: &SchemaGraph, instance: &Value, max: usize) -> Result<usize, BudgetExceeded> {
    let mut work = 0usize;
    // Pointers are spelled out only for a refusal: a value is its parent's place and its own
    // token, and it gets a place of its own only when its members are stepped into.
    let mut trail = Trail::new();
    let mut pending: Vec<(&Value, At, Option<Token<'_>>, Applied)> =
        vec![(instance, Trail::root(), None, HashMap::from([(0, 1)]))];
    while let Some((value, parent, token, applied)) = pending.pop() {
        let mut members: HashMap<Token<'_>, (&Value, Applied)> = HashMap::new();
        let mut stack: Vec<(usize, usize)> = applied.into_iter().collect();
        while let Some((node, times)) = stack.pop() {
            work = work.saturating_add(times.saturating_mul(graph.weights[node]));
            if work > max {
                let mut pointer = trail.pointer(parent);
                if let Some(token) = token {
                    pointer.push('/');
                    pointer.push_str(&escape(&token.text()));
                }
                return Err(BudgetExceeded::new(
                    Budget::ValidationWork,
                    pointer,
                    format!("more than {max} steps"),
                ));
            }
            stack.extend(graph.in_place[node].iter().map(|edge| (edge.to, times)));
            for (step, child) in &graph.descending[node] {
                for (token, member) in members_of(value, step) {
                    let entry = members.entry(token).or_insert_with(|| (member, HashMap::new()));
                    let count = entry.1.entry(*child).or_insert(0);
                    *count = count.saturating_add(times);
                }
            }
        }
        if members.is_empty() {
            continue;
        }
        let here = match token {
            None => parent,
            Some(token) => trail.child(parent, &token.text()),
        };
        for (token, (member, applied)) in members {
            pending.push((member, here, Some(token), applied));
        }
    }
    Ok(work)
}

/// A member's name or an item's index, borrowed from the value.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Token<'v> {
    Key(&'v str),
    Index(usize),
}

impl Token<'_> {
    /// The token as a JSON Pointer writes it, before escaping.
    fn text(&self) -> std::borrow::Cow<'_, str> {
        match self {
            Self::Key(key) => (*key).into(),
            Self::Index(i) => i.to_string().into(),
        }
    }
}

/// The members or items of `value` a descending subschema applies to, with their tokens.
fn members_of<'v>(value: &'v Value, step: &'v Step) -> Vec<(Token<'v>, &'v Value)> {
    match (step, value) {
        (Step::Property(name), Value::Object(map)) => map
            .get(name)
            .map(|v| (Token::Key(name.as_str()), v))
            .into_iter()
            .collect(),
        (Step::AnyProperty, Value::Object(map)) => map.iter().map(|(k, v)| (Token::Key(k.as_str()), v)).collect(),
        (Step::Item(i), Value::Array(items)) => items.get(*i).map(|v| (Token::Index(*i), v)).into_iter().collect(),
        (Step::AnyItem, Value::Array(items)) => items.iter().enumerate().map(|(i, v)| (Token::Index(i), v)).collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::contract::budgets::measure_schema;

    fn work(schema: &Value, instance: &Value) -> Result<usize, BudgetExceeded> {
        check_validation_work(&measure_schema(schema).expect("within the schema budgets"), instance)
    }

    /// `{ a: { a: ... } }`, `depth` levels.
    fn nested(depth: usize) -> Value {
        (0..depth).fold(json!(1), |inner, _| json!({ "a": inner }))
    }

    #[test]
    fn a_schema_doubling_at_every_level_of_the_value_is_refused() {
        let doubling = json!({
            "$defs": { "n": { "allOf": [
                { "properties": { "a": { "$ref": "#/$defs/n" } } },
                { "properties": { "a": { "$ref": "#/$defs/n" } } } ] } },
            "$ref": "#/$defs/n"
        });
        assert!(work(&doubling, &nested(10)).is_ok());
        let e = work(&doubling, &nested(40)).unwrap_err();
        assert_eq!(e.budget, Budget::ValidationWork);
        assert!(e.path.starts_with("/a/a/a/a/a/a/a/a/a/a/a/a/a/a/a"), "{e}");
    }

    #[test]
    fn ordinary_values_are_far_below_the_budget() {
        let rows = json!({
            "type": "object",
            "properties": { "rows": { "type": "array", "items": { "$ref": "#/$defs/row" } } },
            "$defs": { "row": { "type": "object", "properties": {
                "id": { "type": "integer" }, "name": { "type": "string" }, "tags": { "type": "array", "items": { "type": "string" } } } } }
        });
        let value = json!({ "rows": (0..5_000).map(|i| json!({ "id": i, "name": "x", "tags": ["a", "b"] })).collect::<Vec<_>>() });
        assert!(work(&rows, &value).is_ok());
    }

    #[test]
    fn an_application_weighs_what_its_required_list_goes_through() {
        // The audit's amplifier: 450 `$ref`s to a `required` list of 9,000 names, applied to one
        // empty object, made 4,050,000 violations (a 12 MB answer to 11 bytes of props).
        let names: Vec<String> = (0..9_000).map(|i| format!("n{i}")).collect();
        let schema = json!({
            "$defs": { "req": { "required": names } },
            "type": "object",
            "properties": { "a": { "type": "array", "items": { "allOf": vec![json!({ "$ref": "#/$defs/req" }); 450] } } }
        });
        let e = work(&schema, &json!({ "a": [{}] })).unwrap_err();
        assert_eq!((e.budget, e.path.as_str()), (Budget::ValidationWork, "/a/0"));
        assert_eq!(e.found, "more than 1000000 steps");
        // The same list applied a few times is ordinary.
        let few = json!({ "type": "array", "items": { "$ref": "#/$defs/req" }, "$defs": { "req": { "required": ["a", "b"] } } });
        // The array, then each item: 1 + 3 x (1 + 1 + 2).
        assert_eq!(work(&few, &json!([{}, {}, {}])), Ok(13));
    }

    #[test]
    fn every_member_counts_for_schemas_that_apply_to_all_members() {
        let schema = json!({ "additionalProperties": { "allOf": [{ "type": "string" }, { "minLength": 1 }] } });
        let wide: serde_json::Map<String, Value> = (0..400_000).map(|i| (format!("k{i}"), json!("v"))).collect();
        let e = work(&schema, &Value::Object(wide)).unwrap_err();
        assert_eq!(e.budget, Budget::ValidationWork);
    }
}
