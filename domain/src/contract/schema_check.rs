//! JSON Schema (2020-12) compilation and instance validation, with findings that name the field
//! and the rule. Compiled validators are cached by the application; this module stays pure.

use serde_json::Value;

use super::budgets::{SchemaGraph, measure_schema};
use super::light_check::LightBound;
use super::validation_work::check_validation_work;
use crate::budget::BudgetExceeded;
use crate::text::MESSAGE_MAX_CHARS;

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

/// The most a compiled pattern may take, in bytes, in the `regex` engine's terms: its program
/// (`size_limit`) and, apart, the cache of its lazy DFA (`dfa_size_limit`). The engine's defaults
/// (10 MiB and 2 MiB) let a 1.1 KB contract of 20 patterns such as `\p{L}{200}x` take 200 MB.
/// Ordinary patterns (an email, a UUID, a date, `^\p{L}{2,}\s\p{L}{2,}$`) take a few KiB to
/// 170 KiB; a counted repetition of a whole Unicode class (`\p{L}{200}` inside a longer pattern)
/// takes megabytes, where `^\p{L}+$` and `maxLength` say the same for a few KiB.
pub const PATTERN_COMPILED_BYTES: usize = 256 * 1024;

/// Violations listed at most for one value.
pub const MAX_LISTED_VIOLATIONS: usize = 100;

/// The most `validation_work` steps of a value whose violations are all looked for (then the
/// first [`MAX_LISTED_VIOLATIONS`] listed). The validator gathers every violation before handing
/// out the first, about 350 bytes each, and a step can make one: 900,000 of them (100 `$ref`s to
/// a `required` list of 9,000 names, 11 bytes of props) held 320 MB for 1.8 s. A costlier value
/// is checked up to its first violation only, which the validator finds without gathering.
const LISTED_WORK: usize = 20_000;

/// The violations of one value: the first ones in document order, and whether the validator
/// stopped before looking for all of them (more than [`MAX_LISTED_VIOLATIONS`] were found, or
/// the value was too costly to look past its first). Reads as the slice of those listed.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Violations {
    listed: Vec<SchemaViolation>,
    more_left_out: bool,
}

impl Violations {
    /// One violation, the whole answer (a schema that does not compile, a deadline).
    pub fn one(violation: SchemaViolation) -> Self {
        Self {
            listed: vec![violation],
            more_left_out: false,
        }
    }

    /// The first of `found`, up to [`MAX_LISTED_VIOLATIONS`]; reads one more to know whether
    /// any was left out.
    fn first_of(found: impl Iterator<Item = SchemaViolation>) -> Self {
        let mut listed: Vec<SchemaViolation> = found.take(MAX_LISTED_VIOLATIONS + 1).collect();
        let more_left_out = listed.len() > MAX_LISTED_VIOLATIONS;
        listed.truncate(MAX_LISTED_VIOLATIONS);
        Self { listed, more_left_out }
    }

    /// Whether the validator stopped before it had looked for every violation: there may be
    /// more than are listed.
    pub fn more_left_out(&self) -> bool {
        self.more_left_out
    }
}

impl std::ops::Deref for Violations {
    type Target = [SchemaViolation];

    fn deref(&self) -> &Self::Target {
        &self.listed
    }
}

impl IntoIterator for Violations {
    type Item = SchemaViolation;
    type IntoIter = std::vec::IntoIter<SchemaViolation>;

