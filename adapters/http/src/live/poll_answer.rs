//! One answer of the polling GET: the frames a poller has not seen, at most
//! [`ANSWER_BUDGET_BYTES`] of them, and cursors that point just past the last frame it carries.
//!
//! A replay may hold the whole buffer (8 MiB of stream payloads and 8 MiB of gestures); an answer
//! carries the oldest of it up to the budget and says `more`, and the next poll, from the
//! answer's cursors, goes on where it stopped: nothing is lost, doubled or reported lost twice.
//! The store reads only a replay's head (`Replay::cut` when it stopped early): a frame embeds its
//! stored JSON, so the head holds every frame the budget admits, and a head carried whole that
//! was cut still says `more`.

use serde::Serialize;
use serde_json::value::RawValue;
use svc_application::ports::agent::{ActionEventRecord, StreamEnvelope};
use svc_application::services::agent::Replay;

use super::frames;

/// Frame bytes one answer carries at most, besides the frames that always go first (`ack`,
/// `props_update`, `replay_gap`); a single frame larger than the budget goes alone.
pub const ANSWER_BUDGET_BYTES: usize = 1024 * 1024;

/// Where the next poll resumes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct Cursors {
    pub revision: i64,
    pub last_stream_seq: i64,
    pub last_sequence: i64,
}

/// The GET's JSON body.
#[derive(Debug, Serialize)]
pub struct Answer {
    pub frames: Vec<Box<RawValue>>,
    pub cursors: Cursors,
    /// Frames were left out for the budget: poll again at once.
    pub more: bool,
}

/// A replay the poll asked for: its cursor and what the store returned after it.
pub struct Asked<T> {
    pub after: i64,
    pub replay: Replay<T>,
}

/// What one answer is made of, in the order it carries it.
pub struct Pending {
    pub revision: i64,
    /// `ack`, `props_update` and `replay_gap`: always carried, whatever the budget.
    pub leading: Vec<String>,
    /// `render_event`s after `sinceSequence`, or `None` without one.
    pub actions: Option<Asked<ActionEventRecord>>,
    /// `data` after `fromSeq`, or `None` without one.
    pub streams: Option<Asked<StreamEnvelope>>,
    /// The session's gesture sequence: the cursor of a poller that has seen every gesture.
    pub event_sequence: i64,
    /// The session's last stream `seq`: the cursor of a poller that has seen every envelope.
    pub last_stream_seq: i64,
}

impl Pending {
    /// The answer of at most `budget` bytes of replayed frames (always one, if any).
    pub fn answer(self, budget: usize) -> Answer {
        let mut filling = Filling {
            frames: Vec::new(),
            bytes: 0,
            budget,
            full: false,
        };
        for frame in self.leading {
            filling.always(frame);
        }
        let last_sequence = match &self.actions {
            None => self.event_sequence,
            Some(asked) => {
                let whole = asked
                    .replay
                    .items
                    .last()
                    .map_or(self.event_sequence, |last| last.sequence.max(self.event_sequence));
                filling.replay(asked, |e| e.sequence, frames::render_event, whole)
            }
        };
        let last_stream_seq = match &self.streams {
            None => self.last_stream_seq,
            Some(asked) => {
                let whole = asked.replay.items.last().map_or(self.last_stream_seq, |last| last.seq);
                filling.replay(asked, |e| e.seq, frames::data, whole)
            }
        };
        Answer {
            frames: filling.frames,
            cursors: Cursors {
                revision: self.revision,
                last_stream_seq,
                last_sequence,
            },
            more: filling.full,
        }
    }
}

/// The answer's frames so far.
struct Filling {
    frames: Vec<Box<RawValue>>,
    bytes: usize,
    budget: usize,
    /// A frame was left out: nothing after it goes either, so the cursors stay in order.
    full: bool,
}

impl Filling {
    fn always(&mut self, frame: String) {
        self.bytes += frame.len();
        self.frames.push(raw(frame));
    }

    /// Adds `frame` unless it would pass the budget; the first frame of an answer always goes,
    /// so every answer moves its poller on.
    fn offer(&mut self, frame: String) -> bool {
        if self.full || (!self.frames.is_empty() && self.bytes + frame.len() > self.budget) {
            self.full = true;
            return false;
        }
        self.always(frame);
        true
    }

