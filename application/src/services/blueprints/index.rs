//! The in-memory vector index of the blueprint cache: one unit vector per blueprint, stored
//! contiguously, searched by brute force (a dot product per blueprint; see BENCHMARKS.md for
//! 10,000 and 100,000 blueprints).
//!
//! Every server holds every blueprint of every app here, so an entry keeps only what a search row
//! shows and a lookup compares: texts are cut to [`INDEXED_NAME_MAX_CHARS`] and
//! [`INDEXED_DESCRIPTION_MAX_CHARS`] (scores come from the vector, which was computed from the
//! whole text), and no persona.

use std::collections::HashMap;

use serde_json::Value;
use svc_domain::blueprint::dot;
use svc_domain::intent::MAX_INTENT_CHARS;
use svc_domain::text::excerpt_of;

use crate::ports::blueprints::{BlueprintSummary, MANIFEST_GENERATOR, SHARED_POOL_APP_ID};

/// Characters of a blueprint's name and intent an entry keeps: an agent's intent is never longer.
pub const INDEXED_NAME_MAX_CHARS: usize = MAX_INTENT_CHARS;
/// Characters of a blueprint's description an entry keeps, for the rows of
/// `svc_search_blueprints` and `svc_list_featured_blueprints` (then `…`).
pub const INDEXED_DESCRIPTION_MAX_CHARS: usize = 500;

/// What a search row shows of a blueprint.
#[derive(Debug, Clone, PartialEq)]
pub struct BlueprintEntry {
    pub id: String,
    pub name: String,
    pub description: String,
    pub category: String,
    /// Prop names of the contract's propsSpec.
    pub props: Vec<String>,
    /// Action intents of the contract's actionSpec.
    pub callbacks: Vec<String>,
    pub featured: bool,
}

impl BlueprintEntry {
    pub fn of_contract(
        id: &str,
        name: &str,
        description: &str,
        category: &str,
        contract: &Value,
        featured: bool,
    ) -> Self {
        let keys =
            |v: &Value| -> Vec<String> { v.as_object().map(|m| m.keys().cloned().collect()).unwrap_or_default() };
        Self {
            id: id.to_owned(),
            name: name.to_owned(),
            description: description.to_owned(),
            category: category.to_owned(),
            props: keys(&contract["propsSpec"]["properties"]),
            callbacks: keys(&contract["actionSpec"]),
            featured,
        }
    }
}

/// One indexed blueprint.
#[derive(Debug, Clone, PartialEq)]
pub struct IndexedBlueprint {
    pub entry: BlueprintEntry,
    pub app_id: String,
    /// At most [`INDEXED_NAME_MAX_CHARS`] characters of the intent (then `…`): the semantic
    /// match's reason quotes it.
    pub intent: String,
    pub contract_hash: String,
    pub variant_key: String,
    pub generator: String,
}

impl IndexedBlueprint {
    pub fn of_summary(s: &BlueprintSummary) -> Self {
        let intent = excerpt_of(&s.intent, INDEXED_NAME_MAX_CHARS);
        let name = s
            .name
            .as_deref()
            .map_or(intent.clone(), |n| excerpt_of(n, INDEXED_NAME_MAX_CHARS));
        let description = excerpt_of(
            s.description.as_deref().unwrap_or(&s.intent),
            INDEXED_DESCRIPTION_MAX_CHARS,
        );
        let category = s.category.as_deref().unwrap_or("generated");
        Self {
            entry: BlueprintEntry::of_contract(&s.blueprint_id, &name, &description, category, &s.contract, s.featured),
            app_id: s.app_id.clone(),
            intent: intent.into_owned(),
            contract_hash: s.contract_hash.clone(),
            variant_key: s.variant_key.clone(),
            generator: s.generator.clone(),
        }
    }

    pub fn is_manifest(&self) -> bool {
        self.generator == MANIFEST_GENERATOR
    }

    /// Visible to `app_id`: its own or the shared pool's.
    pub fn visible_to(&self, app_id: &str) -> bool {
        self.app_id == app_id || self.app_id == SHARED_POOL_APP_ID
    }
}

/// A blueprint and its cosine similarity to a query.
#[derive(Debug, Clone, PartialEq)]
pub struct Hit<'a> {
    pub blueprint: &'a IndexedBlueprint,
    pub score: f64,
}

/// Higher score first; equal scores by id, so rankings are stable.
fn best_first(a: &Hit<'_>, b: &Hit<'_>) -> std::cmp::Ordering {
    b.score
        .partial_cmp(&a.score)
        .unwrap_or(std::cmp::Ordering::Equal)
        .then_with(|| a.blueprint.entry.id.cmp(&b.blueprint.entry.id))
}

