//! A connection's task polled again at once when it woke itself while it was being polled.
//!
//! hyper's HTTP/1 dispatcher wakes its own task as it runs: when the handler first polls a
//! request's body it tells the dispatcher (the same task) that it wants the body, and the body
//! then comes to it through a channel whose reader is that task too. Tokio reschedules a task
//! woken during its own poll as a yield: to the back of the worker's queue, waking a parked
//! worker to come and take it. So on every POST the other worker thread woke (two futex calls),
//! looked for work and slept again, or carried the connection over to the other core: on a
//! 2-core machine under load, that is time taken from the work and the client (issue 18;
//! BENCHMARKS.md, session 42). Here such a poll goes again within the same turn instead, at
//! most [`AGAIN_AT_MOST`] times, then the task yields as before: hyper also wakes itself on
//! purpose to yield (its HTTP/1 loop after 16 rounds of pipelined requests or body chunks, its
//! HTTP/2 keep-alive ping), so one busy connection holds its worker for at most four of those
//! rounds a turn. (Tokio's own cooperative budget and `yield_now` wake the task after its poll,
//! and so reach the scheduler as before.)

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU8, Ordering};
use std::task::{Context, Poll, Wake, Waker};

use futures_util::task::AtomicWaker;

/// Polls of one turn, the first included.
const AGAIN_AT_MOST: usize = 4;

/// Not being polled: a wake goes to the scheduler.
const IDLE: u8 = 0;
/// Being polled: a wake is noted, and the poll goes again.
const POLLING: u8 = 1;
/// Being polled, and woken meanwhile.
const WOKEN: u8 = 2;

/// The waker the wrapped future is given.
struct Wakes {
    state: AtomicU8,
    /// The task's own waker, for wakes that come between polls.
    task: AtomicWaker,
}

impl Wake for Wakes {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // One atomic step: a wake that sees the poll end (IDLE) reaches the scheduler, one that
        // lands before it is seen by the poll's end.
        match self
            .state
            .compare_exchange(POLLING, WOKEN, Ordering::AcqRel, Ordering::Acquire)
        {
            Ok(_) | Err(WOKEN) => {}
            Err(_) => self.task.wake(),
        }
    }
}

pin_project_lite::pin_project! {
    /// `inner`, polled again while its poll woke it (see the module's comment).
    pub struct RepolledWhenSelfWoken<F> {
        #[pin]
        inner: F,
        wakes: Arc<Wakes>,
        waker: Waker,
    }
}

impl<F> RepolledWhenSelfWoken<F> {
    pub fn new(inner: F) -> Self {
        let wakes = Arc::new(Wakes {
            state: AtomicU8::new(IDLE),
            task: AtomicWaker::new(),
        });
        let waker = Waker::from(wakes.clone());
        Self { inner, wakes, waker }
    }
}

