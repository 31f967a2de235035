/// What an insert bounded by a count answers (at most so many apps per owner, blueprints per
/// app). A repository counts and inserts as one step, so concurrent inserts never pass the bound
/// together.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoundedInsert {
    Inserted,
    /// Nothing was written: the scope already held `stored` rows, as many as the bound or more.
    Full {
        stored: u64,
    },
}

/// Of a scope's live rows, oldest first, the ones to end so that one more row leaves at most
/// `max_live` live (a cap that ends the oldest rather than refusing the newest: connector keys
/// and console sessions per account).
pub fn oldest_past_cap<T>(live_oldest_first: &[T], max_live: u64) -> &[T] {
    let live = live_oldest_first.len() as u64;
    let excess = (live + 1).saturating_sub(max_live.max(1));
    &live_oldest_first[..excess.min(live) as usize]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_more_row_leaves_at_most_the_cap_live() {
        // (live, cap) -> how many of the oldest end
        let rows = [
            (0, 1, 0),
            (1, 1, 1),
            (3, 1, 3),
            (1, 2, 0),
            (2, 2, 1),
            (5, 2, 4),
            (2, 10, 0),
            (3, 0, 3),
        ];
        for (live, cap, ended) in rows {
            let rows: Vec<u32> = (0..live).collect();
            let expected: Vec<u32> = (0..ended).collect();
            assert_eq!(
                oldest_past_cap(&rows, cap),
                expected.as_slice(),
                "{live} live, cap {cap}"
            );
        }
    }
}
