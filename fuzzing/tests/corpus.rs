//! Every committed seed of every fuzz target (`fuzz/corpus/<target>/`) through its body, on
//! stable: the hostile inputs of issue 13 and any crash the fuzzers found stay fixed.

use std::path::PathBuf;

fn corpus(target: &str) -> Vec<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("../fuzz/corpus")
        .join(target);
    let mut seeds: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|entry| entry.expect("a corpus entry").path())
        .collect();
    seeds.sort();
    seeds
}

#[test]
fn every_target_has_seeds_and_survives_each_of_them() {
    for (target, body) in svc_fuzzing::TARGETS {
        let seeds = corpus(target);
        assert!(
            seeds.len() >= 3,
            "{target}: at least three seeds, found {}",
            seeds.len()
        );
        for seed in seeds {
            let data = std::fs::read(&seed).expect("a readable seed");
            let started = std::time::Instant::now();
            body(&data);
            // A hostile seed is refused by a budget, not worked through.
            assert!(
                started.elapsed() < std::time::Duration::from_secs(10),
                "{}: took {:?}",
                seed.display(),
                started.elapsed()
            );
        }
    }
}