    fn into_iter(self) -> Self::IntoIter {
        self.listed.into_iter()
    }
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
/// pattern with lookaround or a backreference does not compile, nor one that would take more
/// than [`PATTERN_COMPILED_BYTES`] (docs/budgets.md).
pub fn compile_schema(schema: &Value) -> Result<CompiledSchema, SchemaCompileError> {
    let graph = measure_schema(schema)?;
    let patterns = jsonschema::PatternOptions::regex()
        .size_limit(PATTERN_COMPILED_BYTES)
        .dfa_size_limit(PATTERN_COMPILED_BYTES);
    let validator = jsonschema::draft202012::options()
        .should_validate_formats(true)
        .with_pattern_options(patterns)
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
/// lacks, or one too large compiled. The engine's own parser says which (lookaround, a
/// backreference, or a syntax error), and the engine itself whether it is too large.
fn why_not_compiled(error: &jsonschema::ValidationError) -> String {
    let (jsonschema::error::ValidationErrorKind::Format { format }, Value::String(pattern)) =
        (error.kind(), error.instance().as_ref())
    else {
        return error.to_string();
    };
    if format != "regex" {
        return error.to_string();
    }
    let at = error.schema_path();
    if let Err(refused) = regex_syntax::ast::parse::Parser::new().parse(pattern) {
        return format!("the pattern {pattern:?} at {at} cannot be run: {}", refused.kind());
    }
    if is_too_large(pattern) {
        return format!(
            "the pattern {pattern:?} at {at} is too large: compiled, it would take more than {PATTERN_COMPILED_BYTES} bytes (a counted repetition of a large character class, such as `\\p{{L}}{{200}}`, is the usual cause: match the class with `+` and bound the length with `maxLength`)"
        );
    }
    error.to_string()
}

/// Whether `pattern`, as jsonschema hands it to the `regex` engine, compiles to more than
/// [`PATTERN_COMPILED_BYTES`]. Only asked of a pattern jsonschema refused: compiling it again up
/// to the limit costs no more than the refused attempt did.
fn is_too_large(pattern: &str) -> bool {
    let Ok(translated) = jsonschema_regex::to_rust_regex(pattern) else {
        return false;
    };
    matches!(
        regex::RegexBuilder::new(&translated)
            .size_limit(PATTERN_COMPILED_BYTES)
            .dfa_size_limit(PATTERN_COMPILED_BYTES)
            .build(),
        Err(regex::Error::CompiledTooBig(_))
    )
}

impl CompiledSchema {
    /// The size of the schema it was compiled from, as compact JSON.
    pub fn schema_bytes(&self) -> usize {
        self.light.schema_bytes()
    }

    /// What a cache weighs it by: its size, which bounds its validator tree, and for each
    /// pattern what it may take compiled, [`PATTERN_COMPILED_BYTES`]: 20 patterns of a 1.1 KB
    /// schema weigh 5 MiB, not 1.1 KB. (Measured: 64 patterns of 172 KiB compiled, then matched,
    /// grew the server by 15 MB, 0.9 times their weight; a pattern's matching cache grows up to
    /// as much again only over many distinct strings.)
    pub fn weight_bytes(&self) -> usize {
        self.graph
            .patterns
            .saturating_mul(PATTERN_COMPILED_BYTES)
            .saturating_add(self.schema_bytes())
    }

    /// The violations of `instance` (at most [`MAX_LISTED_VIOLATIONS`], in document order; only
    /// the first for a value of more than [`LISTED_WORK`] steps); a value whose validation would
    /// be over the `validation_work` budget is not validated and answers that as its one violation.
    pub fn violations(&self, instance: &Value) -> Violations {
        match check_validation_work(&self.graph, instance) {
            Err(over) => Violations::one(SchemaViolation {
                path: over.path.clone(),
                message: format!("not validated: {over}"),
            }),
            Ok(work) if work <= LISTED_WORK => self.found(instance),
            Ok(_) => match self.validator.validate(instance) {
                Ok(()) => Violations::default(),
                Err(first) => Violations {
                    listed: vec![violation(&first)],
                    more_left_out: true,
                },
            },
        }
    }

    /// [`Self::violations`] when the validation is light enough to run where the caller is (an
    /// async worker) instead of through the CPU gate (`light_check.rs`: no regular expression,
    /// a small value, few applications of a small schema). `None` when it is not.
    pub fn light_violations(&self, instance: &Value) -> Option<Violations> {
        // Light work is far within the `validation_work` budget: no need to count it again.
        self.light.admits(&self.graph, instance).then(|| self.found(instance))
    }

    /// Every violation, the first of them listed: light work and work up to [`LISTED_WORK`] only.
    fn found(&self, instance: &Value) -> Violations {
        Violations::first_of(self.validator.iter_errors(instance).map(|e| violation(&e)))
    }

    /// Whether `instance` matches; a value over the `validation_work` budget does not.
    pub fn is_valid(&self, instance: &Value) -> bool {
        check_validation_work(&self.graph, instance).is_ok() && self.validator.is_valid(instance)
    }
}

fn violation(error: &jsonschema::ValidationError) -> SchemaViolation {
    SchemaViolation {
        path: error.instance_path().to_string(),
        message: bounded_display(error),
    }
}

/// `shown` written up to [`MESSAGE_MAX_CHARS`] characters, then `…`: a violation's message quotes
/// the value it is about, which may be a string of megabytes, and each of the hundred listed may
/// quote the same one. Writing stops there instead of writing it all and cutting it.
fn bounded_display(shown: &impl std::fmt::Display) -> String {
    struct Bounded {
        text: String,
        chars_left: usize,
        cut: bool,
    }
    impl std::fmt::Write for Bounded {
        fn write_str(&mut self, part: &str) -> std::fmt::Result {
            match part.char_indices().nth(self.chars_left) {
                None => {
                    self.chars_left -= part.chars().count();
                    self.text.push_str(part);
                    Ok(())
                }
                Some((end, _)) => {
                    self.text.push_str(&part[..end]);
                    self.cut = true;
                    Err(std::fmt::Error)
                }
            }
        }
    }
    let mut out = Bounded {
        text: String::new(),
        chars_left: MESSAGE_MAX_CHARS,
        cut: false,
    };
    // An error here is only the writer refusing more text.
    let _ = std::fmt::Write::write_fmt(&mut out, format_args!("{shown}"));
    if out.cut {
        out.text.push('…');
    }
    out.text
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
    fn ordinary_patterns_compile_and_one_too_large_compiled_is_refused_naming_its_place() {
        for pattern in [
            "^[a-zA-Z0-9._%+-]+@[a-zA-Z0-9.-]+\\.[a-zA-Z]{2,}$",
            "^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$",
            "^\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}(\\.\\d+)?(Z|[+-]\\d{2}:\\d{2})$",
            "^\\p{L}{2,}\\s\\p{L}{2,}$",
            "^[\\p{L}\\p{N} ._-]{1,100}$",
            "^\\w{1,255}$",
        ] {
            let v = compile_schema(&json!({ "type": "string", "pattern": pattern }));
            assert!(v.is_ok(), "{pattern}: {:?}", v.err());
        }
        // The audit's pattern: 8.5 MB compiled, each.
        let costly = "\\p{L}{200}<tag0>";
        for (schema, at) in [
            (
                json!({ "type": "object", "properties": { "name": { "type": "string", "pattern": costly } } }),
                "/properties/name/pattern".to_owned(),
            ),
            (
                json!({ "type": "object", "patternProperties": { costly: {} } }),
                format!("/patternProperties/{costly}"),
            ),
        ] {
            let Err(SchemaCompileError::Invalid(reason)) = compile_schema(&schema) else {
                panic!("{schema} compiled");
            };
            assert_eq!(
                reason,
                format!(
                    "the pattern {costly:?} at {at} is too large: compiled, it would take more than 262144 bytes (a counted repetition of a large character class, such as `\\p{{L}}{{200}}`, is the usual cause: match the class with `+` and bound the length with `maxLength`)"
                )
            );
        }
    }

    #[test]
    fn a_pattern_weighs_what_it_may_take_compiled() {
        let plain = compile_schema(&json!({ "type": "string", "maxLength": 5 })).unwrap();
        assert_eq!(plain.weight_bytes(), plain.schema_bytes());
        let props: serde_json::Map<String, Value> = (0..20)
            .map(|i| {
                (
                    format!("p{i}"),
                    json!({ "type": "string", "pattern": format!("^a{i}$") }),
                )
            })
            .collect();
        let patterned = compile_schema(&json!({ "type": "object", "properties": props })).unwrap();
        assert_eq!(
            patterned.weight_bytes(),
            patterned.schema_bytes() + 20 * PATTERN_COMPILED_BYTES
        );
    }

    #[test]
    fn at_most_a_hundred_violations_are_listed_and_the_rest_are_said_to_be_left_out() {
        let names: Vec<String> = (0..500).map(|i| format!("n{i}")).collect();
        let v = compile_schema(&json!({ "type": "object", "required": names })).unwrap();
        let found = v.violations(&json!({}));
        assert_eq!(found.len(), MAX_LISTED_VIOLATIONS);
        assert!(found.more_left_out());
        assert_eq!(found[0].message, "\"n0\" is a required property");
        assert_eq!(v.light_violations(&json!({})), None, "500 names are not light");
        let exactly: Vec<String> = (0..100).map(|i| format!("n{i}")).collect();
        let v = compile_schema(&json!({ "type": "object", "required": exactly })).unwrap();
        let found = v.violations(&json!({}));
        assert_eq!((found.len(), found.more_left_out()), (100, false));
    }

    #[test]
    fn a_value_costly_to_check_is_checked_up_to_its_first_violation_in_little_memory() {
        // 900,000 violations of 11 bytes within the `validation_work` budget: gathered, they held
        // 320 MB for 1.8 s.
        let names: Vec<String> = (0..9_000).map(|i| format!("n{i}")).collect();
        let v = compile_schema(&json!({
            "$defs": { "req": { "required": names } },
            "type": "object",
            "properties": { "a": { "type": "array", "items": { "allOf": vec![json!({ "$ref": "#/$defs/req" }); 100] } } }
        }))
        .unwrap();
        let props = json!({ "a": [{}] });
        let mut found = Violations::default();
        let peak = allocation_counter::measure(|| found = v.violations(&props)).bytes_max;
        assert!(peak < 4 << 20, "{peak} bytes held at once");
        assert_eq!(found.len(), 1);
        assert!(found.more_left_out());
        assert_eq!(
            (found[0].path.as_str(), found[0].message.as_str()),
            ("/a/0", "\"n0\" is a required property")
        );
        assert!(!v.is_valid(&props));
        assert!(v.violations(&json!({ "a": [] })).is_empty());
    }

    #[test]
    fn a_violation_quotes_at_most_a_messages_length_of_its_value() {
        let v = compile_schema(&json!({ "allOf": vec![json!({ "type": "integer" }); 200] })).unwrap();
        let long = "x".repeat(1 << 20);
        let found = v.violations(&json!(long));
        assert_eq!((found.len(), found.more_left_out()), (MAX_LISTED_VIOLATIONS, true));
        for violation in found.iter() {
            assert_eq!(violation.message.chars().count(), MESSAGE_MAX_CHARS + 1);
            assert!(violation.message.starts_with("\"xxx") && violation.message.ends_with("x…"));
        }
        let short = v.violations(&json!("abc"));
        assert_eq!(short[0].message, "\"abc\" is not of type \"integer\"");
    }

    #[test]
    fn a_schema_over_budget_is_not_compiled() {
        let cycle = json!({ "$defs": { "a": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" });
        assert!(matches!(compile_schema(&cycle), Err(SchemaCompileError::OverBudget(_))));
    }
}
