//! A batch's coalescable writes sent together (SQLite). Each statement of a batch is a round trip
//! to sqlx's SQLite worker thread, and those hand-offs, not SQLite's work, were most of a batch's
//! time (issue 18, BENCHMARKS.md, sessions 25 and 26): the batch's writes that share their
//! statement's text run as one statement list instead.
//!
//! A list is `S; SELECT changes(); S; SELECT changes(); ...`, bound with every statement's values
//! in turn (sqlx binds a list's `?` across its statements). Each `SELECT changes()` answers the
//! rows the statement before it changed (sqlx's own per-statement count cannot say it: it reports
//! `sqlite3_changes()` after every statement, which repeats the last write's count after a
//! `SELECT`), and each write reads its answer from its count. A list that fails (a constraint
//! refused a row, anything else) stops where it failed; the batch then rolls back and runs each
//! write alone (`commit_batch`).
//!
//! A group is cut into lists of at most [`MOST_TOGETHER`] writes, any size up to it (a batch's
//! seven handshakes are one round trip, not three as 4 + 2 + 1). Each size is a list text of its
//! own, which every pooled connection that runs a batch prepares and keeps: about 5 KB per
//! handshake and 10 KB per render in a list, so the sizes 2 to 8 of the two kinds cost a
//! connection about half a megabyte (sizes up to 16 would cost it 2 MB, for batches that rarely
//! hold more than eight of one kind: at 16 connections a commit carries about seven writes).

use sea_orm::{ConnectionTrait, DatabaseTransaction, DbBackend, Statement};

use super::Work;

/// The most writes one list carries.
const MOST_TOGETHER: usize = 8;
const COUNT: &str = "; SELECT changes()";

/// A coalescable write's statement, and whether it can go in a list.
pub(super) struct Shape {
    statement: Statement,
    listable: bool,
}

impl Shape {
    /// A statement goes in a list only when its values bind in order: sqlx binds a list's values
    /// by absolute position, so one that numbers its parameters (`?1`, `$1`, `:name`) would bind
    /// every write to the first write's values, and one whose `?` do not match its values would
    /// bind the next write's (or NULL, silently). Any other runs alone.
    pub(super) fn new(statement: Statement) -> Self {
        let values = statement.values.as_ref().map_or(0, |values| values.0.len());
        let sql = statement.sql.as_bytes();
        let placeholders = sql.iter().filter(|byte| **byte == b'?').count();
        let numbered = sql.windows(2).any(|pair| pair[0] == b'?' && pair[1].is_ascii_digit())
            || sql.iter().any(|byte| matches!(byte, b'$' | b':' | b'@'));
        let listable = placeholders == values && !numbered;
        Self { statement, listable }
    }

    pub(super) fn into_statement(self) -> Statement {
        self.statement
    }
}

/// `jobs` as lists (on SQLite, the coalescable writes that share their statement's text with
/// others) and the writes that run alone: the others in the order they came, then the
/// coalescable writes left over from their lists.
pub(super) fn split(jobs: Vec<Work>, sqlite: bool) -> (Vec<Vec<Work>>, Vec<Work>) {
    let mut alone = Vec::with_capacity(jobs.len());
    // Few kinds of coalescable write exist, so a scan finds a job's group quickly.
    let mut groups: Vec<Vec<Work>> = Vec::new();
    for job in jobs {
        let Some(shape) = job.shape.as_ref().filter(|shape| sqlite && shape.listable) else {
            alone.push(job);
            continue;
        };
        match groups.iter_mut().find(|group| same_text(&group[0], shape)) {
            Some(group) => group.push(job),
            None => groups.push(vec![job]),
        }
    }
    let mut lists = Vec::new();
    for mut group in groups {
        for size in chunk_sizes(group.len()) {
            let rest = group.split_off(size);
            let chunk = std::mem::replace(&mut group, rest);
            match size {
                1 => alone.extend(chunk),
                _ => lists.push(chunk),
            }
        }
    }
    (lists, alone)
}

fn same_text(job: &Work, shape: &Shape) -> bool {
    job.shape
        .as_ref()
        .is_some_and(|theirs| theirs.statement.sql == shape.statement.sql)
}