    /// Adds `asked`'s frames while they fit; its cursor after this answer: `whole` when every
    /// frame of the whole replay went, else the position of the last that went, else (none
    /// went) where the poll asked from, or just before the replay's first frame when a gap came
    /// before it: the `replay_gap` was carried, and the next poll must not be told of it again.
    fn replay<T>(&mut self, asked: &Asked<T>, position: fn(&T) -> i64, frame: fn(&T) -> String, whole: i64) -> i64 {
        let items = &asked.replay.items;
        let carried = items.iter().take_while(|item| self.offer(frame(item))).count();
        // The head went whole, but the store left newer items unread: they wait for the next poll.
        if carried == items.len() && asked.replay.cut {
            self.full = true;
        }
        match (carried, items.first()) {
            (n, _) if n == items.len() && !asked.replay.cut => whole,
            (0, Some(first)) if asked.replay.gap => position(first) - 1,
            (0, _) => asked.after,
            (n, _) => position(&items[n - 1]),
        }
    }
}

fn raw(frame: String) -> Box<RawValue> {
    // Frames are built by `frames`, from `json!`: always one JSON value.
    RawValue::from_string(frame).expect("a frame is JSON")
}

#[cfg(test)]
mod tests {
    use chrono::{TimeZone, Utc};
    use serde_json::{Value, json};

    use super::*;

    fn envelope(seq: i64, bytes: usize) -> StreamEnvelope {
        StreamEnvelope {
            session_id: "s".into(),
            channel: "log".into(),
            seq,
            mode: "append".into(),
            payload: json!("x".repeat(bytes)),
            complete: false,
            timestamp: Utc.timestamp_opt(0, 0).unwrap(),
        }
    }

    fn gesture(sequence: i64, bytes: usize) -> ActionEventRecord {
        ActionEventRecord {
            session_id: "s".into(),
            sequence,
            client_seq: None,
            intent: "go".into(),
            action_data: json!({ "note": "y".repeat(bytes) }),
            ui_context: json!({}),
            action_id: format!("a{sequence}"),
            fired_at: Utc.timestamp_opt(0, 0).unwrap(),
        }
    }

    fn asked<T>((after, items, gap): (i64, Vec<T>, bool)) -> Asked<T> {
        Asked {
            after,
            replay: Replay { items, gap, cut: false },
        }
    }

    fn pending(
        actions: Option<(i64, Vec<ActionEventRecord>, bool)>,
        streams: Option<(i64, Vec<StreamEnvelope>, bool)>,
    ) -> Pending {
        Pending {
            revision: 3,
            leading: vec![],
            actions: actions.map(asked),
            streams: streams.map(asked),
            event_sequence: 40,
            last_stream_seq: 90,
        }
    }

    /// The (type, position) of each frame of `answer`.
    fn carried(answer: &Answer) -> Vec<(String, i64)> {
        answer
            .frames
            .iter()
            .map(|f| {
                let frame: Value = serde_json::from_str(f.get()).unwrap();
                let position = frame["payload"]["seq"]
                    .as_i64()
                    .or(frame["payload"]["sequence"].as_i64())
                    .unwrap_or(-1);
                (frame["type"].as_str().unwrap().to_owned(), position)
            })
            .collect()
    }

    fn frame_bytes(answer: &Answer) -> usize {
        answer.frames.iter().map(|f| f.get().len()).sum()
    }

    #[test]
    fn a_replay_past_the_budget_is_carried_over_answers_that_resume_where_the_last_stopped() {
        let all: Vec<StreamEnvelope> = (11..=20).map(|seq| envelope(seq, 300)).collect();
        let budget = 3 * frames::data(&all[0]).len();
        let mut seen = vec![];
        let mut after = 10;
        let mut answers = 0;
        loop {
            // The store answers every envelope after the cursor, as `replay_streams` does.
            let items: Vec<StreamEnvelope> = all.iter().filter(|e| e.seq > after).cloned().collect();
            let answer = pending(None, Some((after, items, false))).answer(budget);
            answers += 1;
            assert!(frame_bytes(&answer) <= budget, "answer {answers} is over the budget");
            let frames = carried(&answer);
            seen.extend(frames.iter().map(|(_, seq)| *seq));
            if let Some((_, last)) = frames.last() {
                assert_eq!(answer.cursors.last_stream_seq, *last, "the cursor is the last carried");
            }
            after = answer.cursors.last_stream_seq;
            if !answer.more {
                break;
            }
        }
        assert_eq!(seen, (11..=20).collect::<Vec<_>>(), "each once, in order");
        assert_eq!(answers, 4, "3 + 3 + 3 + 1");
        let done = pending(None, Some((after, vec![], false))).answer(budget);
        assert!(done.frames.is_empty() && !done.more);
        assert_eq!(
            done.cursors.last_stream_seq, 90,
            "nothing left: the session's own cursor"
        );
    }

