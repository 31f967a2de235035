//! An offline embedder: the "hashing trick" over word unigrams, word bigrams and character
//! n-grams of each word, L2-normalised.
//!
//! - Word unigrams carry most of the meaning; a crude suffix stemmer folds `approve`,
//!   `approval`, `approving` and `approved` onto one feature.
//! - Character 3- and 4-grams of each word (with `<`/`>` boundary marks) give partial credit to
//!   morphological variants the stemmer misses (`schedule`/`scheduling`, `calendar`/`calendars`)
//!   and to typos.
//! - Word bigrams reward phrasings that keep word order (`line items`).
//! - Stop words are dropped, and words every UI intent uses (`ui`, `card`, `view`, `show`, ...)
//!   weigh a quarter: they say a UI is wanted, not which one.
//!
//! Each feature is hashed (FNV-1a, 64 bits) to one of [`BUILTIN_DIMENSIONS`] buckets with a
//! sign bit, which keeps collisions unbiased. It knows no synonyms: `invoice` and `bill` are
//! unrelated to it. Its precision@1 on the labelled paraphrase set is recorded in
//! `tests/data/retrieval/README.md`.

use svc_application::ports::blueprints::{EmbedError, Embedder};

/// Vector-space id of this embedder; bump it when features or weights change, so stored vectors
/// are recomputed at start-up instead of being compared with new ones.
pub const BUILTIN_MODEL: &str = "builtin-ngram-v1";
/// Vector length: 384 floats (1.5 KiB a blueprint; 150 MB for 100,000 blueprints).
pub const BUILTIN_DIMENSIONS: usize = 384;

const WORD_WEIGHT: f32 = 1.0;
const BIGRAM_WEIGHT: f32 = 0.5;
/// Spread over a word's n-grams, so a long word does not outweigh a short one.
const NGRAM_WEIGHT: f32 = 0.6;
const GENERIC_WEIGHT: f32 = 0.25;

const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "and", "or", "of", "for", "to", "in", "on", "at", "by", "with", "from", "into", "onto", "my",
    "our", "your", "their", "its", "this", "that", "these", "those", "some", "any", "each", "every", "all", "is",
    "are", "be", "it", "as", "i", "we", "you", "me", "us", "them", "so", "can", "let", "lets", "which", "what", "who",
    "where", "when", "how", "per", "via", "about", "up", "out", "one", "new", "please", "want", "need",
];

const GENERIC_WORDS: &[&str] = &[
    "ui",
    "card",
    "view",
    "screen",
    "show",
    "display",
    "component",
    "widget",
    "panel",
    "page",
    "form",
    "list",
    "user",
    "users",
    "simple",
    "small",
    "interactive",
    "tool",
    "app",
];

#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinEmbedder;

impl BuiltinEmbedder {
    pub fn new() -> Self {
        Self
    }

    /// The unit vector of `text` (all zeros when it has no words).
    pub fn vector(&self, text: &str) -> Vec<f32> {
        let mut v = vec![0f32; BUILTIN_DIMENSIONS];
        let words: Vec<(String, f32)> = text
            .split(|c: char| !c.is_alphanumeric())
            .filter(|w| !w.is_empty())
            .map(str::to_lowercase)
            .filter(|w| !STOP_WORDS.contains(&w.as_str()))
            .map(|w| {
                let weight = if GENERIC_WORDS.contains(&w.as_str()) {
                    GENERIC_WEIGHT
                } else {
                    1.0
                };
                (stem(&w), weight)
            })
            .collect();
        for (word, weight) in &words {
            add(&mut v, &format!("w:{word}"), WORD_WEIGHT * weight);
            let marked: Vec<char> = format!("<{word}>").chars().collect();
            let grams: Vec<String> = [3usize, 4]
                .iter()
                .flat_map(|n| marked.windows(*n).map(|g| g.iter().collect::<String>()))
                .collect();
            let per = NGRAM_WEIGHT * weight / (grams.len().max(1) as f32).sqrt();
            for gram in grams {
                add(&mut v, &format!("c:{gram}"), per);
            }
        }
        for pair in words.windows(2) {
            let weight = BIGRAM_WEIGHT * pair[0].1.min(pair[1].1);
            add(&mut v, &format!("b:{} {}", pair[0].0, pair[1].0), weight);
        }
        let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        if norm > 0.0 {
            for x in &mut v {
                *x /= norm;
            }
        }
        v
    }
}

/// Sublinear: repeating a word adds less than a new word.
fn add(v: &mut [f32], feature: &str, weight: f32) {
    let h = fnv1a(feature.as_bytes());
    let bucket = (h % BUILTIN_DIMENSIONS as u64) as usize;
    let sign = if (h >> 63) & 1 == 1 { -1.0 } else { 1.0 };
    v[bucket] += sign * weight;
}

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in bytes {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    h
}

/// Strips one common English suffix from words longer than four letters.
fn stem(word: &str) -> String {
    const SUFFIXES: &[&str] = &[
        "ations", "ation", "ments", "ment", "ings", "ing", "ions", "ion", "ers", "er", "als", "al", "ies", "es", "ed",
        "ly", "s", "e",
    ];
    if word.chars().count() <= 4 || !word.is_ascii() {
        return word.to_owned();
    }
    for suffix in SUFFIXES {
        if let Some(stem) = word.strip_suffix(suffix)
            && stem.len() >= 4
        {
            return stem.to_owned();
        }
    }
    word.to_owned()
}

#[async_trait::async_trait]
impl Embedder for BuiltinEmbedder {
    fn model(&self) -> &str {
        BUILTIN_MODEL
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        Ok(texts.iter().map(|t| self.vector(t)).collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cos(a: &str, b: &str) -> f32 {
        let e = BuiltinEmbedder::new();
        e.vector(a).iter().zip(e.vector(b)).map(|(x, y)| x * y).sum()
    }

    #[test]
    fn vectors_are_unit_length_and_deterministic() {
        let e = BuiltinEmbedder::new();
        let v = e.vector("Order approval with line items");
        assert_eq!(v.len(), BUILTIN_DIMENSIONS);
        let norm: f32 = v.iter().map(|x| x * x).sum::<f32>().sqrt();
        assert!((norm - 1.0).abs() < 1e-5);
        assert_eq!(v, e.vector("Order approval with line items"));
        assert!(e.vector("the of and").iter().all(|x| *x == 0.0), "stop words only");
    }

    #[test]
    fn paraphrases_are_closer_than_unrelated_intents() {
        let same = cos("order approval", "approve an order");
        let other = cos("order approval", "weather forecast for the week");
        assert!(same > 0.5, "{same}");
        assert!(other < 0.2, "{other}");
        assert!(cos("approving orders", "order approvals") > 0.8);
    }

    #[test]
    fn stemming_folds_common_suffixes() {
        assert_eq!(stem("approval"), "approv");
        assert_eq!(stem("approved"), "approv");
        assert_eq!(stem("approving"), "approv");
        assert_eq!(stem("orders"), "order");
        assert_eq!(stem("map"), "map");
    }
}
