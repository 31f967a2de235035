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
