//! Complexity budgets for untrusted input that the server compiles or validates: agents' contract
//! schemas and component code. A budget is checked before the costly step starts, so an input built
//! to exhaust the stack or the CPU (a `$ref` chain 12,500 hops long, an `allOf` tree that doubles
//! 41 times, TSX nested 2,000 deep) is refused with its name and place instead of taking the
//! process down. Every value is documented in docs/budgets.md.

use std::fmt;

/// One budget, with its limit.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Budget {
    /// Bytes of a whole contract, serialized as compact JSON.
    ContractBytes,
    /// JSON values (objects, arrays, strings, numbers, ...) in one schema.
    SchemaNodes,
    /// Nesting of objects and arrays in one schema.
    SchemaDepth,
    /// `$ref` hops followed while checking one value, without descending into it.
    RefDepth,
    /// Subschemas applied to one value through `$ref`, `allOf`, `anyOf`, `oneOf`, `not`,
    /// `if`/`then`/`else` and `dependentSchemas`, counted along every path.
    SchemaExpansion,
    /// A `$ref` must name a subschema of the same document (`#/...` or `#anchor`).
    RefScope,
    /// Regular expressions (`pattern` values, `patternProperties` keys) in a whole contract: each
    /// is compiled for the regex engine, up to a few hundred KiB apiece.
    ContractPatterns,
    /// Subschemas applied while validating one value and everything in it, counted before
    /// validating (a schema that doubles its work at every level of a deep value).
    ValidationWork,
    /// Bytes of a component's TSX source.
    ComponentBytes,
    /// Nesting of a component's syntax tree (expressions, statements, JSX elements).
    ComponentNesting,
    /// Bytes of a render's props, serialized as compact JSON.
    PropsBytes,
}

impl Budget {
    /// Every budget, in the order docs/budgets.md lists them.
    pub const ALL: [Budget; 11] = [
        Budget::ContractBytes,
        Budget::SchemaNodes,
        Budget::SchemaDepth,
        Budget::RefDepth,
        Budget::SchemaExpansion,
        Budget::RefScope,
        Budget::ContractPatterns,
        Budget::ValidationWork,
        Budget::ComponentBytes,
        Budget::ComponentNesting,
        Budget::PropsBytes,
    ];

    /// The stable snake_case name quoted in refusals.
    pub fn name(self) -> &'static str {
        match self {
            Budget::ContractBytes => "contract_bytes",
            Budget::SchemaNodes => "schema_nodes",
            Budget::SchemaDepth => "schema_depth",
            Budget::RefDepth => "ref_depth",
            Budget::SchemaExpansion => "schema_expansion",
            Budget::RefScope => "ref_scope",
            Budget::ContractPatterns => "contract_patterns",
            Budget::ValidationWork => "validation_work",
            Budget::ComponentBytes => "component_bytes",
            Budget::ComponentNesting => "component_nesting",
            Budget::PropsBytes => "props_bytes",
        }
    }

    /// The largest value allowed; `None` for a rule with no number (`ref_scope`).
    pub fn limit(self) -> Option<usize> {
        match self {
            Budget::ContractBytes => Some(256 * 1024),
            Budget::SchemaNodes => Some(10_000),
            Budget::SchemaDepth => Some(64),
            Budget::RefDepth => Some(32),
            Budget::SchemaExpansion => Some(1_000),
            Budget::RefScope => None,
            // Each compiles to at most `PATTERN_COMPILED_BYTES` (schema_check.rs) and its matching
            // cache: 64 of them are tens of MiB at worst, where 20 unbounded ones took 200 MB.
            Budget::ContractPatterns => Some(64),
            // About 0.1 µs each in a debug build: a tenth of a second at most.
            Budget::ValidationWork => Some(1_000_000),
            // The parser recurses once per nesting level, so the source size bounds how deep it
            // can go before the nesting budget is checked; see docs/budgets.md.
            Budget::ComponentBytes => Some(64 * 1024),
            // oxc's parser overflows a 2 MiB stack between 500 and 1,000 nested parentheses in a
            // debug build; 256 is well below and far above what a component needs.
            Budget::ComponentNesting => Some(256),
            // What one request body can carry: a merge patch adds to the props it is applied to,
            // and every read, ack and repaint copies them whole.
            Budget::PropsBytes => Some(4 * 1024 * 1024),
        }
    }

    fn rule(self) -> String {
        let limit = self.limit().unwrap_or_default();
        match self {
            Budget::ContractBytes => format!("a contract is at most {limit} bytes of JSON"),
            Budget::SchemaNodes => format!("a schema has at most {limit} JSON values"),
            Budget::SchemaDepth => format!("a schema nests objects and arrays at most {limit} deep"),
            Budget::RefDepth => format!("at most {limit} `$ref` hops are followed at one value"),
            Budget::SchemaExpansion => format!(
                "at most {limit} subschemas apply to one value through `$ref`, allOf, anyOf, oneOf, not, if/then/else and dependentSchemas"
            ),
            Budget::RefScope => "a `$ref` names a subschema of the same schema (`#/...` or `#anchor`); nested `$id`, `$dynamicRef` and `$recursiveRef` are not accepted".into(),
            Budget::ContractPatterns => format!(
                "a contract's schemas hold at most {limit} regular expressions (`pattern` values and `patternProperties` keys)"
            ),
            Budget::ValidationWork => format!(
                "validating one value does at most {limit} steps: a subschema applied to the value, a member or an item is one step, and one more per name in its `required` and per JSON value in its `enum` and `const`"
            ),
            Budget::ComponentBytes => format!("component code is at most {limit} bytes"),
            Budget::ComponentNesting => format!("component code nests at most {limit} levels deep"),
            Budget::PropsBytes => format!("props are at most {limit} bytes of JSON"),
        }
    }
}

