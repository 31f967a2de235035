//! What `svc_emit` and `svc_update` put on the live bus: a small payload or props travel in the
//! event, a large one (over `LIVE_EVENT_INLINE_BYTES`) as a marker of what was stored, so a bus
//! never holds it (a slow subscriber's broadcast slots, a broker's message).

use serde_json::{Value, json};
use tokio::sync::broadcast::Receiver;

use super::render_tests::render_once;
use super::*;
use crate::ports::agent::{EventBus, EventRepository, LIVE_EVENT_INLINE_BYTES, LiveEvent, Published};
use crate::testing::AgentFakes;

fn contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } }
    })
}

fn next(heard: &mut Receiver<Published>) -> LiveEvent {
    heard.try_recv().expect("an event was published").event().clone()
}

/// The event with its payload's size instead of the payload, so a failure prints no megabytes.
fn short(event: &LiveEvent) -> String {
    let len = svc_domain::text::json_len;
    match event {
        LiveEvent::Data(e) => format!("Data(seq {}, {} bytes)", e.seq, len(&e.payload)),
        LiveEvent::PropsUpdate { epoch, props, .. } => format!("PropsUpdate(epoch {epoch}, {} bytes)", len(props)),
        other => format!("{other:?}"),
    }
}

/// A string whose JSON is just over the bound.
fn large_text() -> String {
    "x".repeat(LIVE_EVENT_INLINE_BYTES)
}

#[tokio::test]
async fn a_large_emit_is_announced_by_its_seq_and_stays_in_the_store() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let session_id = render_once(&service, &caller, "log card", contract()).await.session_id;
    let mut heard = fakes.bus.subscribe(&session_id);

    service
        .emit(&caller, &session_id, "log", json!("small"), false)
        .await
        .unwrap();
    let LiveEvent::Data(small) = next(&mut heard) else {
        panic!("a small payload travels in the event");
    };
    assert_eq!(small.payload, json!("small"));

    let large = large_text();
    service
        .emit(&caller, &session_id, "log", json!(large), false)
        .await
        .unwrap();
    assert_eq!(
        short(&next(&mut heard)),
        short(&LiveEvent::DataStored {
            session_id: session_id.clone(),
            seq: small.seq + 1,
        }),
        "a large payload is not on the bus"
    );
    let stored = fakes
        .store
        .streams_since(&session_id, small.seq, Some(small.seq + 1), 10, usize::MAX)
        .await
        .unwrap();
    assert_eq!(stored.len(), 1);
    assert!(stored[0].payload == json!(large), "the store has it whole");
}

#[tokio::test]
async fn large_props_are_announced_by_their_epoch_and_stay_in_the_store() {
    let fakes = AgentFakes::default();
    let (service, caller) = (fakes.service(), AgentFakes::caller("app-1"));
    let session_id = render_once(&service, &caller, "title card", contract())
        .await
        .session_id;
    let mut heard = fakes.bus.subscribe(&session_id);

    let small = service
        .change_props(
            &caller,
            &session_id,
            PropsChange::Replace(json!({ "title": "t" })),
            false,
        )
        .await
        .unwrap();
    assert_eq!(
        next(&mut heard),
        LiveEvent::PropsUpdate {
            session_id: session_id.clone(),
            props: json!({ "title": "t" }),
            epoch: small.epoch,
        },
        "small props travel in the event"
    );

    let large = json!({ "title": large_text() });
    let reply = service
        .change_props(&caller, &session_id, PropsChange::Replace(large.clone()), false)
        .await
        .unwrap();
    assert_eq!(
        short(&next(&mut heard)),
        short(&LiveEvent::PropsStored {
            session_id: session_id.clone(),
            epoch: reply.epoch,
        }),
        "large props are not on the bus"
    );
    let head = service.session_for(&caller, &session_id).await.unwrap().head.clone();
    assert_eq!(
        (head.epoch, head.props),
        (reply.epoch, large),
        "the store has them whole"
    );
}
