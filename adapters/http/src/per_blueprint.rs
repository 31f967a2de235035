//! A value derived from a blueprint's component code, kept per blueprint: what is made from the
//! code once (its escaped JSON string, its module links) rather than for every render or mount
//! (issue 18). An entry serves only the code it was made from: it is compared with the caller's
//! code (a memory comparison, far cheaper than deriving again), so a blueprint whose code changed
//! is derived again.

use std::ops::Deref;
use std::sync::Arc;
use std::time::Duration;

use moka::sync::Cache;

/// A blueprint nobody renders or mounts leaves; the bound on memory is the capacity.
const IDLE: Duration = Duration::from_secs(600);

pub(crate) struct PerBlueprint<T> {
    kept: Cache<String, Arc<Derived<T>>>,
}

/// One blueprint's code and what was derived from it (reached through `Deref`).
pub(crate) struct Derived<T> {
    code: String,
    value: T,
}

impl<T> Deref for Derived<T> {
    type Target = T;

    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T: Send + Sync + 'static> PerBlueprint<T> {
    /// At most `capacity_bytes` kept, an entry weighing its code plus `weight` of its value.
    pub(crate) fn new(capacity_bytes: u64, weight: fn(&T) -> usize) -> Self {
        let kept = Cache::builder()
            .max_capacity(capacity_bytes)
            .weigher(move |_: &String, derived: &Arc<Derived<T>>| {
                u32::try_from(derived.code.len() + weight(&derived.value)).unwrap_or(u32::MAX)
            })
            .time_to_idle(IDLE)
            .build();
        Self { kept }
    }

    /// What `derive` makes of `code`, the component code of `blueprint_id`: kept from an earlier
    /// call with the same code, else derived now and kept (a failure is not).
    pub(crate) fn of<E>(
        &self,
        blueprint_id: &str,
        code: &str,
        derive: impl FnOnce(&str) -> Result<T, E>,
    ) -> Result<Arc<Derived<T>>, E> {
        if let Some(kept) = self.kept.get(blueprint_id)
            && kept.code == code
        {
            return Ok(kept);
        }
        let derived = Arc::new(Derived {
            code: code.to_owned(),
            value: derive(code)?,
        });
        self.kept.insert(blueprint_id.to_owned(), derived.clone());
        Ok(derived)
    }
}

#[cfg(test)]
mod tests {
    use std::cell::Cell;
    use std::convert::Infallible;

    use super::*;

    #[test]
    fn a_value_is_derived_once_per_code_and_again_when_the_code_changes() {
        let kept = PerBlueprint::<usize>::new(1024, |_| 8);
        let derivations = Cell::new(0);
        let length = |code: &str| -> Result<usize, Infallible> {
            derivations.set(derivations.get() + 1);
            Ok(code.len())
        };
        let first = kept.of("bp_1", "abc", length).unwrap();
        assert_eq!(**first, 3);
        assert!(Arc::ptr_eq(&first, &kept.of("bp_1", "abc", length).unwrap()), "kept");
        assert_eq!(derivations.get(), 1);
        assert_eq!(
            **kept.of("bp_1", "abcdef", length).unwrap(),
            6,
            "a changed code is derived again"
        );
        assert_eq!(
            **kept.of("bp_2", "abc", length).unwrap(),
            3,
            "each blueprint has its own"
        );
        assert_eq!(derivations.get(), 3);
    }

    #[test]
    fn a_failed_derivation_is_not_kept() {
        let kept = PerBlueprint::<usize>::new(1024, |_| 8);
        let attempts = Cell::new(0);
        let failing = |_: &str| -> Result<usize, &str> {
            attempts.set(attempts.get() + 1);
            Err("no")
        };
        assert!(kept.of("bp_1", "abc", failing).is_err());
        assert!(
            kept.of("bp_1", "abc", failing).is_err(),
            "tried again, not answered from the cache"
        );
        assert_eq!(attempts.get(), 2);
        assert_eq!(**kept.of("bp_1", "abc", |code| Ok::<_, &str>(code.len())).unwrap(), 3);
    }
}
