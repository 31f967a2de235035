//! JSON Schema (2020-12) compilation and instance validation, with findings that name the field
//! and the rule. Compiled validators are cached by the application; this module stays pure.

use serde_json::Value;

use super::budgets::{SchemaGraph, measure_schema};
use super::light_check::LightBound;
use super::validation_work::check_validation_work;
use crate::budget::BudgetExceeded;

/// One way an instance breaks its schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaViolation {
    /// JSON Pointer into the instance (`/items/0/qty`); empty for the root.
    pub path: String,
    /// What rule was broken, in words.
    pub message: String,
}

/// Why a schema was not compiled.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaCompileError {
    /// Refused before compiling: compiling or validating it could exhaust the stack or the CPU.
    #[error(transparent)]
    OverBudget(#[from] BudgetExceeded),
    /// Not a valid JSON Schema 2020-12, or one with a pattern the linear-time engine cannot run.
    #[error("{0}")]
    Invalid(String),
}

/// A compiled schema, with the graph of its subschemas that bounds the work of each validation.
#[derive(Debug)]
pub struct CompiledSchema {
    validator: jsonschema::Validator,
    graph: SchemaGraph,
    /// What its validations may cost: which of them run where the caller is.
    light: LightBound,
}

/// Compiles `schema` as JSON Schema 2020-12 with format assertions on, once it is within the
/// complexity budgets: every compile goes through here, so a stored schema from before the
/// budgets is refused as well. Patterns run on the `regex` crate's engine, in time linear in
/// the string: a backtracking engine let one lookahead pattern hold a CPU slot for minutes over
/// a few megabytes of strings, and no budget can count a backtracker's steps beforehand. A
/// pattern with lookaround or a backreference does not compile (docs/budgets.md).
pub fn compile_schema(schema: &Value) -> Result<CompiledSchema, SchemaCompileError> {
    let graph = measure_schema(schema)?;
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .with_pattern_options(jsonschema::PatternOptions::regex())
        .build(schema)
        .map_err(|e| SchemaCompileError::Invalid(why_not_compiled(&e)))?;
    Ok(CompiledSchema {
        validator,
        graph,
        light: LightBound::of(schema),
    })
}

/// What `error` says, except for a pattern: jsonschema names one it cannot compile only as "not
/// a regex", though the pattern may be a valid ECMA-262 one that uses what the linear-time engine
/// lacks. The engine's own parser says which (lookaround, a backreference, or a syntax error).
fn why_not_compiled(error: &jsonschema::ValidationError) -> String {
    if let (jsonschema::error::ValidationErrorKind::Format { format }, Value::String(pattern)) =
        (error.kind(), error.instance().as_ref())
        && format == "regex"
        && let Err(refused) = regex_syntax::ast::parse::Parser::new().parse(pattern)
    {
        return format!(
            "the pattern {pattern:?} at {} cannot be run: {}",
            error.schema_path(),
            refused.kind()
        );
    }
    error.to_string()
}

impl CompiledSchema {
    /// The size of the schema it was compiled from, as compact JSON: what a cache weighs it by.
    pub fn schema_bytes(&self) -> usize {
        self.light.schema_bytes()
    }

    /// Every violation of `instance`, in document order; a value whose validation would be over
    /// the `validation_work` budget is not validated and answers that as its one violation.
    pub fn violations(&self, instance: &Value) -> Vec<SchemaViolation> {
        if let Err(over) = check_validation_work(&self.graph, instance) {
            return vec![SchemaViolation {
                path: over.path.clone(),
                message: format!("not validated: {over}"),
            }];
        }
        self.found(instance)
    }

    /// [`Self::violations`] when the validation is light enough to run where the caller is (an
    /// async worker) instead of through the CPU gate (`light_check.rs`: no regular expression,
    /// a small value, few applications of a small schema). `None` when it is not.
    pub fn light_violations(&self, instance: &Value) -> Option<Vec<SchemaViolation>> {
        // Light work is far within the `validation_work` budget: no need to count it again.
        self.light.admits(&self.graph, instance).then(|| self.found(instance))
    }

    fn found(&self, instance: &Value) -> Vec<SchemaViolation> {
        self.validator
            .iter_errors(instance)
            .map(|e| SchemaViolation {
                path: e.instance_path().to_string(),
                message: e.to_string(),
            })
            .collect()
    }

    /// Whether `instance` matches; a value over the `validation_work` budget does not.
    pub fn is_valid(&self, instance: &Value) -> bool {
        check_validation_work(&self.graph, instance).is_ok() && self.validator.is_valid(instance)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn violations_name_the_path_and_the_rule() {
        let v = compile_schema(&json!({
            "type": "object",
            "properties": { "items": { "type": "array", "items": { "type": "object",
                "properties": { "qty": { "type": "integer" } } } } }
        }))
        .unwrap();
        let found = v.violations(&json!({ "items": [{ "qty": "three" }] }));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, "/items/0/qty");
        assert!(found[0].message.contains("integer"), "{}", found[0].message);
    }

    #[test]
    fn formats_are_asserted() {
        let v = compile_schema(&json!({ "type": "string", "format": "date-time" })).unwrap();
        assert!(v.violations(&json!("2026-11-25T10:00:00Z")).is_empty());
        assert_eq!(v.violations(&json!("yesterday")).len(), 1);
    }

    #[test]
    fn a_small_value_of_a_schema_without_regexes_is_checked_lightly_with_the_same_findings() {
        let v = compile_schema(&json!({
            "type": "object",
            "properties": { "qty": { "type": "integer", "minimum": 1 }, "when": { "format": "date-time" } }
        }))
        .unwrap();
        for value in [json!({ "qty": 2 }), json!({ "qty": 0, "when": "yesterday" })] {
            assert_eq!(v.light_violations(&value), Some(v.violations(&value)));
        }
        assert_eq!(
            v.light_violations(&json!({ "qty": 0 })).map(|found| found.len()),
            Some(1)
        );
    }

    #[test]
    fn an_invalid_schema_does_not_compile() {
        assert!(matches!(
            compile_schema(&json!({ "type": "not-a-type" })),
            Err(SchemaCompileError::Invalid(_))
        ));
    }

    #[test]
    fn patterns_match_and_one_that_needs_backtracking_does_not_compile() {
        let v = compile_schema(&json!({ "type": "string", "pattern": "^[a-z]+-\\d{2}$" })).unwrap();
        assert!(v.violations(&json!("order-12")).is_empty());
        assert_eq!(v.violations(&json!("order-123")).len(), 1);
        for (pattern, why) in [
            ("^(?:a|(?=a)a)*$", "look-around"),
            ("(?<!x)y", "look-around"),
            ("^(a)\\1$", "backreferences are not supported"),
        ] {
            let schema = json!({ "type": "object", "properties": { "s": { "pattern": pattern } } });
            let Err(SchemaCompileError::Invalid(reason)) = compile_schema(&schema) else {
                panic!("{pattern} compiled");
            };
            assert!(
                reason.starts_with(&format!(
                    "the pattern {pattern:?} at /properties/s/pattern cannot be run: "
                )) && reason.contains(why),
                "{pattern}: {reason}"
            );
            let keyed = json!({ "type": "object", "patternProperties": { pattern: { "type": "string" } } });
            assert!(
                matches!(compile_schema(&keyed), Err(SchemaCompileError::Invalid(_))),
                "{pattern} as a key"
            );
        }
    }

    #[test]
    fn a_schema_over_budget_is_not_compiled() {
        let cycle = json!({ "$defs": { "a": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" });
        assert!(matches!(compile_schema(&cycle), Err(SchemaCompileError::OverBudget(_))));
    }
}
