//! The in-memory stores' read of a replay window's head, by the rule the SQL repositories follow
//! (`EventRepository::streams_window_head`, `actions_window_head`).

use crate::ports::agent::WindowHead;
use crate::ports::retention::ReplayWindow;

/// The oldest of `whole` (a replay window, oldest first) while their `size`s together stay
/// within `read_bytes` (the first always), as the SQL repositories read a window's head.
pub(super) fn head_of<T>(
    mut whole: Vec<T>,
    after_cursor: usize,
    window: ReplayWindow,
    read_bytes: usize,
    size: impl Fn(&T) -> usize,
) -> WindowHead<T> {
    let mut total = 0usize;
    let taken = whole
        .iter()
        .enumerate()
        .take_while(|(i, row)| {
            total = total.saturating_add(size(row));
            *i == 0 || total <= read_bytes
        })
        .count();
    let cut = taken < whole.len();
    whole.truncate(taken);
    WindowHead {
        items: whole,
        cut,
        overflowed: after_cursor as u64 > window.count,
    }
}
