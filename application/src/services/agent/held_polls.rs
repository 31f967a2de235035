//! How many long-polls are held at once, per holder: an agent's `svc_consume` with a timeout
//! counts against its caller, a live channel HTTP poll against the key that minted its session's
//! token. Each held poll keeps a request, a bus subscription and its task, and a holder with many
//! HTTP/2 connections (200 streams each) could otherwise hold millions. A poll past its holder's
//! bound is answered at once, as with no wait: the answer is the same one a timeout of 0 gives,
//! so nothing is refused, and the holder's next poll may wait again once its others have ended.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use super::Caller;

/// Long-polls one holder may hold by default (`[limits] long_polls_per_caller`).
pub const DEFAULT_LONG_POLLS_PER_CALLER: usize = 1000;

/// Whose bound a poll counts against.
#[derive(Debug, Clone, Copy)]
pub enum PollHolder<'a> {
    /// `svc_consume`: the caller's app and principal, whatever key it uses.
    Caller(&'a Caller),
    /// A live channel HTTP poll, authenticated by its session's token: the key that minted the
    /// token, or the session itself when the token carries no key (`--dev-allow-all`).
    LiveToken {
        key_id: Option<&'a str>,
        session_id: &'a str,
    },
}

impl PollHolder<'_> {
    fn key(&self) -> String {
        match self {
            Self::Caller(caller) => format!("caller\u{1f}{}\u{1f}{}", caller.app_id, caller.principal_id),
            Self::LiveToken { key_id: Some(key), .. } => format!("key\u{1f}{key}"),
            Self::LiveToken {
                key_id: None,
                session_id,
            } => format!("session\u{1f}{session_id}"),
        }
    }
}

/// The held polls of every holder.
pub struct HeldPolls {
    per_holder: usize,
    held: Mutex<HashMap<String, usize>>,
}

/// One held poll; dropping it frees its place.
pub struct HeldPoll {
    polls: Arc<HeldPolls>,
    holder: String,
}

impl HeldPolls {
    pub fn new(per_holder: usize) -> Arc<Self> {
        Arc::new(Self {
            per_holder,
            held: Mutex::default(),
        })
    }

    /// A place for one more poll of `holder`; `None` when it holds its bound already.
    pub fn hold(self: &Arc<Self>, holder: PollHolder) -> Option<HeldPoll> {
        let key = holder.key();
        let mut held = self.held.lock().expect("held polls lock");
        let count = held.entry(key.clone()).or_default();
        if *count >= self.per_holder {
            if *count == 0 {
                held.remove(&key);
            }
            return None;
        }
        *count += 1;
        Some(HeldPoll {
            polls: self.clone(),
            holder: key,
        })
    }

    /// Polls `holder` holds now.
    pub fn held_by(&self, holder: PollHolder) -> usize {
        let held = self.held.lock().expect("held polls lock");
        held.get(&holder.key()).copied().unwrap_or(0)
    }
}

impl Drop for HeldPoll {
    fn drop(&mut self) {
        let mut held = self.polls.held.lock().expect("held polls lock");
        if let Some(count) = held.get_mut(&self.holder) {
            *count -= 1;
            if *count == 0 {
                held.remove(&self.holder);
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
        let first = polls.hold(PollHolder::Caller(&ada)).expect("one");
        let _second = polls.hold(PollHolder::Caller(&ada)).expect("two");
        assert!(
            polls.hold(PollHolder::Caller(&ada)).is_none(),
            "a third is past the bound"
        );
        assert!(
            polls.hold(PollHolder::Caller(&bob)).is_some(),
            "another caller has a bound of its own"
        );
        drop(first);
        assert_eq!(polls.held_by(PollHolder::Caller(&ada)), 1);
        assert!(
            polls.hold(PollHolder::Caller(&ada)).is_some(),
            "the ended poll's place is free again"
        );
    }

    #[test]
    fn a_callers_keys_share_one_bound_and_nothing_is_kept_for_idle_callers() {
        let polls = HeldPolls::new(1);
        let ada = caller("ada");
        let other_key = Caller {
            key_id: Some("another key".to_owned()),
            ..ada.clone()
        };
        let held = polls.hold(PollHolder::Caller(&ada)).expect("one");
        assert!(polls.hold(PollHolder::Caller(&other_key)).is_none());
        drop(held);
        assert!(
            polls.held.lock().unwrap().is_empty(),
            "no entry left for a caller holding none"
        );
        // A live token's polls count against its key, across sessions; without a key, its session.
        let polls = HeldPolls::new(1);
        let keyed = |session_id| PollHolder::LiveToken {
            key_id: Some("k1"),
            session_id,
        };
        let _held = polls.hold(keyed("s1")).expect("one");
        assert!(
            polls.hold(keyed("s2")).is_none(),
            "the key's bound, whatever the session"
        );
        let keyless = |session_id| PollHolder::LiveToken {
            key_id: None,
            session_id,
        };
        let _first = polls.hold(keyless("s1")).expect("one for s1");
        assert!(polls.hold(keyless("s1")).is_none());
        assert!(polls.hold(keyless("s2")).is_some(), "another session's own bound");
        let none = HeldPolls::new(0);
        assert!(none.hold(PollHolder::Caller(&ada)).is_none());
        assert!(none.held.lock().unwrap().is_empty());
    }
}
