//! Retrieval quality of the built-in embedder on a labelled paraphrase set
//! (`tests/data/retrieval.json`): precision@1, the share of queries whose most similar blueprint
//! is the labelled one. The test fails when precision drops below the recorded figure
//! (`RECORDED_PRECISION_AT_1`, also in `tests/data/README.md`); raise both when the embedder
//! improves. Run `cargo test -p svc-embedding --test retrieval_quality -- --nocapture` to see
//! every miss and the similarity distribution the semantic threshold is chosen from.

use serde::Deserialize;
use svc_application::ports::blueprints::embedding_text;
use svc_embedding::BuiltinEmbedder;

/// Precision@1 measured when the set was written: 50 of 60 (48 of the 48 keyword-sharing
/// paraphrases, 2 of the 12 synonym-only ones).
const RECORDED_PRECISION_AT_1: f64 = 50.0 / 60.0;

/// Near misses at or above the handshake's threshold (0.50) when the set was written.
const RECORDED_NEAR_MISSES_AT_THRESHOLD: usize = 1;

#[derive(Deserialize)]
struct Set {
    blueprints: Vec<Blueprint>,
    queries: Vec<Query>,
    near_misses: Vec<NearMiss>,
}

#[derive(Deserialize)]
struct NearMiss {
    intent: String,
    cached: String,
}

#[derive(Deserialize)]
struct Blueprint {
    id: String,
    intent: String,
    description: String,
}

#[derive(Deserialize)]
struct Query {
    query: String,
    expected: String,
}

fn dot(a: &[f32], b: &[f32]) -> f64 {
    a.iter().zip(b).map(|(x, y)| f64::from(x * y)).sum()
}

#[test]
fn precision_at_1_stays_at_or_above_the_recorded_figure() {
    let set: Set = serde_json::from_str(include_str!("data/retrieval.json")).unwrap();
    assert!(set.blueprints.len() >= 10 && set.queries.len() >= 40);
    for q in &set.queries {
        assert!(
            set.blueprints.iter().any(|b| b.id == q.expected),
            "{} is labelled",
            q.query
        );
    }
    let e = BuiltinEmbedder::new();
    let vectors: Vec<Vec<f32>> = set
        .blueprints
        .iter()
        .map(|b| e.vector(&embedding_text(None, &b.intent, Some(&b.description))))
        .collect();
    let mut hits = 0;
    let (mut right, mut wrong) = (Vec::new(), Vec::new());
    for q in &set.queries {
        let v = e.vector(&q.query);
        let mut scored: Vec<(f64, &str)> = set
            .blueprints
            .iter()
            .zip(&vectors)
            .map(|(b, bv)| (dot(&v, bv), b.id.as_str()))
            .collect();
        scored.sort_by(|a, b| b.0.total_cmp(&a.0));
        let expected = scored.iter().find(|s| s.1 == q.expected).unwrap().0;
        let best_other = scored.iter().find(|s| s.1 != q.expected).unwrap().0;
        right.push(expected);
        wrong.push(best_other);
        if scored[0].1 == q.expected {
            hits += 1;
        } else {
            println!(
                "miss: {:?} -> {} ({:.3}); expected {} ({:.3})",
                q.query, scored[0].1, scored[0].0, q.expected, expected
            );
        }
    }
    let precision = f64::from(hits) / set.queries.len() as f64;
    let pct = |xs: &mut Vec<f64>, p: f64| {
        xs.sort_by(f64::total_cmp);
        xs[((xs.len() - 1) as f64 * p).round() as usize]
    };
    println!(
        "precision@1 = {hits}/{} = {precision:.3}; cosine with the labelled blueprint: p10 {:.2} median {:.2} p90 {:.2}; with the best other: median {:.2} p90 {:.2} max {:.2}",
        set.queries.len(),
        pct(&mut right, 0.1),
        pct(&mut right, 0.5),
        pct(&mut right, 0.9),
        pct(&mut wrong, 0.5),
        pct(&mut wrong, 0.9),
        pct(&mut wrong, 1.0),
    );
    for t in [0.3, 0.35, 0.4, 0.45, 0.5, 0.55] {
        let reuse = right.iter().filter(|c| **c >= t).count();
        let false_reuse = wrong.iter().filter(|c| **c >= t).count();
        println!(
            "threshold {t:.2}: {reuse}/{} paraphrases would reuse their blueprint, {false_reuse} would reach another",
            right.len()
        );
    }
    // Generated blueprints carry no description: the handshake compares intent with intent.
    let intents: Vec<Vec<f32>> = set.blueprints.iter().map(|b| e.vector(&b.intent)).collect();
    let (mut own, mut other) = (Vec::new(), Vec::new());
    for q in &set.queries {
        let v = e.vector(&q.query);
        for (b, bv) in set.blueprints.iter().zip(&intents) {
            if b.id == q.expected {
                own.push(dot(&v, bv))
            } else {
                other.push(dot(&v, bv))
            }
        }
    }
    let misses: Vec<f64> = set
        .near_misses
        .iter()
        .map(|m| {
            let c = dot(&e.vector(&m.intent), &e.vector(&m.cached));
            println!("near miss {:?} vs {:?}: {c:.3}", m.intent, m.cached);
            c
        })
        .collect();
    for t in [0.4, 0.5, 0.55, 0.6, 0.65, 0.7, 0.75, 0.8] {
        println!(
            "near misses at or above {t:.2}: {}/{}",
            misses.iter().filter(|c| **c >= t).count(),
            misses.len()
        );
        println!(
            "intent only, threshold {t:.2}: {}/{} reuse, {} wrong pairs reach it (max wrong {:.2})",
            own.iter().filter(|c| **c >= t).count(),
            own.len(),
            other.iter().filter(|c| **c >= t).count(),
            other.iter().cloned().fold(0.0, f64::max)
        );
    }
    let above = misses.iter().filter(|c| **c >= 0.5).count();
    assert!(
        above <= RECORDED_NEAR_MISSES_AT_THRESHOLD,
        "{above} near misses reach 0.50 (recorded {RECORDED_NEAR_MISSES_AT_THRESHOLD})"
    );
    assert!(
        precision + 1e-9 >= RECORDED_PRECISION_AT_1,
        "precision@1 fell to {precision:.3} (recorded {RECORDED_PRECISION_AT_1:.3})"
    );
}