#[derive(Debug)]
pub struct VectorIndex {
    dimensions: Option<usize>,
    vectors: Vec<f32>,
    items: Vec<IndexedBlueprint>,
    positions: HashMap<String, usize>,
}

impl VectorIndex {
    pub fn new() -> Self {
        Self {
            dimensions: None,
            vectors: Vec::new(),
            items: Vec::new(),
            positions: HashMap::new(),
        }
    }

    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Adds or replaces a blueprint; a vector of another length than the index's is refused
    /// (`false`): it belongs to another embedder.
    pub fn upsert(&mut self, item: IndexedBlueprint, unit_vector: &[f32]) -> bool {
        let dims = *self.dimensions.get_or_insert(unit_vector.len());
        if unit_vector.len() != dims || dims == 0 {
            return false;
        }
        match self.positions.get(&item.entry.id) {
            Some(&at) => {
                self.vectors[at * dims..(at + 1) * dims].copy_from_slice(unit_vector);
                self.items[at] = item;
            }
            None => {
                self.positions.insert(item.entry.id.clone(), self.items.len());
                self.items.push(item);
                self.vectors.extend_from_slice(unit_vector);
            }
        }
        true
    }

    pub fn remove(&mut self, id: &str) {
        let Some(at) = self.positions.remove(id) else {
            return;
        };
        let dims = self.dimensions.unwrap_or(0);
        let last = self.items.len() - 1;
        self.items.swap_remove(at);
        if at != last {
            let (head, tail) = self.vectors.split_at_mut(last * dims);
            head[at * dims..(at + 1) * dims].copy_from_slice(&tail[..dims]);
            self.positions.insert(self.items[at].entry.id.clone(), at);
        }
        self.vectors.truncate(last * dims);
    }

    pub fn get(&self, id: &str) -> Option<&IndexedBlueprint> {
        self.positions.get(id).map(|&at| &self.items[at])
    }

    /// The best `k` blueprints `keep` accepts whose cosine with `query` is at least `floor`, best
    /// first, and how many reached the floor in all.
    pub fn top(
        &self,
        query: &[f32],
        floor: f64,
        k: usize,
        keep: impl Fn(&IndexedBlueprint) -> bool,
    ) -> (Vec<Hit<'_>>, usize) {
        let mut hits = self.scan(query, floor, keep);
        let total = hits.len();
        if hits.len() > k && k > 0 {
            hits.select_nth_unstable_by(k - 1, best_first);
            hits.truncate(k);
        } else if k == 0 {
            hits.clear();
        }
        hits.sort_by(best_first);
        (hits, total)
    }

    /// The cosine of one blueprint with `query`, if indexed.
    pub fn score(&self, id: &str, query: &[f32]) -> Option<f64> {
        let dims = self.dimensions?;
        let at = *self.positions.get(id)?;
        (query.len() == dims).then(|| dot(&self.vectors[at * dims..(at + 1) * dims], query))
    }

    /// Every blueprint `keep` accepts whose cosine with `query` is at least `floor`, best first.
    pub fn search(&self, query: &[f32], floor: f64, keep: impl Fn(&IndexedBlueprint) -> bool) -> Vec<Hit<'_>> {
        let mut hits = self.scan(query, floor, keep);
        hits.sort_by(best_first);
        hits
    }

    fn scan(&self, query: &[f32], floor: f64, keep: impl Fn(&IndexedBlueprint) -> bool) -> Vec<Hit<'_>> {
        let Some(dims) = self.dimensions else {
            return vec![];
        };
        if query.len() != dims {
            return vec![];
        }
        let hits: Vec<Hit<'_>> = self
            .items
            .iter()
            .enumerate()
            .filter(|(_, item)| keep(item))
            .filter_map(|(i, item)| {
                let score = dot(&self.vectors[i * dims..(i + 1) * dims], query);
                (score >= floor).then_some(Hit { blueprint: item, score })
            })
            .collect();
        hits
    }

    pub fn items(&self) -> impl Iterator<Item = &IndexedBlueprint> {
        self.items.iter()
    }

    /// Copies in the blueprints of `other` this index lacks (with their vectors): what was
    /// stored while this index was being built from the database.
    pub fn absorb_missing(&mut self, other: &VectorIndex) {
        let Some(dims) = other.dimensions else { return };
        for (at, item) in other.items.iter().enumerate() {
            if !self.positions.contains_key(&item.entry.id) {
                self.upsert(item.clone(), &other.vectors[at * dims..(at + 1) * dims]);
            }
        }
    }
}

