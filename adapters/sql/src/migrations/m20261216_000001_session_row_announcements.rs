//! PostgreSQL announces every change of a `sessions` row on the `svc_session_rows` channel, from
//! the writing transaction (so at its commit, and only if it commits), with the session id as
//! the payload: an update (a new head, a heartbeat, a context snapshot, a stored gesture moving
//! `event_sequence`) or a delete (expiry, an app's removal). Replicas keep session rows in memory
//! and forget the announced ones (`session_watch.rs`). A trigger, so no write path can forget to
//! announce. Inserts are not announced: no replica keeps a row that did not exist.
//!
//! A connection with `svc.session_announcements = off` announces nothing: a sole server's pool,
//! which no replica runs beside (an announcement serialises the writing transaction's commit
//! with every other announcing one, PostgreSQL's NOTIFY lock). SQLite has one writer and MariaDB
//! replicas keep nothing: nothing there.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

#[derive(DeriveMigrationName)]
pub struct Migration;

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        db.execute_unprepared(
            "CREATE OR REPLACE FUNCTION svc_announce_session_row() RETURNS trigger \
             LANGUAGE plpgsql AS $$ \
             BEGIN \
               IF current_setting('svc.session_announcements', true) IS DISTINCT FROM 'off' THEN \
                 PERFORM pg_notify('svc_session_rows', OLD.session_id); \
               END IF; \
               RETURN NULL; \
             END $$",
        )
        .await?;
        // `EXECUTE PROCEDURE`: the spelling every supported PostgreSQL accepts.
        db.execute_unprepared(
            "CREATE TRIGGER svc_session_row_changed AFTER UPDATE OR DELETE ON sessions \
             FOR EACH ROW EXECUTE PROCEDURE svc_announce_session_row()",
        )
        .await?;
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        if manager.get_database_backend() != DbBackend::Postgres {
            return Ok(());
        }
        let db = manager.get_connection();
        db.execute_unprepared("DROP TRIGGER IF EXISTS svc_session_row_changed ON sessions")
            .await?;
        db.execute_unprepared("DROP FUNCTION IF EXISTS svc_announce_session_row()")
            .await?;
        Ok(())
    }
}
