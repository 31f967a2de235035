//! Tables of the agent plane: apps, handshakes, blueprints, sessions with their frozen history,
//! stored gestures and stream envelopes.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::fit;

#[derive(DeriveMigrationName)]
pub struct Migration;

fn id(name: &'static str) -> ColumnDef {
    ColumnDef::new(Alias::new(name))
        .string()
        .not_null()
        .primary_key()
        .to_owned()
}
fn text(name: &'static str) -> ColumnDef {
    ColumnDef::new(Alias::new(name)).text().not_null().to_owned()
}
fn text_null(name: &'static str) -> ColumnDef {
    ColumnDef::new(Alias::new(name)).text().null().to_owned()
}
fn string(name: &'static str) -> ColumnDef {
    ColumnDef::new(Alias::new(name)).string().not_null().to_owned()
}
fn string_null(name: &'static str) -> ColumnDef {
    ColumnDef::new(Alias::new(name)).string().null().to_owned()
}
fn time(name: &'static str) -> ColumnDef {
    ColumnDef::new(Alias::new(name))
        .timestamp_with_time_zone()
        .not_null()
        .to_owned()
}
fn time_null(name: &'static str) -> ColumnDef {
    ColumnDef::new(Alias::new(name))
        .timestamp_with_time_zone()
        .null()
        .to_owned()
}
fn big(name: &'static str) -> ColumnDef {
    ColumnDef::new(Alias::new(name)).big_integer().not_null().to_owned()
}
fn big_null(name: &'static str) -> ColumnDef {
    ColumnDef::new(Alias::new(name)).big_integer().null().to_owned()
}
fn flag(name: &'static str) -> ColumnDef {
    ColumnDef::new(Alias::new(name)).boolean().not_null().to_owned()
}

fn table(name: &'static str, columns: Vec<ColumnDef>, backend: DbBackend) -> TableCreateStatement {
    let mut t = Table::create();
    t.table(Alias::new(name)).if_not_exists();
    for c in columns {
        t.col(fit(c, backend));
    }
    t.to_owned()
}

/// MySQL limits an index key to 3072 bytes and indexes a `text` column only by a prefix: there a
/// string column of an index named in `PREFIXED` is indexed by its first 128 characters.
const PREFIXED: [&str; 1] = ["blueprints_reuse_key"];

fn index(
    name: &'static str,
    table: &'static str,
    columns: &[&'static str],
    unique: bool,
    backend: DbBackend,
) -> IndexCreateStatement {
    let mut i = Index::create();
    i.name(name).table(Alias::new(table)).if_not_exists();
    for c in columns {
        if backend == DbBackend::MySql && PREFIXED.contains(&name) {
            i.col((Alias::new(*c), 128));
        } else {
            i.col(Alias::new(*c));
        }
    }
    if unique {
        i.unique();
    }
    i.to_owned()
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let b = manager.get_database_backend();
        let tables = [
            table(
                "apps",
                vec![
                    id("app_id"),
                    string("owner_id"),
                    string("display_name"),
                    text_null("system_prompt"),
                    flag("is_default"),
                    time("created_at"),
                    time("updated_at"),
                ],
                b,
            ),
            table(
                "handshakes",
                vec![
                    id("handshake_id"),
                    string("app_id"),
                    text("intent"),
                    text("contract"),
                    text("variance"),
                    string_null("generator"),
                    string("origin"),
                    string("action"),
                    string("blueprint_id"),
                    text_null("cache"),
                    time("created_at"),
                    time_null("consumed_at"),
                ],
                b,
            ),
            table(
                "blueprints",
                vec![
                    id("blueprint_id"),
                    string("app_id"),
                    text("intent"),
                    string("contract_hash"),
                    string("variant_key"),
                    text("contract"),
                    text("variance"),
                    text("source"),
                    text("code"),
                    string("code_hash"),
                    string("generator"),
                    string_null("model"),
                    time("created_at"),
                ],
                b,
            ),
            table(
                "sessions",
                vec![
                    id("session_id"),
                    string("app_id"),
                    text("intent"),
                    string_null("blueprint_id"),
                    text("contract"),
                    string_null("theme_id"),
                    string("status"),
                    big("epoch"),
                    text("props"),
                    time("last_activity_at"),
                    big("ttl_seconds"),
                    string_null("failure_code"),
                    text_null("failure_message"),
                    string_null("host_name"),
                    string_null("host_session_id"),
                    text("context_snapshot"),
                    big("event_sequence"),
                    time("created_at"),
                    big("revision"),
                ],
                b,
            ),
            table(
                "session_history",
                vec![string("session_id"), big("epoch"), text("props"), time("frozen_at")],
                b,
            ),
            table(
                "action_events",
                vec![
                    string("session_id"),
                    big("sequence"),
                    big_null("client_seq"),
                    text("intent"),
                    text("action_data"),
                    text("ui_context"),
                    string("action_id"),
                    time("fired_at"),
                    time_null("drained_at"),
                ],
                b,
            ),
            table(
                "stream_envelopes",
                vec![
                    string("session_id"),
                    string("channel"),
                    big("seq"),
                    string("mode"),
                    text("payload"),
                    flag("complete"),
                    time("timestamp"),
                ],
                b,
            ),
        ];
        for t in tables {
            manager.create_table(t).await?;
        }
        let indexes = [
            index("apps_owner", "apps", &["owner_id"], false, b),
            index(
                "blueprints_reuse_key",
                "blueprints",
                &["app_id", "intent", "contract_hash", "variant_key"],
                false,
                b,
            ),
            index("sessions_app_created", "sessions", &["app_id", "created_at"], false, b),
            index(
                "session_history_key",
                "session_history",
                &["session_id", "epoch"],
                true,
                b,
            ),
            index(
                "action_events_key",
                "action_events",
                &["session_id", "sequence"],
                true,
                b,
            ),
            index(
                "action_events_client_seq",
                "action_events",
                &["session_id", "client_seq"],
                true,
                b,
            ),
            index(
                "stream_envelopes_key",
                "stream_envelopes",
                &["session_id", "seq"],
                true,
                b,
            ),
        ];
        for i in indexes {
            manager.create_index(i).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        for name in [
            "stream_envelopes",
            "action_events",
            "session_history",
            "sessions",
            "blueprints",
            "handshakes",
            "apps",
        ] {
            manager
                .drop_table(Table::drop().table(Alias::new(name)).if_exists().to_owned())
                .await?;
        }
        Ok(())
    }
}