impl Default for VectorIndex {
    fn default() -> Self {
        Self::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn item(id: &str) -> IndexedBlueprint {
        IndexedBlueprint {
            entry: BlueprintEntry::of_contract(id, id, id, "c", &Value::Null, false),
            app_id: "a".into(),
            intent: id.into(),
            contract_hash: "h".into(),
            variant_key: "v".into(),
            generator: "builtin".into(),
        }
    }

    fn summary(intent: &str, name: Option<&str>, description: Option<&str>) -> BlueprintSummary {
        BlueprintSummary {
            blueprint_id: "b".into(),
            app_id: "a".into(),
            intent: intent.into(),
            name: name.map(Into::into),
            description: description.map(Into::into),
            category: None,
            contract_hash: "h".into(),
            variant_key: "v".into(),
            contract: Value::Null,
            generator: "user".into(),
            featured: false,
            persona: Some("p".repeat(4_000)),
            embedding: None,
            updated_at: chrono::DateTime::UNIX_EPOCH,
        }
    }

    #[test]
    fn an_entry_keeps_excerpts_of_long_texts() {
        let long = IndexedBlueprint::of_summary(&summary(&"i".repeat(4_000), None, Some(&"é".repeat(4_000))));
        let cut = |max: usize, c: char| format!("{}…", c.to_string().repeat(max));
        assert_eq!(long.intent, cut(INDEXED_NAME_MAX_CHARS, 'i'));
        assert_eq!(long.entry.name, long.intent, "without a name the intent names it");
        assert_eq!(long.entry.description, cut(INDEXED_DESCRIPTION_MAX_CHARS, 'é'));
        let named = IndexedBlueprint::of_summary(&summary(&"i".repeat(4_000), Some(&"n".repeat(201)), None));
        assert_eq!(named.entry.name, cut(INDEXED_NAME_MAX_CHARS, 'n'));
        assert_eq!(
            named.entry.description,
            cut(INDEXED_DESCRIPTION_MAX_CHARS, 'i'),
            "without a description the intent describes it"
        );
        let short = IndexedBlueprint::of_summary(&summary("order approval", Some("Orders"), Some("Approve.")));
        assert_eq!(
            (
                short.intent.as_str(),
                short.entry.name.as_str(),
                short.entry.description.as_str()
            ),
            ("order approval", "Orders", "Approve."),
            "short texts are kept whole"
        );
    }

    #[test]
    fn upsert_remove_and_search_keep_vectors_aligned() {
        let mut index = VectorIndex::new();
        assert!(index.upsert(item("x"), &[1.0, 0.0]));
        assert!(index.upsert(item("y"), &[0.0, 1.0]));
        assert!(index.upsert(item("z"), &[0.6, 0.8]));
        assert!(
            !index.upsert(item("bad"), &[1.0, 0.0, 0.0]),
            "another embedder's length"
        );
        index.remove("x");
        let hits = index.search(&[0.0, 1.0], 0.0, |_| true);
        let got: Vec<(&str, f64)> = hits.iter().map(|h| (h.blueprint.entry.id.as_str(), h.score)).collect();
        assert_eq!(got.len(), 2);
        assert_eq!(got[0].0, "y");
        assert_eq!(got[1].0, "z");
        assert!((got[1].1 - 0.8).abs() < 1e-6);
        assert!(index.upsert(item("y"), &[1.0, 0.0]), "replace in place");
        assert_eq!(index.search(&[0.0, 1.0], 0.5, |_| true)[0].blueprint.entry.id, "z");
        assert_eq!(index.len(), 2);
        index.upsert(item("w"), &[0.0, 1.0]);
        let (top, total) = index.top(&[0.0, 1.0], 0.0, 1, |_| true);
        let mut rebuilt = VectorIndex::new();
        rebuilt.upsert(item("z"), &[1.0, 0.0]);
        rebuilt.absorb_missing(&index);
        assert_eq!(rebuilt.len(), 3, "y and w join, z keeps the rebuilt vector");
        assert!((rebuilt.score("z", &[1.0, 0.0]).unwrap() - 1.0).abs() < 1e-6);
        assert!((rebuilt.score("w", &[0.0, 1.0]).unwrap() - 1.0).abs() < 1e-6);
        assert_eq!((top.len(), total), (1, 3));
        assert_eq!(top[0].blueprint.entry.id, "w");
        assert!((index.score("z", &[0.0, 1.0]).unwrap() - 0.8).abs() < 1e-6);
    }
}
