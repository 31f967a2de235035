//! Rules of the blueprint catalog: how `svc_search_blueprints` scores and merges rows, cosine
//! similarity, and the normalised forms of operator fields. Pure: vectors and texts come in.
//! The bounds of what an operator may store are in [`operator_texts`], [`variance_patch`] and
//! [`app_capacity`], a listing's in [`listing_page`] and [`listing_filters`].

pub mod app_capacity;
pub mod listing_filters;
pub mod listing_page;
pub mod operator_texts;
pub mod variance_patch;

use std::cmp::Ordering;

/// Score of a manifest UI whose name equals the query (case-insensitive, trimmed).
pub const EXACT_NAME_SCORE: f64 = 1.0;
/// Score of a manifest UI whose name or description contains the query.
pub const SUBSTRING_SCORE: f64 = 0.7;

/// How a search row was found; a manifest row wins a tie on id over a cached one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RowSource {
    Manifest,
    Cache,
}

/// A scored candidate before merging.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredRow<T> {
    pub id: String,
    pub source: RowSource,
    pub score: f64,
    pub row: T,
}

/// The lexical score of a manifest UI for `query`: 1.0 for an exact name, 0.7 when the name or
/// the description contains the query, `None` otherwise. Comparison ignores case and
/// surrounding whitespace; an empty query matches nothing.
pub fn manifest_text_score(query: &str, name: &str, description: &str) -> Option<f64> {
    let q = query.trim().to_lowercase();
    if q.is_empty() {
        return None;
    }
    let name = name.trim().to_lowercase();
    if name == q {
        Some(EXACT_NAME_SCORE)
    } else if name.contains(&q) || description.to_lowercase().contains(&q) {
        Some(SUBSTRING_SCORE)
    } else {
        None
    }
}

/// Merges candidates into result rows: one row per id, a manifest row before any cached row
/// with the same id (whatever their scores), the higher score among rows of the same source;
/// sorted by score descending, then id ascending so equal scores have a stable order.
pub fn merge_rows<T>(candidates: Vec<ScoredRow<T>>) -> Vec<ScoredRow<T>> {
    let mut merged: Vec<ScoredRow<T>> = Vec::with_capacity(candidates.len());
    let mut index: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for candidate in candidates {
        match index.get(&candidate.id) {
            None => {
                index.insert(candidate.id.clone(), merged.len());
                merged.push(candidate);
            }
            Some(&at) => {
                let kept = &merged[at];
                let replaces = match (kept.source, candidate.source) {
                    (RowSource::Cache, RowSource::Manifest) => true,
                    (RowSource::Manifest, RowSource::Cache) => false,
                    _ => candidate.score > kept.score,
                };
                if replaces {
                    merged[at] = candidate;
                }
            }
        }
    }
    merged.sort_by(|a, b| {
        b.score
            .partial_cmp(&a.score)
            .unwrap_or(Ordering::Equal)
            .then_with(|| a.id.cmp(&b.id))
    });
    merged
}

/// Cosine similarity of two vectors; 0 when either is zero or the lengths differ.
pub fn cosine(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() || a.is_empty() {
        return 0.0;
    }
    let (mut dot, mut na, mut nb) = (0f64, 0f64, 0f64);
    for (x, y) in a.iter().zip(b) {
        let (x, y) = (f64::from(*x), f64::from(*y));
        dot += x * y;
        na += x * x;
        nb += y * y;
    }
    if na == 0.0 || nb == 0.0 {
        0.0
    } else {
        dot / (na.sqrt() * nb.sqrt())
    }
}

/// Scales a vector to unit length (a zero vector stays zero), so cosine becomes a dot product.
pub fn normalized(mut v: Vec<f32>) -> Vec<f32> {
    let norm = v.iter().map(|x| f64::from(*x) * f64::from(*x)).sum::<f64>().sqrt();
    if norm > 0.0 {
        for x in &mut v {
            *x = (f64::from(*x) / norm) as f32;
        }
    }
    v
}

