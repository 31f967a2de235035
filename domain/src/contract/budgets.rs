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

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};

use serde_json::{Map, Value};

use super::pointer_trail::{At, Trail};
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

/// Node count and nesting depth, walked without recursion (the schema is not yet known to be
/// shallow).
fn check_shape(schema: &Value) -> Result<(), BudgetExceeded> {
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

/// Keywords whose subschemas apply to the same value.
const IN_PLACE_ONE: [&str; 4] = ["not", "if", "then", "else"];
const IN_PLACE_LIST: [&str; 3] = ["allOf", "anyOf", "oneOf"];
const IN_PLACE_MAP: [&str; 2] = ["dependentSchemas", "dependencies"];
/// Keywords whose subschemas apply one level down the value (or not at all: definitions).
const DESCENDING_ONE: [&str; 8] = [
    "additionalProperties",
    "propertyNames",
    "contains",
    "unevaluatedItems",
    "unevaluatedProperties",
    "additionalItems",
    "contentSchema",
    "items",
];
const DESCENDING_LIST: [&str; 2] = ["prefixItems", "items"];
const DESCENDING_MAP: [&str; 4] = ["properties", "patternProperties", "$defs", "definitions"];

/// Every subschema of a document (index 0 is the root), and the edges along which the validator
/// applies one subschema after another.
#[derive(Debug)]
pub(super) struct SchemaGraph {
    /// Where each subschema is, for refusals.
    trail: Trail,
    places: Vec<At>,
    /// Subschemas applied to the same value: in-place applicators and the `$ref` target.
    pub(super) in_place: Vec<Vec<Edge>>,
    /// Subschemas applied to a member or an item of the value.
    pub(super) descending: Vec<Vec<(Step, usize)>>,
    /// What one application of each subschema weighs in the `validation_work` count: 1, plus the
    /// names of its `required` and the JSON values of its `enum` and `const`, which it goes
    /// through (a `required` list of 9,000 names applied 450 times at one value made 4 million
    /// violations).
    pub(super) weights: Vec<usize>,
    /// Regular expressions in it (`pattern` values, `patternProperties` keys).
    pub(super) patterns: usize,
}

#[derive(Debug, Clone, Copy)]
pub(super) struct Edge {
    pub(super) to: usize,
    is_ref: bool,
}

/// Which members or items of a value a descending subschema applies to.
#[derive(Debug, Clone)]
pub(super) enum Step {
    /// `properties[name]`.
    Property(String),
    /// `patternProperties`, `additionalProperties`, `propertyNames`, `unevaluatedProperties`:
    /// taken to apply to every member.
    AnyProperty,
    /// `prefixItems[i]` (or a tuple `items[i]`).
    Item(usize),
    /// `items`, `contains`, `additionalItems`, `unevaluatedItems`: every item.
    AnyItem,
}

impl Step {
    fn of_keyword(key: &str) -> Option<Step> {
        match key {
            "additionalProperties" | "propertyNames" | "unevaluatedProperties" | "patternProperties" => {
                Some(Step::AnyProperty)
            }
            "items" | "contains" | "additionalItems" | "unevaluatedItems" => Some(Step::AnyItem),
            _ => None,
        }
    }
}

struct Builder<'a> {
    trail: Trail,
    /// Each subschema's place in the trail.
    places: Vec<At>,
    /// A hash of each place's pointer, continued from its parent's (a `/` and the token written
    /// per level, as `resolve` writes a fragment's), so a `$ref` finds its candidates without a
    /// pointer string per place; a candidate is then compared token by token, so a collision
    /// costs a comparison, never a wrong target. Index-aligned with the trail's places.
    hashes: Vec<DefaultHasher>,
    by_pointer_hash: HashMap<u64, Vec<usize>>,
    anchors: HashMap<String, usize>,
    in_place: Vec<Vec<Edge>>,
    descending: Vec<Vec<(Step, usize)>>,
    weights: Vec<usize>,
    patterns: usize,
    /// How many more the contract's `contract_patterns` budget allows.
    patterns_left: usize,
    /// `$ref`s to resolve once every subschema is known: (from, reference, the subschema's place).
    refs: Vec<(usize, &'a str, At)>,
    root_id: Option<&'a str>,
}

impl SchemaGraph {
    fn build(schema: &Value, patterns_left: usize) -> Result<Self, BudgetExceeded> {
        let mut builder = Builder {
            trail: Trail::new(),
            places: Vec::new(),
            hashes: vec![DefaultHasher::new()],
            by_pointer_hash: HashMap::new(),
            anchors: HashMap::new(),
            in_place: Vec::new(),
            descending: Vec::new(),
            weights: Vec::new(),
            patterns: 0,
            patterns_left,
            refs: Vec::new(),
            root_id: schema.get("$id").and_then(Value::as_str),
        };
        builder.visit(schema, Trail::root())?;
        let refs = std::mem::take(&mut builder.refs);
        for (from, reference, at) in refs {
            let to = builder.resolve(reference).ok_or_else(|| {
                BudgetExceeded::new(
                    Budget::RefScope,
                    format!("{}/$ref", builder.trail.pointer(at)),
                    format!("`{reference}` does not name a subschema of this schema"),
                )
            })?;
            builder.in_place[from].push(Edge { to, is_ref: true });
        }
        Ok(Self {
            trail: builder.trail,
            places: builder.places,
            in_place: builder.in_place,
            descending: builder.descending,
            weights: builder.weights,
            patterns: builder.patterns,
        })
    }

    /// The JSON Pointer of subschema `node`.
    fn pointer(&self, node: usize) -> String {
        self.trail.pointer(self.places[node])
    }

    /// Walks the in-place edges from every subschema, without recursion (a chain may be
    /// thousands of hops long), refusing a cycle, a chain over `ref_depth` and a fan-out over
    /// `schema_expansion`.
    fn check_in_place_paths(&self) -> Result<(), BudgetExceeded> {
        let (max_hops, max_applied) = (limit(Budget::RefDepth), limit(Budget::SchemaExpansion));
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let count = self.places.len();
        let mut state = vec![NEW; count];
        // Subschemas applied at one value starting here (itself included), and `$ref` hops.
        let mut applied = vec![0usize; count];
        let mut hops = vec![0usize; count];
        for start in 0..count {
            if state[start] != NEW {
                continue;
            }
            state[start] = OPEN;
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            while let Some((node, next)) = stack.last_mut() {
                let node = *node;
                if let Some(edge) = self.in_place[node].get(*next).copied() {
                    *next += 1;
                    match state[edge.to] {
                        NEW => {
                            state[edge.to] = OPEN;
                            stack.push((edge.to, 0));
                        }
                        OPEN => {
                            return Err(BudgetExceeded::new(
                                Budget::RefDepth,
                                self.pointer(node),
                                format!(
                                    "a `$ref` cycle back to {} that never descends into the value",
                                    display_pointer(&self.pointer(edge.to))
                                ),
                            ));
                        }
                        _ => {}
                    }
                    continue;
                }
                let edges = &self.in_place[node];
                applied[node] = edges.iter().fold(1usize, |sum, e| sum.saturating_add(applied[e.to]));
                hops[node] = edges
                    .iter()
                    .map(|e| hops[e.to] + usize::from(e.is_ref))
                    .max()
                    .unwrap_or(0);
                if hops[node] > max_hops {
                    return Err(BudgetExceeded::new(
                        Budget::RefDepth,
                        self.pointer(node),
                        format!("{} hops", hops[node]),
                    ));
                }
                if applied[node] > max_applied {
                    return Err(BudgetExceeded::new(
                        Budget::SchemaExpansion,
                        self.pointer(node),
                        format!("{} subschemas", applied[node]),
                    ));
                }
                state[node] = DONE;
                stack.pop();
            }
        }
        Ok(())
    }
}

impl<'a> Builder<'a> {
    /// Records `schema` at place `at` and its subschemas; returns its index. Recursion is bounded by
    /// the `schema_depth` budget, checked before.
    fn visit(&mut self, schema: &'a Value, at: At) -> Result<usize, BudgetExceeded> {
        let index = self.places.len();
        self.places.push(at);
        let hash = self.hashes[at.index()].finish();
        self.by_pointer_hash.entry(hash).or_default().push(index);
        self.in_place.push(Vec::new());
        self.descending.push(Vec::new());
        self.weights.push(1);
        let Some(map) = schema.as_object() else {
            return Ok(index); // `true`, `false`, or something the compiler will refuse.
        };
        self.weights[index] = application_weight(map);
        self.keywords(index, map, at)?;
        self.count_patterns(map, at)?;
        for key in IN_PLACE_ONE {
            if let Some(sub) = map.get(key) {
                let place = self.place(at, &[key]);
                let child = self.visit(sub, place)?;
                self.in_place[index].push(Edge {
                    to: child,
                    is_ref: false,
                });
            }
        }
        for key in IN_PLACE_LIST {
            for (i, sub) in map.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
                let place = self.place(at, &[key, &i.to_string()]);
                let child = self.visit(sub, place)?;
                self.in_place[index].push(Edge {
                    to: child,
                    is_ref: false,
                });
            }
        }
        for key in IN_PLACE_MAP {
            for (name, sub) in map.get(key).and_then(Value::as_object).into_iter().flatten() {
                if sub.is_object() || sub.is_boolean() {
                    let place = self.place(at, &[key, name]);
                    let child = self.visit(sub, place)?;
                    self.in_place[index].push(Edge {
                        to: child,
                        is_ref: false,
                    });
                }
            }
        }
        for key in DESCENDING_ONE {
            if let Some(sub) = map.get(key).filter(|s| s.is_object() || s.is_boolean()) {
                let place = self.place(at, &[key]);
                let child = self.visit(sub, place)?;
                if let Some(step) = Step::of_keyword(key) {
                    self.descending[index].push((step, child));
                }
            }
        }
        for key in DESCENDING_LIST {
            for (i, sub) in map.get(key).and_then(Value::as_array).into_iter().flatten().enumerate() {
                let place = self.place(at, &[key, &i.to_string()]);
                let child = self.visit(sub, place)?;
                self.descending[index].push((Step::Item(i), child));
            }
        }
        for key in DESCENDING_MAP {
            for (name, sub) in map.get(key).and_then(Value::as_object).into_iter().flatten() {
                let place = self.place(at, &[key, name]);
                let child = self.visit(sub, place)?;
                let step = match key {
                    "properties" => Some(Step::Property(name.clone())),
                    _ => Step::of_keyword(key), // definitions apply only through a `$ref`
                };
                if let Some(step) = step {
                    self.descending[index].push((step, child));
                }
            }
        }
        Ok(index)
    }

    /// The place `tokens` (not yet escaped) below `at`, with its pointer's hash.
    fn place(&mut self, at: At, tokens: &[&str]) -> At {
        tokens.iter().fold(at, |parent, token| {
            let child = self.trail.child(parent, token);
            let mut hash = self.hashes[parent.index()].clone();
            hash.write(b"/");
            hash.write(self.trail.token(child).as_bytes());
            self.hashes.push(hash);
            debug_assert_eq!(self.hashes.len(), child.index() + 1, "hashes follow the trail");
            child
        })
    }

    /// Counts the regular expressions of one subschema against the `contract_patterns` budget;
    /// a refusal names the first one past it.
    fn count_patterns(&mut self, map: &Map<String, Value>, at: At) -> Result<(), BudgetExceeded> {
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
            if self.patterns_left == 0 {
                let max = limit(Budget::ContractPatterns);
                return Err(BudgetExceeded::new(
                    Budget::ContractPatterns,
                    format!("{}/{place}", self.trail.pointer(at)),
                    format!("more than {max}"),
                ));
            }
            self.patterns_left -= 1;
            self.patterns += 1;
        }
        Ok(())
    }

    /// `$ref`, `$anchor` and the keywords that would make references resolve elsewhere.
    fn keywords(&mut self, index: usize, map: &'a Map<String, Value>, at: At) -> Result<(), BudgetExceeded> {
        let pointer = || self.trail.pointer(at);
        for key in ["$dynamicRef", "$recursiveRef"] {
            if map.contains_key(key) {
                return Err(BudgetExceeded::new(
                    Budget::RefScope,
                    format!("{}/{key}", pointer()),
                    format!("`{key}` is not accepted"),
                ));
            }
        }
        if at != Trail::root() && map.get("$id").is_some_and(Value::is_string) {
            return Err(BudgetExceeded::new(
                Budget::RefScope,
                format!("{}/$id", pointer()),
                "a nested `$id`",
            ));
        }
        if let Some(anchor) = map.get("$anchor").and_then(Value::as_str) {
            self.anchors.insert(anchor.to_owned(), index);
        }
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            self.refs.push((index, reference, at));
        }
        Ok(())
    }

    /// The subschema a same-document reference names.
    fn resolve(&self, reference: &str) -> Option<usize> {
        let local = match (reference.split_once('#'), self.root_id) {
            (Some(("", fragment)), _) => fragment,
            (Some((base, fragment)), Some(id)) if base == id.trim_end_matches('#') => fragment,
            (None, Some(id)) if reference == id => "",
            _ => return None,
        };
        let fragment = percent_decode(local)?;
        if fragment.is_empty() || fragment.starts_with('/') {
            // The same writes as `place` made: a `/` and a token each (tokens never hold `/`).
            let mut hash = DefaultHasher::new();
            for token in fragment.split('/').skip(1) {
                hash.write(b"/");
                hash.write(token.as_bytes());
            }
            let candidates = self.by_pointer_hash.get(&hash.finish())?;
            candidates
                .iter()
                .copied()
                .find(|node| self.trail.is(self.places[*node], &fragment))
        } else {
            self.anchors.get(&fragment).copied()
        }
    }
}