/// An input over one budget: which budget, where, and what was found.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub struct BudgetExceeded {
    pub budget: Budget,
    /// JSON Pointer (into a schema from the contract's root, or into the validated value for
    /// `validation_work`) or `line N` (component code).
    pub path: String,
    /// What was found there ("12,500 hops", "a `$ref` cycle").
    pub found: String,
}

impl BudgetExceeded {
    pub fn new(budget: Budget, path: impl Into<String>, found: impl Into<String>) -> Self {
        Self {
            budget,
            path: path.into(),
            found: found.into(),
        }
    }

    /// The same finding, with `prefix` put before its path (a schema's place in its contract).
    pub fn under(mut self, prefix: &str) -> Self {
        self.path = format!("{prefix}{}", self.path);
        self
    }
}

impl fmt::Display for BudgetExceeded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = if self.path.is_empty() { "/" } else { &self.path };
        write!(
            f,
            "over the `{}` budget at {at}: {} ({})",
            self.budget.name(),
            self.budget.rule(),
            self.found
        )
    }
}

/// Checks the size of component code before it is parsed.
pub fn check_component_bytes(source: &str) -> Result<(), BudgetExceeded> {
    let max = Budget::ComponentBytes.limit().unwrap_or(usize::MAX);
    if source.len() > max {
        return Err(BudgetExceeded::new(
            Budget::ComponentBytes,
            "",
            format!("{} bytes", source.len()),
        ));
    }
    Ok(())
}

/// Checks how deep a parsed component's syntax tree nests (measured by the compiler), before
/// anything walks it again; `line` is where the deepest node starts.
pub fn check_component_nesting(depth: usize, line: u32) -> Result<(), BudgetExceeded> {
    let max = Budget::ComponentNesting.limit().unwrap_or(usize::MAX);
    if depth > max {
        return Err(BudgetExceeded::new(
            Budget::ComponentNesting,
            format!("line {line}"),
            format!("nested {depth} levels deep"),
        ));
    }
    Ok(())
}

/// Checks the size of props (after a merge patch, before they are validated or stored).
pub fn check_props_bytes(props: &serde_json::Value) -> Result<(), BudgetExceeded> {
    let max = Budget::PropsBytes.limit().unwrap_or(usize::MAX);
    match crate::text::json_len_at_most(props, max) {
        Some(_) => Ok(()),
        None => Err(BudgetExceeded::new(
            Budget::PropsBytes,
            "",
            format!("more than {max} bytes"),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn component_code_is_bounded_in_size_and_nesting() {
        assert_eq!(check_component_bytes(&"x".repeat(64 * 1024)), Ok(()));
        let e = check_component_bytes(&"x".repeat(64 * 1024 + 1)).unwrap_err();
        assert_eq!((e.budget, e.found.as_str()), (Budget::ComponentBytes, "65537 bytes"));
        assert_eq!(check_component_nesting(256, 1), Ok(()));
        let e = check_component_nesting(257, 3).unwrap_err();
        assert_eq!(
            e.to_string(),
            "over the `component_nesting` budget at line 3: component code nests at most 256 levels deep (nested 257 levels deep)"
        );
    }

    #[test]
    fn props_are_bounded_in_size() {
        let limit = 4 * 1024 * 1024;
        // `{"t":"..."}` is 8 bytes around the string.
        assert_eq!(
            check_props_bytes(&serde_json::json!({ "t": "x".repeat(limit - 8) })),
            Ok(())
        );
        let e = check_props_bytes(&serde_json::json!({ "t": "x".repeat(limit - 7) })).unwrap_err();
        assert_eq!(
            (e.budget, e.found),
            (Budget::PropsBytes, format!("more than {limit} bytes"))
        );
    }

    #[test]
    fn a_refusal_names_the_budget_the_path_and_the_rule() {
        let e = BudgetExceeded::new(Budget::RefDepth, "/$defs/d33", "33 hops").under("/propsSpec");
        assert_eq!(
            e.to_string(),
            "over the `ref_depth` budget at /propsSpec/$defs/d33: at most 32 `$ref` hops are followed at one value (33 hops)"
        );
    }

    #[test]
    fn names_are_distinct() {
        let mut names: Vec<_> = Budget::ALL.iter().map(|b| b.name()).collect();
        names.sort_unstable();
        names.dedup();
        assert_eq!(names.len(), Budget::ALL.len());
    }
}
