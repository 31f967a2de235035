//! The graph of a schema's subschemas: where each is, which apply at the same value (in-place
//! applicators and the `$ref` each resolves to) and which one level down, built in one walk that
//! also refuses references this service does not follow.

use std::collections::HashMap;
use std::hash::{DefaultHasher, Hasher};

use serde_json::{Map, Value};

use super::keyword_counts::{PatternCount, application_weight};
use crate::budget::{Budget, BudgetExceeded};
use crate::contract::pointer_trail::{At, Trail};

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
pub(in crate::contract) struct SchemaGraph {
    /// Where each subschema is, for refusals.
    pub(super) trail: Trail,
    pub(super) places: Vec<At>,
    /// Subschemas applied to the same value: in-place applicators and the `$ref` target.
    pub(in crate::contract) in_place: Vec<Vec<Edge>>,
    /// Subschemas applied to a member or an item of the value.
    pub(in crate::contract) descending: Vec<Vec<(Step, usize)>>,
    /// What one application of each subschema weighs in the `validation_work` count: 1, plus the
    /// names of its `required` and the JSON values of its `enum` and `const`, which it goes
    /// through (a `required` list of 9,000 names applied 450 times at one value made 4 million
    /// violations).
    pub(in crate::contract) weights: Vec<usize>,
    /// Regular expressions in it (`pattern` values, `patternProperties` keys).
    pub(in crate::contract) patterns: usize,
}

#[derive(Debug, Clone, Copy)]
pub(in crate::contract) struct Edge {
    pub(in crate::contract) to: usize,
    pub(super) is_ref: bool,
}

/// Which members or items of a value a descending subschema applies to.
#[derive(Debug, Clone)]
pub(in crate::contract) enum Step {
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
    patterns: PatternCount,
    /// `$ref`s to resolve once every subschema is known: (from, reference, the subschema's place).
    refs: Vec<(usize, &'a str, At)>,
    root_id: Option<&'a str>,
}

impl SchemaGraph {
    /// Walks `schema`, with `patterns_left` regular expressions left in the contract's budget.
    pub(super) fn build(schema: &Value, patterns_left: usize) -> Result<Self, BudgetExceeded> {
        let mut builder = Builder {
            trail: Trail::new(),
            places: Vec::new(),
            hashes: vec![DefaultHasher::new()],
            by_pointer_hash: HashMap::new(),
            anchors: HashMap::new(),
            in_place: Vec::new(),
            descending: Vec::new(),
            weights: Vec::new(),
            patterns: PatternCount::within(patterns_left),
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
            patterns: builder.patterns.counted(),
        })
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
        self.patterns.count(map, || self.trail.pointer(at))?;
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