/// Dot product of two unit vectors (their cosine); 0 when the lengths differ.
pub fn dot(a: &[f32], b: &[f32]) -> f64 {
    if a.len() != b.len() {
        return 0.0;
    }
    // Eight independent sums, so the compiler can use SIMD lanes (a single running float sum
    // must stay sequential).
    let mut lanes = [0f32; 8];
    let (ca, cb) = (a.chunks_exact(8), b.chunks_exact(8));
    let (ra, rb) = (ca.remainder(), cb.remainder());
    for (x, y) in ca.zip(cb) {
        for i in 0..8 {
            lanes[i] += x[i] * y[i];
        }
    }
    let tail: f32 = ra.iter().zip(rb).map(|(x, y)| x * y).sum();
    f64::from(lanes.iter().sum::<f32>() + tail)
}

/// A persona as stored and compared: trimmed and lowercase; empty means none.
pub fn normalize_persona(raw: &str) -> Option<String> {
    let p = raw.trim().to_lowercase();
    (!p.is_empty()).then_some(p)
}

/// Where a cached component came from (Document 3: `source.kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SourceKind {
    /// Generated (a language model or the built-in generator).
    Llm,
    /// Registered as written (`svc_ops_register_blueprint`, a manifest UI).
    User,
}

impl SourceKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Llm => "llm",
            Self::User => "user",
        }
    }

    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "llm" => Some(Self::Llm),
            "user" => Some(Self::User),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(id: &str, source: RowSource, score: f64) -> ScoredRow<()> {
        ScoredRow {
            id: id.into(),
            source,
            score,
            row: (),
        }
    }

    #[test]
    fn manifest_text_scores() {
        let cases = [
            ("Order approval", "Order approval", "", Some(1.0)),
            ("  order APPROVAL ", "Order approval", "", Some(1.0)),
            ("order", "Order approval", "", Some(0.7)),
            ("refund", "Order approval", "Approve or refund an order", Some(0.7)),
            ("invoice", "Order approval", "Approve an order", None),
            ("", "Order approval", "", None),
        ];
        for (query, name, description, want) in cases {
            assert_eq!(manifest_text_score(query, name, description), want, "{query}");
        }
    }

    #[test]
    fn merge_keeps_the_manifest_row_and_sorts_by_score() {
        let merged = merge_rows(vec![
            row("a", RowSource::Cache, 0.95),
            row("b", RowSource::Cache, 0.4),
            row("a", RowSource::Manifest, 0.7),
            row("c", RowSource::Manifest, 0.5),
            row("c", RowSource::Manifest, 0.9),
            row("b", RowSource::Cache, 0.6),
        ]);
        let got: Vec<(&str, RowSource, f64)> = merged.iter().map(|r| (r.id.as_str(), r.source, r.score)).collect();
        assert_eq!(
            got,
            vec![
                ("c", RowSource::Manifest, 0.9),
                ("a", RowSource::Manifest, 0.7),
                ("b", RowSource::Cache, 0.6),
            ]
        );
    }

    #[test]
    fn cosine_of_parallel_orthogonal_and_mismatched_vectors() {
        assert!((cosine(&[1.0, 2.0], &[2.0, 4.0]) - 1.0).abs() < 1e-9);
        assert_eq!(cosine(&[1.0, 0.0], &[0.0, 1.0]), 0.0);
        assert_eq!(cosine(&[1.0], &[1.0, 0.0]), 0.0);
        assert_eq!(cosine(&[0.0, 0.0], &[1.0, 0.0]), 0.0);
        let (a, b) = (normalized(vec![3.0, 4.0]), normalized(vec![4.0, 3.0]));
        assert!((dot(&a, &b) - cosine(&[3.0, 4.0], &[4.0, 3.0])).abs() < 1e-6);
    }

    #[test]
    fn personas_are_trimmed_lowercase() {
        assert_eq!(normalize_persona("  Finance Analyst "), Some("finance analyst".into()));
        assert_eq!(normalize_persona("   "), None);
        assert_eq!(SourceKind::parse("user"), Some(SourceKind::User));
        assert_eq!(SourceKind::Llm.as_str(), "llm");
        assert_eq!(SourceKind::parse("x"), None);
    }
}