/// `count` as chunks of [`MOST_TOGETHER`], then what is left.
fn chunk_sizes(mut count: usize) -> impl Iterator<Item = usize> {
    std::iter::from_fn(move || {
        let size = count.min(MOST_TOGETHER);
        count -= size;
        (size > 0).then_some(size)
    })
}

/// Runs each list in `txn`: every write with the rows its last statement changed, or, when a
/// list failed (and the transaction holds part of it), every write of every list, unanswered.
pub(super) async fn run(txn: &DatabaseTransaction, lists: Vec<Vec<Work>>) -> Result<Vec<(Work, u64)>, Vec<Work>> {
    let mut written = Vec::new();
    let mut lists = lists.into_iter();
    while let Some(list) = lists.next() {
        let failure = match txn.query_all_raw(list_of(&list)).await {
            Ok(rows) => match counts(&rows, list.len()) {
                Some(counts) => {
                    written.extend(list.into_iter().zip(counts));
                    continue;
                }
                None => format!(
                    "a statement list answered {} counts for {} writes",
                    rows.len(),
                    list.len()
                ),
            },
            Err(error) => error.to_string(),
        };
        // Each write meets its own failure again when it runs alone.
        tracing::debug!(%failure, "group commit: a statement list failed; the batch runs one by one");
        let unanswered = written.into_iter().map(|(job, _)| job);
        return Err(unanswered.chain(list).chain(lists.flatten()).collect());
    }
    Ok(written)
}

/// The list of `jobs`' statements, each followed by the count of the rows it changed.
fn list_of(jobs: &[Work]) -> Statement {
    let shapes: Vec<&Shape> = jobs.iter().filter_map(|job| job.shape.as_ref()).collect();
    let texts: usize = shapes
        .iter()
        .map(|shape| shape.statement.sql.len() + COUNT.len() + 2)
        .sum();
    let mut sql = String::with_capacity(texts);
    let mut values = Vec::new();
    for shape in shapes {
        if !sql.is_empty() {
            sql.push_str("; ");
        }
        sql.push_str(shape.statement.sql.trim_end_matches(';'));
        sql.push_str(COUNT);
        if let Some(own) = &shape.statement.values {
            values.extend(own.0.iter().cloned());
        }
    }
    Statement::from_sql_and_values(DbBackend::Sqlite, sql, values)
}

/// Each write's count of rows, in order, when the list answered one per write.
fn counts(rows: &[sea_orm::QueryResult], writes: usize) -> Option<Vec<u64>> {
    if rows.len() != writes {
        return None;
    }
    rows.iter()
        .map(|row| {
            row.try_get_by_index::<i64>(0)
                .ok()
                .and_then(|count| u64::try_from(count).ok())
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_statements_bound_in_order_go_in_lists() {
        let shape = |sql: &str, values: Vec<sea_orm::Value>| {
            Shape::new(Statement::from_sql_and_values(DbBackend::Sqlite, sql, values)).listable
        };
        assert!(shape("INSERT INTO t (a, b) VALUES (?, ?)", vec![1.into(), 2.into()]));
        assert!(
            !shape("INSERT INTO t (a, b) VALUES (?, ?)", vec![1.into()]),
            "a value missing"
        );
        assert!(!shape("INSERT INTO t (a, b) VALUES (?1, ?2)", vec![1.into(), 2.into()]));
        assert!(!shape("INSERT INTO t (a) VALUES ($1)", vec![1.into()]));
        assert!(!shape("INSERT INTO t (a) VALUES (:a)", vec![1.into()]));
    }

    #[test]
    fn a_group_is_cut_into_as_few_lists_as_fit() {
        let sizes = |count| chunk_sizes(count).collect::<Vec<_>>();
        assert_eq!(sizes(0), Vec::<usize>::new());
        assert_eq!(sizes(1), vec![1]);
        assert_eq!(sizes(7), vec![7]);
        assert_eq!(sizes(8), vec![8]);
        assert_eq!(sizes(17), vec![8, 8, 1]);
        assert_eq!(sizes(23), vec![8, 8, 7]);
        for count in 0..200 {
            let chunks = sizes(count);
            assert_eq!(chunks.iter().sum::<usize>(), count);
            assert_eq!(chunks.len(), count.div_ceil(MOST_TOGETHER), "{count}: {chunks:?}");
            assert!(chunks.iter().all(|size| *size <= MOST_TOGETHER));
        }
    }
}
