//! Polling one of a task's sources only when that source woke the task.
//!
//! A `select!` polls its branches whenever the task wakes, whatever woke it. A live socket's
//! task wakes for every event it hears (a thousand sockets at once for one `svc_emit`), and
//! polling its other sources each time was most of what the socket added to the framework's
//! own broadcast (issue 18): the read zero-fills its buffer before every attempt (tungstenite)
//! and takes the lock it shares with the write half; the server's shutdown signal and a key's
//! end are `Notify` waits, whose every poll takes the one lock all their waiters share.
//!
//! A [`WakeGate`] polls its source with a waker of its own, which marks the gate before it wakes
//! the task; while unmarked, the source is not polled at all.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

/// One source's gate: polled at first, then again only after it woke the task.
pub(super) struct WakeGate {
    mark: Arc<Mark>,
    /// The waker the source is polled with: marks the gate, then wakes the task.
    waker: Waker,
}

struct Mark {
    woken: AtomicBool,
    task: AtomicWaker,
}

impl Wake for Mark {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, Ordering::Release);
        self.task.wake();
    }
}

impl Default for WakeGate {
    fn default() -> Self {
        let mark = Arc::new(Mark {
            woken: AtomicBool::new(true),
            task: AtomicWaker::new(),
        });
        let waker = Waker::from(mark.clone());
        Self { mark, waker }
    }
}

impl WakeGate {
    /// Polls the source with `poll` if it woke the task since it was last polled (or was never
    /// polled); otherwise answers `Pending` without polling it. A source that answered `Ready` is
    /// polled on the next call too: it may have more without waking anyone.
    pub(super) fn poll<T>(&self, cx: &mut Context<'_>, poll: impl FnOnce(&mut Context<'_>) -> Poll<T>) -> Poll<T> {
        self.mark.task.register(cx.waker());
        // Unmarked before the poll, so a wake during it marks the gate again.
        if !self.mark.woken.swap(false, Ordering::AcqRel) {
            return Poll::Pending;
        }
        let answer = poll(&mut Context::from_waker(&self.waker));
        if answer.is_ready() {
            self.mark.woken.store(true, Ordering::Release);
        }
        answer
    }
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::AtomicUsize;

    use super::*;

    /// A source that counts its polls and keeps the last waker it was given.
    #[derive(Default)]
    struct Source {
        polls: AtomicUsize,
        waker: std::sync::Mutex<Option<Waker>>,
        ready: AtomicBool,
    }

    impl Source {
        fn poll(&self, cx: &mut Context<'_>) -> Poll<()> {
            self.polls.fetch_add(1, Ordering::SeqCst);
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            if self.ready.load(Ordering::SeqCst) {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }

        fn wake(&self) {
            if let Some(waker) = self.waker.lock().unwrap().take() {
                waker.wake();
            }
        }

        fn polls(&self) -> usize {
            self.polls.load(Ordering::SeqCst)
        }
    }

    /// A task waker that counts its wakes.
    #[derive(Default)]
    struct Task(AtomicUsize);

    impl Wake for Task {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    #[test]
    fn a_source_is_polled_first_and_then_only_after_it_woke_the_task() {
        let (gate, source, task) = (WakeGate::default(), Source::default(), Arc::new(Task::default()));
        let waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(gate.poll(&mut cx, |cx| source.poll(cx)).is_pending());
        // The task woke for something else: the source is not asked.
        for _ in 0..5 {
            assert!(gate.poll(&mut cx, |cx| source.poll(cx)).is_pending());
        }
        assert_eq!(source.polls(), 1);
        // The source wakes: the task is woken and the source asked once more.
        source.ready.store(true, Ordering::SeqCst);
        source.wake();
        assert_eq!(task.0.load(Ordering::SeqCst), 1);
        assert!(gate.poll(&mut cx, |cx| source.poll(cx)).is_ready());
        assert_eq!(source.polls(), 2);
        // Ready: asked again next time without a wake (it may hold more).
        assert!(gate.poll(&mut cx, |cx| source.poll(cx)).is_ready());
        assert_eq!(source.polls(), 3);
    }

    #[test]
    fn a_wake_during_the_poll_is_not_lost() {
        let (gate, task) = (WakeGate::default(), Arc::new(Task::default()));
        let waker = Waker::from(task.clone());
        let mut cx = Context::from_waker(&waker);
        // The source wakes its waker while it answers Pending (as a coop-budget yield does).
        assert!(
            gate.poll(&mut cx, |cx| {
                cx.waker().wake_by_ref();
                Poll::<()>::Pending
            })
            .is_pending()
        );
        assert_eq!(task.0.load(Ordering::SeqCst), 1, "the task is woken");
        let mut asked = false;
        let _ = gate.poll(&mut cx, |_| {
            asked = true;
            Poll::<()>::Pending
        });
        assert!(asked, "and the source asked again");
    }
}