    #[test]
    fn gestures_fill_the_budget_first_and_the_streams_cursor_stays_where_it_was_asked() {
        let gestures: Vec<ActionEventRecord> = (5..=8).map(|sequence| gesture(sequence, 500)).collect();
        let budget = 2 * frames::render_event(&gestures[0]).len();
        let answer = pending(Some((4, gestures, false)), Some((70, vec![envelope(71, 10)], false))).answer(budget);
        assert_eq!(
            carried(&answer),
            vec![("render_event".into(), 5), ("render_event".into(), 6)]
        );
        assert!(answer.more);
        assert_eq!(
            answer.cursors,
            Cursors {
                revision: 3,
                last_stream_seq: 70,
                last_sequence: 6
            },
            "the streams' cursor does not pass envelope 71, which was not carried"
        );
        // Everything fits: the cursors of a poller that has seen it all.
        let answer = pending(
            Some((4, vec![gesture(5, 1)], false)),
            Some((70, vec![envelope(71, 1)], false)),
        )
        .answer(ANSWER_BUDGET_BYTES);
        assert!(!answer.more);
        assert_eq!((answer.cursors.last_sequence, answer.cursors.last_stream_seq), (40, 71));
    }

    #[test]
    fn a_head_the_store_cut_short_says_more_and_its_cursor_stops_at_its_last_item() {
        // The store read only gestures 5 and 6 of the window (`cut`); the session is at 40.
        let mut head = pending(Some((4, vec![gesture(5, 1), gesture(6, 1)], false)), None);
        head.actions.as_mut().unwrap().replay.cut = true;
        let answer = head.answer(ANSWER_BUDGET_BYTES);
        assert_eq!(
            carried(&answer),
            vec![("render_event".into(), 5), ("render_event".into(), 6)]
        );
        assert!(answer.more, "gestures 7 to 40 wait for the next poll");
        assert_eq!(
            answer.cursors.last_sequence, 6,
            "not the session's 40: 7 on were not read"
        );
        assert_eq!(answer.cursors.last_stream_seq, 90);
    }

    #[test]
    fn a_frame_larger_than_the_budget_goes_alone_and_the_leading_frames_always_go() {
        let big = envelope(11, 5000);
        let answer = pending(None, Some((10, vec![big, envelope(12, 1)], false))).answer(100);
        assert_eq!(carried(&answer), vec![("data".into(), 11)]);
        assert!(answer.more);
        let mut with_leading = pending(None, Some((10, vec![envelope(11, 1)], false)));
        with_leading.leading = vec![frames::frame("props_update", json!({ "props": "p".repeat(500) }))];
        let answer = with_leading.answer(100);
        assert_eq!(carried(&answer), vec![("props_update".into(), -1)]);
        assert!(answer.more, "the envelope waits for the next answer");
        assert_eq!(answer.cursors.last_stream_seq, 10);
    }

    #[test]
    fn after_a_gap_an_answer_that_carries_none_of_the_replay_resumes_at_its_first_frame() {
        let mut gapped = pending(None, Some((2, vec![envelope(50, 1), envelope(51, 1)], true)));
        gapped.leading = vec![frames::frame(
            "system",
            json!({ "event": "replay_gap", "pad": "g".repeat(500) }),
        )];
        let answer = gapped.answer(100);
        assert_eq!(carried(&answer), vec![("system".into(), -1)]);
        assert_eq!(
            answer.cursors.last_stream_seq, 49,
            "the next poll asks from 49: envelope 50 is still in the buffer, no second gap"
        );
        let mut gapped = pending(Some((1, vec![gesture(30, 1)], true)), None);
        gapped.leading = vec![frames::frame(
            "system",
            json!({ "event": "replay_gap", "pad": "g".repeat(500) }),
        )];
        assert_eq!(gapped.answer(100).cursors.last_sequence, 29, "the same for gestures");
    }
}
