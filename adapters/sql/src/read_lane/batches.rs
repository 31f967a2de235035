//! The reads of one kind that wait together, asked in one statement.
//!
//! Up to [`STATEMENTS_PER_READ`] statements of a kind run at once; a read that arrives while
//! they all do waits, and when one of them ends every read waiting by then is asked in one
//! [`BatchedRead`] statement. So a lone read runs at once as it always did, and under load the
//! database answers many reads per statement: one round trip, one backend wake-up and one TLS
//! record each way for all of them (issue 18, BENCHMARKS.md).

use std::sync::{Arc, Mutex};
use std::time::Duration;

use sea_orm::sqlx::Row;
use sea_orm::sqlx::postgres::PgRow;
use tokio::sync::oneshot;

use super::ReadLane;
use crate::batched_read::{BatchedRead, POSITION_COLUMN};

/// Statements of one kind of read in flight at once before reads of that kind wait and share
/// the next one. One gave the most reads per second at 16 connections (two: 0.85x, four: 0.75x;
/// BENCHMARKS.md, issue 18, session 20).
const STATEMENTS_PER_READ: usize = 1;

/// At most this many keys in one statement (the rest share the one after it).
const KEYS_PER_STATEMENT: usize = 64;

/// The longest a read waits for a shared statement before it asks alone: a statement stuck on a
/// connection the network lost must not hold every read of its kind behind it.
pub(super) const LONGEST_WAIT: Duration = Duration::from_secs(1);

#[derive(Default)]
pub(super) struct Batches {
    kinds: Mutex<Vec<Kind>>,
}

struct Kind {
    read: Arc<BatchedRead>,
    in_flight: usize,
    waiting: Vec<Waiting>,
}

/// A read waiting for a shared statement. Its answer dropped unsent means "ask alone".
struct Waiting {
    key: String,
    answer: oneshot::Sender<Option<PgRow>>,
}

pub(super) enum Turn {
    /// Run the read now, holding one of its kind's statements until the guard drops.
    Now(Running),
    /// Wait for a shared statement; an `Err` (the statement failed) means: ask alone.
    Wait(oneshot::Receiver<Option<PgRow>>),
}

/// One statement of a kind in flight. Dropped (the read done, failed or abandoned), it hands the
/// reads waiting by then to a statement of their own.
pub(super) struct Running {
    lane: ReadLane,
    read: Arc<BatchedRead>,
}

impl Batches {
    pub(super) fn turn(&self, lane: &ReadLane, read: &Arc<BatchedRead>, key: &str) -> Turn {
        let mut kinds = self.kinds.lock().expect("read batches lock");
        let kind = match kinds.iter().position(|kind| Arc::ptr_eq(&kind.read, read)) {
            Some(at) => &mut kinds[at],
            None => {
                kinds.push(Kind {
                    read: read.clone(),
                    in_flight: 0,
                    waiting: Vec::new(),
                });
                kinds.last_mut().expect("just pushed")
            }
        };
        if kind.in_flight < STATEMENTS_PER_READ {
            kind.in_flight += 1;
            return Turn::Now(Running {
                lane: lane.clone(),
                read: read.clone(),
            });
        }
        let (answer, answered) = oneshot::channel();
        kind.waiting.push(Waiting {
            key: key.to_owned(),
            answer,
        });
        Turn::Wait(answered)
    }

    /// The reads of `read`'s kind waiting now (at most [`KEYS_PER_STATEMENT`]), or none, the
    /// caller's statement then counted out.
    fn next_or_leave(&self, read: &Arc<BatchedRead>) -> Vec<Waiting> {
        let mut kinds = self.kinds.lock().expect("read batches lock");
        let Some(kind) = kinds.iter_mut().find(|kind| Arc::ptr_eq(&kind.read, read)) else {
            return Vec::new();
        };
        kind.waiting.retain(|waiting| !waiting.answer.is_closed());
        if kind.waiting.is_empty() {
            kind.in_flight -= 1;
            return Vec::new();
        }
        let take = kind.waiting.len().min(KEYS_PER_STATEMENT);
        kind.waiting.drain(..take).collect()
    }
}

impl Drop for Running {
    fn drop(&mut self) {
        let waiting = self.lane.inner.batches.next_or_leave(&self.read);
        if waiting.is_empty() {
            return;
        }
        let slot = Slot {
            lane: self.lane.clone(),
            read: self.read.clone(),
            held: true,
        };
        // Without a runtime the slot drops here and gives itself back.
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            drop(runtime.spawn(ask_together(slot, waiting)));
        }
    }
}

/// A kind's statement slot, held by the task that asks its waiting reads together. Dropped while
/// still held (the task never ran because its runtime shut down, or it panicked), it gives the
/// slot back and drops the reads waiting for it, each of which then asks alone; otherwise
/// every later read of the kind would wait for a statement that never comes.
struct Slot {
    lane: ReadLane,
    read: Arc<BatchedRead>,
    held: bool,
}

impl Drop for Slot {
    fn drop(&mut self) {
        if self.held {
            while !self.lane.inner.batches.next_or_leave(&self.read).is_empty() {}
        }
    }
}

/// Asks `waiting` in one statement, then whoever waits by then, until nobody does.
async fn ask_together(mut slot: Slot, mut waiting: Vec<Waiting>) {
    while !waiting.is_empty() {
        let statement = slot.read.statement(waiting.iter().map(|w| w.key.as_str()));
        // A failed statement drops every answer: each read is then asked alone, and fails or
        // succeeds as it would have without company.
        if let Ok(rows) = slot.lane.rows(&statement).await {
            answer(waiting, rows);
        }
        waiting = slot.lane.inner.batches.next_or_leave(&slot.read);
    }
    slot.held = false;
}

/// Each waiting read its row (by position), `None` for those the statement found none for.
fn answer(waiting: Vec<Waiting>, rows: Vec<PgRow>) {
    let mut answers: Vec<Option<oneshot::Sender<Option<PgRow>>>> =
        waiting.into_iter().map(|w| Some(w.answer)).collect();
    for row in rows {
        let Ok(position) = row.try_get::<i64, _>(POSITION_COLUMN) else {
            // Not the shape this module builds: nobody is told "no row".
            return;
        };
        let sender = usize::try_from(position - 1)
            .ok()
            .and_then(|at| answers.get_mut(at))
            .and_then(Option::take);
        if let Some(sender) = sender {
            let _ = sender.send(Some(row));
        }
    }
    for sender in answers.into_iter().flatten() {
        let _ = sender.send(None);
    }
}
