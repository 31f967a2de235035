//! How many long-polls one caller holds at once (`svc_consume` with a timeout; the live
//! channel's HTTP polls, whose caller is their session's token, are counted per session): each
//! held poll keeps a request, a bus subscription and its task, and a
//! caller with many HTTP/2 connections (200 streams each) could otherwise hold millions. A poll
//! past the caller's bound is answered at once, as with no wait: the answer is the same one a
//! timeout of 0 gives, so nothing is refused, and the caller's next poll may wait again once its
//! others have ended.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::Caller;

/// Long-polls one caller may hold by default (`[limits] long_polls_per_caller`).
pub const DEFAULT_LONG_POLLS_PER_CALLER: usize = 1000;

/// The held polls of every caller, counted by the caller's app and principal (not by key: a
/// caller's keys share one bound).
pub struct HeldPolls {
    per_caller: usize,
    held: Mutex<HashMap<String, usize>>,
}

/// One held poll; dropping it frees its place.
pub struct HeldPoll {
    polls: Arc<HeldPolls>,
    caller: String,
}

impl HeldPolls {
    pub fn new(per_caller: usize) -> Arc<Self> {
        Arc::new(Self {
            per_caller,
            held: Mutex::default(),
        })
    }

    /// A place for one more poll of `caller`; `None` when the caller holds its bound already.
    pub fn hold(self: &Arc<Self>, caller: &Caller) -> Option<HeldPoll> {
        let key = format!("{}\u{1f}{}", caller.app_id, caller.principal_id);
        let mut held = self.held.lock().expect("held polls lock");
        let count = held.entry(key.clone()).or_default();
        if *count >= self.per_caller {
            if *count == 0 {
                held.remove(&key);
            }
            return None;
        }
        *count += 1;
        Some(HeldPoll {
            polls: self.clone(),
            caller: key,
        })
    }

    /// Polls `caller` holds now.
    pub fn held_by(&self, caller: &Caller) -> usize {
        let key = format!("{}\u{1f}{}", caller.app_id, caller.principal_id);
        self.held
            .lock()
            .expect("held polls lock")
            .get(&key)
            .copied()
            .unwrap_or(0)
    }
}

impl Drop for HeldPoll {
    fn drop(&mut self) {
        let mut held = self.polls.held.lock().expect("held polls lock");
        if let Some(count) = held.get_mut(&self.caller) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.caller);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn caller(principal: &str) -> Caller {
        Caller {
            principal_id: principal.to_owned(),
            app_id: "app".to_owned(),
            key_id: Some(format!("key-of-{principal}")),
        }
    }

    #[test]
    fn a_caller_holds_its_bound_and_a_place_frees_when_a_poll_ends() {
        let polls = HeldPolls::new(2);
        let (ada, bob) = (caller("ada"), caller("bob"));
        let first = polls.hold(&ada).expect("one");
        let _second = polls.hold(&ada).expect("two");
        assert!(polls.hold(&ada).is_none(), "a third is past the bound");
        assert!(polls.hold(&bob).is_some(), "another caller has a bound of its own");
        drop(first);
        assert_eq!(polls.held_by(&ada), 1);
        assert!(polls.hold(&ada).is_some(), "the ended poll's place is free again");
    }

    #[test]
    fn a_callers_keys_share_one_bound_and_nothing_is_kept_for_idle_callers() {
        let polls = HeldPolls::new(1);
        let ada = caller("ada");
        let other_key = Caller {
            key_id: Some("another key".to_owned()),
            ..ada.clone()
        };
        let held = polls.hold(&ada).expect("one");
        assert!(polls.hold(&other_key).is_none());
        drop(held);
        assert!(
            polls.held.lock().unwrap().is_empty(),
            "no entry left for a caller holding none"
        );
        let none = HeldPolls::new(0);
        assert!(none.hold(&ada).is_none());
        assert!(none.held.lock().unwrap().is_empty());
    }
}
