//! Generation progress as `data` deliveries on the reserved `_svc:lifecycle` channel.
//!
//! Payload: `{ stage, attempt?, receivedChars?, findings?, waitedMs?, outcome?, code? }`. A stage
//! is published when it changes; `streaming` is published again while tokens arrive, at most
//! every [`STREAMING_INTERVAL`]. `done` is the channel's terminal delivery (`complete: true`),
//! with `outcome: "rendered"` or `outcome: "failed"` and the failure code.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use serde_json::{Map, Value, json};
use svc_domain::contract::LIFECYCLE_CHANNEL;

use crate::ports::agent::{EventRepository, LiveEvent};
use crate::ports::generation::{GenerationProgress, GenerationStage, ProgressSink};
use crate::ports::{Clock, agent::EventBus};

/// Someone besides the card who follows a render's generation (the agent's
/// `notifications/progress`): called with each stage the card is told of, in order.
#[derive(Clone)]
pub struct ProgressObserver(Arc<dyn Fn(&GenerationProgress) + Send + Sync>);

impl ProgressObserver {
    pub fn new(observe: impl Fn(&GenerationProgress) + Send + Sync + 'static) -> Self {
        Self(Arc::new(observe))
    }
}

impl std::fmt::Debug for ProgressObserver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProgressObserver")
    }
}

/// Least time between two `streaming` deliveries of one attempt.
pub const STREAMING_INTERVAL: Duration = Duration::from_millis(250);

pub(super) struct LifecycleSink<'a> {
    pub session_id: &'a str,
    pub events: &'a dyn EventRepository,
    pub bus: &'a dyn EventBus,
    pub clock: &'a dyn Clock,
    observer: Option<ProgressObserver>,
    last: Mutex<Option<(GenerationProgress, Instant)>>,
}

impl<'a> LifecycleSink<'a> {
    pub fn new(
        session_id: &'a str,
        events: &'a dyn EventRepository,
        bus: &'a dyn EventBus,
        clock: &'a dyn Clock,
        observer: Option<ProgressObserver>,
    ) -> Self {
        Self {
            session_id,
            events,
            bus,
            clock,
            observer,
            last: Mutex::new(None),
        }
    }

    fn worth_publishing(&self, progress: &GenerationProgress) -> bool {
        let mut last = self.last.lock().unwrap_or_else(|poisoned| poisoned.into_inner());
        let previous = last.as_ref().map(|(previous, at)| (previous, at.elapsed()));
        let news = is_news(previous, progress);
        if news {
            *last = Some((*progress, Instant::now()));
        }
        news
    }

    pub async fn publish(&self, progress: GenerationProgress, extra: Map<String, Value>) {
        if !self.worth_publishing(&progress) {
            return;
        }
        if let Some(observer) = &self.observer {
            (observer.0)(&progress);
        }
        let mut payload = json!({ "stage": progress.stage.as_str() });
        let fields = payload.as_object_mut().expect("object");
        if progress.attempt > 1 || progress.stage == GenerationStage::Repairing {
            fields.insert("attempt".into(), json!(progress.attempt));
        }
        if let Some(chars) = progress.received_chars {
            fields.insert("receivedChars".into(), json!(chars));
        }
        if let Some(findings) = progress.findings {
            fields.insert("findings".into(), json!(findings));
        }
        fields.extend(extra);
        let complete = progress.stage == GenerationStage::Done;
        match self
            .events
            .append_stream(
                self.session_id,
                LIFECYCLE_CHANNEL,
                "replace",
                &payload,
                complete,
                self.clock.now(),
            )
            .await
        {
            Ok(envelope) => self.bus.publish(LiveEvent::data_stored(envelope)),
            // Progress is best effort; the render's own writes report a failing database.
            Err(e) => tracing::warn!(session_id = self.session_id, error = %e, "lifecycle delivery not stored"),
        }
    }
}

/// Whether `progress` is news after `previous` (published `elapsed` ago): another stage, a later
/// attempt, or a streaming update after the interval. The render's own `compiling` after a
/// generator's is not news.
fn is_news(previous: Option<(&GenerationProgress, Duration)>, progress: &GenerationProgress) -> bool {
    match previous {
        None => true,
        Some((previous, elapsed)) => {
            previous.stage != progress.stage
                || progress.attempt > previous.attempt
                || (progress.stage == GenerationStage::Streaming
                    && progress.received_chars != previous.received_chars
                    && elapsed >= STREAMING_INTERVAL)
        }
    }
}

#[async_trait::async_trait]
impl ProgressSink for LifecycleSink<'_> {
    async fn report(&self, progress: GenerationProgress) {
        self.publish(progress, Map::new()).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(stage: GenerationStage, attempt: u32) -> GenerationProgress {
        GenerationProgress::stage(stage, attempt)
    }

    fn streamed(chars: u64) -> GenerationProgress {
        GenerationProgress {
            received_chars: Some(chars),
            ..at(GenerationStage::Streaming, 1)
        }
    }

    #[test]
    fn stages_publish_once_and_streaming_is_throttled() {
        let now = Duration::ZERO;
        assert!(is_news(None, &at(GenerationStage::Queued, 1)));
        assert!(is_news(
            Some((&at(GenerationStage::Queued, 1), now)),
            &at(GenerationStage::Prompting, 1)
        ));
        // The render's `prompting` and `compiling` after the generator's are not repeated.
        assert!(!is_news(
            Some((&at(GenerationStage::Prompting, 1), now)),
            &at(GenerationStage::Prompting, 1)
        ));
        assert!(!is_news(
            Some((&at(GenerationStage::Compiling, 2), now)),
            &at(GenerationStage::Compiling, 1)
        ));
        // The repair round's stages are news again.
        assert!(is_news(
            Some((&at(GenerationStage::Prompting, 1), now)),
            &at(GenerationStage::Prompting, 2)
        ));
        // Streaming updates: only after the interval, and only with new text.
        assert!(!is_news(
            Some((&streamed(10), Duration::from_millis(10))),
            &streamed(20)
        ));
        assert!(is_news(Some((&streamed(10), STREAMING_INTERVAL)), &streamed(20)));
        assert!(!is_news(Some((&streamed(20), STREAMING_INTERVAL)), &streamed(20)));
    }
}
