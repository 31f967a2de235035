//! A session row too large to parse on an async worker (props of hundreds of KiB, up to the 4 MiB
//! budget) is parsed through the CPU gate (`large_rows.rs`): while every slot is taken, its read
//! waits for one up to the gate's own wait, never refused, while the worker serves other reads
//! meanwhile, and past the wait is parsed without a slot; a small row is read at once. A frozen
//! epoch's props likewise.

use std::sync::Arc;
use std::time::Duration;

use sea_orm::DatabaseConnection;
use serde_json::{Value, json};
use svc_application::ports::agent::SessionRepository;
use svc_application::services::cpu_gate::CpuGate;
use svc_domain::session::FrozenCard;
use svc_sql::ReadCache;
use svc_sql::agent::SeaOrmSessionRepository;

use crate::support;

support::backend_tests!(
    a_large_row_waits_for_a_cpu_slot_while_small_reads_go_on,
    past_the_gates_wait_a_large_row_is_parsed_without_a_slot_and_kept
);

/// Props whose stored text (about 200 KB) is over the size parsed on the gate.
fn large_props(title: &str) -> Value {
    json!({ "title": title, "text": "x".repeat(200_000) })
}

/// Sessions read through the server's read cache, large rows parsed on `gate`.
fn sessions_on(db: &DatabaseConnection, gate: &CpuGate) -> Arc<SeaOrmSessionRepository> {
    Arc::new(
        SeaOrmSessionRepository::new(db.clone())
            .with_read_cache(Some(ReadCache::new()))
            .with_parse_gate(Some(gate.clone())),
    )
}

/// Stores `small` and `large` (with its first epoch frozen, its head at epoch 2).
async fn stored(sessions: &SeaOrmSessionRepository) {
    sessions.insert(&support::session("small")).await.unwrap();
    let mut large = support::session("large");
    large.head.props = large_props("epoch 1");
    sessions.insert(&large).await.unwrap();
    let mut head = large.head.clone();
    head.epoch = 2;
    head.props = large_props("epoch 2");
    let frozen = FrozenCard {
        epoch: 1,
        props: large_props("epoch 1"),
    };
    assert!(sessions.save_head("large", 0, &head, Some(&frozen)).await.unwrap());
}

async fn a_large_row_waits_for_a_cpu_slot_while_small_reads_go_on(db: DatabaseConnection) {
    let gate = CpuGate::new(1, Duration::from_secs(30));
    let sessions = sessions_on(&db, &gate);
    stored(&sessions).await;
    let release = support::hold_the_slot(&gate).await;

    let reading = Arc::clone(&sessions);
    let large = tokio::spawn(async move { reading.get_shared("large").await });
    let reading = Arc::clone(&sessions);
    let frozen = tokio::spawn(async move { reading.frozen_props("large", 1).await });
    // Reads of small rows go on meanwhile, more than a parse of the large one would take.
    for _ in 0..20 {
        let small = sessions.get("small").await.unwrap().expect("the small session");
        assert_eq!(small.head.props, json!({ "title": "first" }));
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(
        !large.is_finished() && !frozen.is_finished(),
        "the large row is parsed on the gate, whose one slot is taken"
    );

    release.send(()).unwrap();
    let large = large.await.unwrap().unwrap().expect("the large session");
    assert_eq!(
        (large.head.epoch, large.head.props.clone()),
        (2, large_props("epoch 2"))
    );
    let frozen = frozen.await.unwrap().unwrap().expect("the frozen epoch");
    assert_eq!(frozen, large_props("epoch 1"));
}

async fn past_the_gates_wait_a_large_row_is_parsed_without_a_slot_and_kept(db: DatabaseConnection) {
    let gate = CpuGate::new(1, Duration::from_millis(1));
    let sessions = sessions_on(&db, &gate);
    stored(&sessions).await;
    let _release = support::hold_the_slot(&gate).await;

    // The slot stays taken: the read waits the gate's 1 ms, then parses without one.
    let (kept, _) = tokio::time::timeout(Duration::from_secs(20), sessions.get_with_undrained("large"))
        .await
        .expect("a reader waits no longer than the gate's wait for a slot")
        .unwrap()
        .expect("the large session, not a refusal");
    assert_eq!(kept.head.props, large_props("epoch 2"));
    let frozen = tokio::time::timeout(Duration::from_secs(20), sessions.frozen_props("large", 1))
        .await
        .expect("a frozen epoch likewise")
        .unwrap()
        .expect("the frozen epoch");
    assert_eq!(frozen, large_props("epoch 1"));
    // Parsed once, kept: the read cache answers without a parse.
    let again = sessions.get_shared("large").await.unwrap().expect("kept");
    assert!(Arc::ptr_eq(&kept, &again));
}