/// What one application of a subschema weighs (see [`SchemaGraph::weights`]).
fn application_weight(map: &Map<String, Value>) -> usize {
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

/// Decodes `%XX` escapes of a URI fragment; `None` when they are not valid UTF-8.
fn percent_decode(raw: &str) -> Option<String> {
    let bytes = raw.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(byte) = raw.get(i + 1..i + 3).and_then(|h| u8::from_str_radix(h, 16).ok())
        {
            out.push(byte);
            i += 3;
            continue;
        }
        out.push(bytes[i]);
        i += 1;
    }
    String::from_utf8(out).ok()
}

fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() { "the root" } else { pointer }
}

/// JSON Pointer escaping of one reference token (RFC 6901).
pub(super) fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    /// `$defs` d0..d{n-1}, each a `$ref` to the one before: the first attack.
    fn ref_chain(n: usize) -> Value {
        let mut defs = Map::new();
        defs.insert("d0".into(), json!({ "type": "string" }));
        for i in 1..n {
            defs.insert(format!("d{i}"), json!({ "$ref": format!("#/$defs/d{}", i - 1) }));
        }
        json!({ "type": "object", "properties": { "x": { "$ref": format!("#/$defs/d{}", n - 1) } }, "$defs": defs })
    }

    /// Level i is `allOf` of two `$ref`s to level i-1: the third attack.
    fn doubling(levels: usize) -> Value {
        let mut defs = Map::new();
        defs.insert("l0".into(), json!({ "type": "string" }));
        for i in 1..levels {
            let below = format!("#/$defs/l{}", i - 1);
            defs.insert(
                format!("l{i}"),
                json!({ "allOf": [{ "$ref": below }, { "$ref": below }] }),
            );
        }
        json!({ "type": "object", "properties": { "x": { "$ref": format!("#/$defs/l{}", levels - 1) } }, "$defs": defs })
    }

    fn refused(schema: &Value) -> BudgetExceeded {
        check_schema_budgets(schema).expect_err(&schema.to_string().chars().take(200).collect::<String>())
    }

    #[test]
    fn ordinary_schemas_pass() {
        for schema in [
            json!({ "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] }),
            json!(true),
            json!({ "$defs": { "row": { "type": "object" } }, "type": "array", "items": { "$ref": "#/$defs/row" } }),
            json!({ "allOf": [{ "$ref": "#/$defs/a" }, { "required": ["b"] }], "$defs": { "a": { "type": "object" } } }),
            json!({ "$defs": { "n": { "$anchor": "node", "type": "object" } }, "$ref": "#node" }),
            json!({ "default": { "$ref": "#/nowhere" }, "const": { "$id": "x" }, "type": "object" }),
            ref_chain(32),
            doubling(8),
        ] {
            assert_eq!(check_schema_budgets(&schema), Ok(()), "{schema}");
        }
    }

    #[test]
    fn recursion_that_descends_into_the_value_is_allowed() {
        let tree = json!({
            "$defs": { "node": { "type": "object", "properties": {
                "label": { "type": "string" },
                "children": { "type": "array", "items": { "$ref": "#/$defs/node" } } } } },
            "$ref": "#/$defs/node"
        });
        assert_eq!(check_schema_budgets(&tree), Ok(()));
    }

    #[test]
    fn a_long_ref_chain_is_refused_by_ref_depth() {
        // The 12,500 hops is over the node budget already; 2,000 fits it.
        assert_eq!(refused(&ref_chain(12_500)).budget, Budget::SchemaNodes);
        let e = refused(&ref_chain(2_000));
        assert_eq!(e.budget, Budget::RefDepth);
        assert_eq!(e.found, "33 hops");
        assert!(
            e.path.starts_with("/$defs/d") || e.path.starts_with("/properties/x"),
            "{e}"
        );
        assert_eq!(refused(&ref_chain(34)).budget, Budget::RefDepth);
    }

    #[test]
    fn a_doubling_tree_of_refs_is_refused_by_schema_expansion() {
        let e = refused(&doubling(41));
        assert_eq!(e.budget, Budget::SchemaExpansion);
        // Level i applies itself, its two `allOf` entries and twice level i-1: 2^(i+2) - 3.
        assert_eq!(e.path, "/$defs/l8", "the first level over 1,000 (1,021 subschemas)");
        assert_eq!(e.found, "1021 subschemas");
    }

    #[test]
    fn an_in_place_cycle_is_refused() {
        for schema in [
            json!({ "$defs": { "a": { "$ref": "#/$defs/a" } }, "$ref": "#/$defs/a" }),
            json!({ "$defs": { "a": { "allOf": [{ "$ref": "#/$defs/b" }] }, "b": { "not": { "$ref": "#/$defs/a" } } } }),
            json!({ "anyOf": [{ "$ref": "#" }] }),
        ] {
            let e = refused(&schema);
            assert_eq!(e.budget, Budget::RefDepth, "{schema}");
            assert!(e.found.contains("cycle"), "{e}");
        }
    }

    #[test]
    fn references_outside_the_document_are_refused() {
        for (schema, path) in [
            (json!({ "$ref": "https://example.com/schema" }), "/$ref"),
            (
                json!({ "properties": { "a": { "$ref": "#/$defs/missing" } } }),
                "/properties/a/$ref",
            ),
            (
                json!({ "properties": { "a": { "$dynamicRef": "#x" } } }),
                "/properties/a/$dynamicRef",
            ),
            (
                json!({ "$defs": { "a": { "$id": "other", "$ref": "#/x" } } }),
                "/$defs/a/$id",
            ),
            (json!({ "$ref": "#/default", "default": { "type": "string" } }), "/$ref"),
            // Places that hold subschemas but are none themselves, and a key with `/` unescaped.
            (json!({ "allOf": [{ "$ref": "#/allOf" }] }), "/allOf/0/$ref"),
            (
                json!({ "properties": { "a": { "$ref": "#/properties" } } }),
                "/properties/a/$ref",
            ),
            (
                json!({ "$defs": { "a/b": {} }, "properties": { "x": { "$ref": "#/$defs/a/b" } } }),
                "/properties/x/$ref",
            ),
        ] {
            let e = refused(&schema);
            assert_eq!((e.budget, e.path.as_str()), (Budget::RefScope, path), "{schema}");
        }
    }

    #[test]
    fn references_resolve_through_escapes_and_the_root_id() {
        let schema = json!({
            "$id": "https://svc.example/props",
            "$defs": { "a/b": { "type": "string" }, "c d": { "type": "string" } },
            "properties": {
                "x": { "$ref": "#/$defs/a~1b" },
                "y": { "$ref": "#/$defs/c%20d" },
                "z": { "$ref": "https://svc.example/props#/$defs/a~1b" } }
        });
        assert_eq!(check_schema_budgets(&schema), Ok(()));
    }

    #[test]
    fn references_resolve_to_every_kind_of_place() {
        let schema = json!({
            "$defs": { "": { "type": "string" }, "t~n": { "type": "string" } },
            "prefixItems": [{ "type": "string" }, { "$ref": "#/prefixItems/0" }],
            "allOf": [{ "type": "object" }, { "$ref": "#/allOf/0" }],
            "dependentSchemas": { "k": { "type": "object" } },
            "properties": {
                "empty": { "$ref": "#/$defs/" },
                "tilde": { "$ref": "#/$defs/t~0n" },
                "dependent": { "$ref": "#/dependentSchemas/k" },
                "root": { "$ref": "#" }
            }
        });
        assert_eq!(check_schema_budgets(&schema), Ok(()));
    }

    #[test]
    fn size_and_nesting_are_bounded() {
        let wide = json!({ "enum": (0..10_000).collect::<Vec<_>>() });
        assert_eq!(refused(&wide).budget, Budget::SchemaNodes);
        let mut deep = json!({ "type": "string" });
        for _ in 0..40 {
            deep = json!({ "properties": { "a": deep } });
        }
        let e = refused(&deep);
        assert_eq!(e.budget, Budget::SchemaDepth);
        assert!(e.path.starts_with("/properties/a/properties/a"), "{e}");
    }

    #[test]
    fn a_contract_names_the_schema_at_fault() {
        let contract = json!({
            "propsSpec": { "type": "object" },
            "actionSpec": { "approve": { "schema": doubling(41) } }
        });
        let e = check_contract_budgets(&contract).unwrap_err();
        assert_eq!(e.budget, Budget::SchemaExpansion);
        assert_eq!(e.path, "/actionSpec/approve/schema/$defs/l8");
        let stream = json!({ "streamSpec": { "log": { "schema": ref_chain(100) } } });
        assert!(
            check_contract_budgets(&stream)
                .unwrap_err()
                .path
                .starts_with("/streamSpec/log/schema/")
        );
    }

    /// An object schema of `n` string properties, each with its own `pattern`.
    fn patterned(n: usize) -> Value {
        let props: Map<String, Value> = (0..n)
            .map(|i| {
                (
                    format!("p{i}"),
                    json!({ "type": "string", "pattern": format!("^x{i}$") }),
                )
            })
            .collect();
        json!({ "type": "object", "properties": props })
    }

    #[test]
    fn a_contracts_patterns_are_counted_together() {
        let within = json!({
            "propsSpec": patterned(40),
            "actionSpec": { "pick": { "schema": { "type": "object", "patternProperties": (0..24).map(|i| (format!("^k{i}"), json!({}))).collect::<Map<String, Value>>() } } }
        });
        assert_eq!(check_contract_budgets(&within), Ok(()));
        let over = json!({ "propsSpec": patterned(40), "streamSpec": { "log": { "schema": patterned(25) } } });
        let e = check_contract_budgets(&over).unwrap_err();
        assert_eq!(
            (e.budget, e.path.as_str(), e.found.as_str()),
            (
                Budget::ContractPatterns,
                "/streamSpec/log/schema/properties/p24/pattern",
                "more than 64"
            )
        );
        // A stored schema compiled on its own holds at most a contract's worth.
        assert_eq!(check_schema_budgets(&patterned(64)), Ok(()));
        assert_eq!(refused(&patterned(65)).path, "/properties/p64/pattern");
        let keyed = json!({ "patternProperties": (0..65).map(|i| (format!("^a/{i}"), json!({}))).collect::<Map<String, Value>>() });
        assert_eq!(refused(&keyed).path, "/patternProperties/^a~164");
    }

    #[test]
    fn a_huge_contract_is_refused_by_its_size() {
        let contract = json!({ "propsSpec": { "type": "object", "description": "x".repeat(300 * 1024) } });
        let e = check_contract_budgets(&contract).unwrap_err();
        assert_eq!((e.budget, e.path.as_str()), (Budget::ContractBytes, ""));
    }
}
