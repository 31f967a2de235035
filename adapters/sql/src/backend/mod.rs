//! What SQLite, PostgreSQL and MySQL/MariaDB spell differently, one file per backend. Everything
//! else in this crate is portable: sea-query writes each statement in the backend's dialect.
//!
//! The places that branch on the backend are: connecting (SQLite's file and pragmas, the
//! `mariadb://` scheme), the migration lock (PostgreSQL advisory lock, MySQL `GET_LOCK`), column
//! types and partial indexes in migrations (MySQL has neither `timestamptz` nor partial indexes),
//! draining gestures (MySQL has no `UPDATE ... RETURNING`), pool readings, and deadlock errors.
//! The PostgreSQL event bus (`pg_event_bus.rs`) is PostgreSQL-only by nature.

pub mod mysql;
pub mod postgres;
pub mod sqlite;

use sea_orm::{DatabaseConnection, DbBackend};

/// Open, idle and maximum connections of the pool behind `db`.
pub fn pool_readings(db: &DatabaseConnection) -> (u32, usize, u32) {
    match db.get_database_backend() {
        DbBackend::Postgres => postgres::pool_readings(db),
        DbBackend::MySql => mysql::pool_readings(db),
        _ => sqlite::pool_readings(db),
    }
}
