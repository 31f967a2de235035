//! A cache hit's render on SQLite: its handshake's consume and its session's insert sent as one
//! statement list, one round trip to sqlx's SQLite worker thread instead of two. In a
//! group-commit batch every statement is such a round trip, and those hand-offs, not SQLite's
//! work, are most of a batch's time (issue 18, BENCHMARKS.md, session 25).
//!
//! The insert selects its row only when the consume changed one (SQLite's `changes()` is the
//! count of the statement before it), so a render that lost its handshake writes nothing, as
//! when the two statements were sent apart. That holds while the insert comes right after the
//! update in one list and neither has a trigger, an upsert or `OR REPLACE`. sqlx binds a
//! missing value as NULL without a word, so the values are the two built statements' own.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, Query};
use sea_orm::{ActiveModelTrait, ConnectionTrait, DbBackend, DbErr, Iterable, QueryTrait, Statement};

use super::entities::session;
use super::handshakes::{consume_statement, release_row};
use crate::group_commit::refused_by_constraint;

/// Whether the render won its handshake, from the rows the statement's insert changed (its
/// count in a group-commit list): the insert selects its row only when the consume changed one.
pub(super) fn won_by_inserted_rows(rows: u64) -> Option<bool> {
    match rows {
        0 => Some(false),
        1 => Some(true),
        _ => None,
    }
}

/// Runs `both` ([`consume_then_insert`] of `handshake_id`): consumes the handshake and stores the
/// session when the consume won; answers whether it won. A session a constraint refuses releases
/// the consume again (by a statement of its own: SQLite undid only the refused insert), so the
/// work writes both or neither (`Undo::Compensated`).
pub(super) async fn consume_into_session<C: ConnectionTrait>(
    c: &C,
    handshake_id: String,
    both: Statement,
) -> Result<bool, DbErr> {
    match c.execute_raw(both).await {
        Ok(done) => match done.rows_affected() {
            0 => Ok(false),
            2 => Ok(true),
            // A consume without its session would strand the handshake: fail the work (its
            // batch is abandoned, nothing of it commits).
            other => Err(DbErr::Custom(format!(
                "a render's consume and session changed {other} rows, not 0 or 2"
            ))),
        },
        Err(failed) => {
            if refused_by_constraint(&failed) {
                release_row(c, handshake_id).await?;
            }
            Err(failed)
        }
    }
}

/// `UPDATE handshakes ... ; INSERT INTO sessions (...) SELECT ... WHERE changes() = 1`, its
/// values the two statements' in order (sqlx binds a list's `?` across its statements).
pub(super) fn consume_then_insert(
    handshake_id: &str,
    at: DateTime<Utc>,
    session: &session::ActiveModel,
) -> Result<Statement, DbErr> {
    let consume = consume_statement(handshake_id, at).build(DbBackend::Sqlite);
    let insert = insert_if_consumed(session)?;
    let mut values = consume.values.map(|v| v.0).unwrap_or_default();
    values.extend(insert.values.map(|v| v.0).unwrap_or_default());
    Ok(Statement::from_sql_and_values(
        DbBackend::Sqlite,
        format!("{}; {}", consume.sql, insert.sql),
        values,
    ))
}

/// The session's insert with its row selected only when the statement before it changed one.
fn insert_if_consumed(session: &session::ActiveModel) -> Result<Statement, DbErr> {
    let (columns, values): (Vec<session::Column>, Vec<_>) = session::Column::iter()
        .filter_map(|column| session.get(column).into_value().map(|value| (column, value)))
        .unzip();
    let row = Query::select()
        .exprs(values.into_iter().map(Expr::val))
        .and_where(Expr::cust("changes() = 1"))
        .to_owned();
    let mut insert = Query::insert();
    insert
        .into_table(session::Entity)
        .columns(columns)
        .select_from(row)
        .map_err(|e| DbErr::Custom(format!("a session's insert: {e}")))?;
    Ok(DbBackend::Sqlite.build(&insert))
}
