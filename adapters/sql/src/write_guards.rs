//! Write guards: an insert bounded by a count (at most so many apps per owner, blueprints per
//! app, versions per registry package; live keys and sessions per account) counts and inserts inside one transaction that first locks its scope's row in
//! `write_guards`. Concurrent inserts into one scope then queue: each counts what the one before
//! it committed, so none passes the bound, while other scopes are not held.
//!
//! The lock is an UPDATE of the row (its `taken_at`): a row lock until the transaction ends on
//! PostgreSQL and MySQL/MariaDB, where the count that follows reads what the previous holder
//! committed (a new statement's snapshot under READ COMMITTED; under REPEATABLE READ the
//! transaction's snapshot is taken by its first plain read, which comes after the lock). SQLite
//! begins every write transaction `IMMEDIATE`, one writer at a time.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection, DatabaseTransaction, DbErr, DeriveIden, ExprTrait};

use crate::errors::{RACE_ATTEMPTS, begin_write, lost_race};

#[derive(DeriveIden)]
enum WriteGuards {
    Table,
    Scope,
    Holder,
    TakenAt,
}

/// A bounded scope: what is counted, and whose.
#[derive(Debug, Clone, Copy)]
pub(crate) struct WriteGuard<'a> {
    scope: &'static str,
    holder: &'a str,
}

impl<'a> WriteGuard<'a> {
    /// The blueprints of one app.
    pub(crate) fn blueprints_of(app_id: &'a str) -> Self {
        Self {
            scope: "blueprints",
            holder: app_id,
        }
    }

    /// The versions of one registry package (`@scope/name`).
    pub(crate) fn versions_of(package: &'a str) -> Self {
        Self {
            scope: "registry_versions",
            holder: package,
        }
    }

    /// The orgs one account owns (hosted: `hosted.orgs_per_account`).
    pub(crate) fn orgs_of(owner_id: &'a str) -> Self {
        Self {
            scope: "orgs",
            holder: owner_id,
        }
    }

    /// The live connector keys of one account (hosted: `hosted.connector_keys_per_account`).
    pub(crate) fn connector_keys_of(owner_id: &'a str) -> Self {
        Self {
            scope: "connector_keys",
            holder: owner_id,
        }
    }

    /// The open console sessions of one principal (hosted: `hosted.console_sessions_per_account`).
    pub(crate) fn console_sessions_of(principal_id: &'a str) -> Self {
        Self {
            scope: "console_sessions",
            holder: principal_id,
        }
    }

    /// The apps of one owner.
    pub(crate) fn apps_of(owner_id: &'a str) -> Self {
        Self {
            scope: "apps",
            holder: owner_id,
        }
    }

    /// A write transaction that holds this scope's lock until it ends. A begin chosen as a
    /// deadlock victim (MariaDB, racing first uses of one scope) runs again rather than
    /// answering the caller's write as a storage failure.
    pub(crate) async fn begin(self, db: &DatabaseConnection, now: DateTime<Utc>) -> Result<DatabaseTransaction, DbErr> {
        let mut attempt = 1;
        loop {
            match self.try_begin(db, now).await {
                Err(error) if lost_race(&error) && attempt < RACE_ATTEMPTS => attempt += 1,
                begun => return begun,
            }
        }
    }

    /// Deletes this scope's row inside `txn`, the transaction deleting its holder (an app), so
    /// rows do not outlive what they guard. A bounded insert into the scope waits for `txn` on
    /// the row's lock; one that made the row again afterwards would find its holder gone.
    pub(crate) async fn forget(self, txn: &impl ConnectionTrait) -> Result<(), DbErr> {
        let delete = Query::delete()
            .from_table(WriteGuards::Table)
            .and_where(Expr::col(WriteGuards::Scope).eq(self.scope))
            .and_where(Expr::col(WriteGuards::Holder).eq(self.holder))
            .to_owned();
        txn.execute(&delete).await.map(drop)
    }

    async fn try_begin(&self, db: &DatabaseConnection, now: DateTime<Utc>) -> Result<DatabaseTransaction, DbErr> {
        // The row is created in a statement of its own, committed before any lock is waited on:
        // an insert racing another for a missing key inside the transaction could deadlock on
        // MySQL's gap locks.
        let create = Query::insert()
            .into_table(WriteGuards::Table)
            .columns([WriteGuards::Scope, WriteGuards::Holder, WriteGuards::TakenAt])
            .values_panic([self.scope.into(), self.holder.into(), now.into()])
            .on_conflict(
                OnConflict::columns([WriteGuards::Scope, WriteGuards::Holder])
                    // MySQL spells "do nothing" as an update of these columns to themselves.
                    .do_nothing_on([WriteGuards::Scope, WriteGuards::Holder])
                    .to_owned(),
            )
            .to_owned();
        db.execute(&create).await?;
        let txn = begin_write(db).await?;
        let lock = Query::update()
            .table(WriteGuards::Table)
            .value(WriteGuards::TakenAt, now)
            .and_where(Expr::col(WriteGuards::Scope).eq(self.scope))
            .and_where(Expr::col(WriteGuards::Holder).eq(self.holder))
            .to_owned();
        txn.execute(&lock).await?;
        Ok(txn)
    }
}