impl<F: Future> Future for RepolledWhenSelfWoken<F> {
    type Output = F::Output;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        let mut this = self.project();
        this.wakes.task.register(cx.waker());
        let mut inner_cx = Context::from_waker(this.waker);
        for _ in 0..AGAIN_AT_MOST {
            this.wakes.state.store(POLLING, Ordering::Release);
            let polled = this.inner.as_mut().poll(&mut inner_cx);
            let woken = this.wakes.state.swap(IDLE, Ordering::AcqRel) == WOKEN;
            if polled.is_ready() || !woken {
                return polled;
            }
        }
        // Still waking itself: the others run first.
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicBool, AtomicUsize};

    /// Counts the wakes that reach the task.
    struct Counted(AtomicUsize);

    impl Wake for Counted {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, Ordering::SeqCst);
        }
    }

    fn poll_once<F: Future + Unpin>(future: &mut F, task: &Arc<Counted>) -> Poll<F::Output> {
        let waker = Waker::from(task.clone());
        Pin::new(future).poll(&mut Context::from_waker(&waker))
    }

    /// Wakes itself during its first `self_wakes` polls, then is ready.
    struct WakesItself {
        self_wakes: usize,
        polls: usize,
    }

    impl Future for WakesItself {
        type Output = usize;

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<usize> {
            self.polls += 1;
            if self.polls > self.self_wakes {
                return Poll::Ready(self.polls);
            }
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[test]
    fn a_poll_that_woke_itself_goes_again_without_the_scheduler() {
        let task = Arc::new(Counted(AtomicUsize::new(0)));
        let mut future = RepolledWhenSelfWoken::new(WakesItself {
            self_wakes: 2,
            polls: 0,
        });
        assert_eq!(poll_once(&mut future, &task), Poll::Ready(3));
        assert_eq!(task.0.load(Ordering::SeqCst), 0, "no wake reached the task");
    }

    #[test]
    fn a_future_that_keeps_waking_itself_still_yields() {
        let task = Arc::new(Counted(AtomicUsize::new(0)));
        let mut future = RepolledWhenSelfWoken::new(WakesItself {
            self_wakes: usize::MAX,
            polls: 0,
        });
        assert_eq!(poll_once(&mut future, &task), Poll::Pending);
        assert_eq!(future.inner.polls, AGAIN_AT_MOST);
        assert_eq!(task.0.load(Ordering::SeqCst), 1, "the task was asked to run again");
    }

    /// Pending until `ready` is set, keeping the last waker it was given.
    struct Waits {
        ready: bool,
        waker: Option<Waker>,
    }

    impl Future for Waits {
        type Output = ();

        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.ready {
                return Poll::Ready(());
            }
            self.waker = Some(cx.waker().clone());
            Poll::Pending
        }
    }

    #[test]
    fn a_wake_between_polls_reaches_the_task_from_any_thread() {
        let task = Arc::new(Counted(AtomicUsize::new(0)));
        let mut future = RepolledWhenSelfWoken::new(Waits {
            ready: false,
            waker: None,
        });
        assert_eq!(poll_once(&mut future, &task), Poll::Pending);
        let kept = future.inner.waker.clone().unwrap();
        std::thread::spawn(move || kept.wake()).join().unwrap();
        assert_eq!(task.0.load(Ordering::SeqCst), 1);
        future.inner.ready = true;
        assert_eq!(poll_once(&mut future, &task), Poll::Ready(()));
    }

    /// Ready once `ready` is set; keeps the waker it was last given where a waking thread finds it.
    struct SetElsewhere {
        ready: Arc<AtomicBool>,
        waker: Arc<std::sync::Mutex<Option<Waker>>>,
    }

    impl Future for SetElsewhere {
        type Output = ();

        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            *self.waker.lock().unwrap() = Some(cx.waker().clone());
            if self.ready.load(Ordering::SeqCst) {
                return Poll::Ready(());
            }
            Poll::Pending
        }
    }

    /// Another thread sets the flag and wakes at every moment of the poll (before it, inside it,
    /// as it ends, after it): the task is always either ready at once or woken. A wake lost
    /// between the poll's end and its look at the state would leave the task asleep for good.
    /// The waking thread starts at a varying delay, so over the rounds it lands everywhere.
    #[test]
    fn a_wake_from_another_thread_during_a_poll_is_never_lost() {
        for round in 0..20_000u32 {
            let ready = Arc::new(AtomicBool::new(false));
            let kept = Arc::new(std::sync::Mutex::new(None::<Waker>));
            let task = Arc::new(Counted(AtomicUsize::new(0)));
            let mut future = RepolledWhenSelfWoken::new(SetElsewhere {
                ready: ready.clone(),
                waker: kept.clone(),
            });
            let go = Arc::new(AtomicBool::new(false));
            let waking = {
                let (ready, kept, go) = (ready.clone(), kept.clone(), go.clone());
                std::thread::spawn(move || {
                    while !go.load(Ordering::SeqCst) {
                        std::hint::spin_loop();
                    }
                    for _ in 0..(round % 64) {
                        std::hint::spin_loop();
                    }
                    ready.store(true, Ordering::SeqCst);
                    if let Some(waker) = kept.lock().unwrap().take() {
                        waker.wake();
                    }
                })
            };
            // The first poll hands out the waker; the waking thread is released just before it.
            go.store(true, Ordering::SeqCst);
            let mut finished = poll_once(&mut future, &task).is_ready();
            waking.join().unwrap();
            if !finished {
                // Pending: the only way on is a wake that reached the task.
                assert!(task.0.load(Ordering::SeqCst) >= 1, "round {round}: the wake was lost");
                finished = poll_once(&mut future, &task).is_ready();
            }
            assert!(finished, "round {round}");
        }
    }
}
