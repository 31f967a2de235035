//! Tables of the agent plane: apps, handshakes, blueprints, sessions with their frozen history,
//! stored gestures and stream envelopes.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::columns::Columns;

#[derive(DeriveMigrationName)]
pub struct Migration;

fn table(name: &'static str, columns: Vec<ColumnDef>) -> TableCreateStatement {
    let mut t = Table::create();
    t.table(Alias::new(name)).if_not_exists();
    for c in columns {
        t.col(c);
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
        let c = Columns::new(b);
        let tables = [
            table(
                "apps",
                vec![
                    c.key("app_id"),
                    c.string("owner_id"),
                    c.string("display_name"),
                    c.optional_text("system_prompt"),
                    c.flag("is_default"),
                    c.time("created_at"),
                    c.time("updated_at"),
                ],
            ),
            table(
                "handshakes",
                vec![
                    c.key("handshake_id"),
                    c.string("app_id"),
                    c.text("intent"),
                    c.text("contract"),
                    c.text("variance"),
                    c.optional_string("generator"),
                    c.string("origin"),
                    c.string("action"),
                    c.string("blueprint_id"),
                    c.optional_text("cache"),
                    c.time("created_at"),
                    c.optional_time("consumed_at"),
                ],
            ),
            table(
                "blueprints",
                vec![
                    c.key("blueprint_id"),
                    c.string("app_id"),
                    c.text("intent"),
                    c.string("contract_hash"),
                    c.string("variant_key"),
                    c.text("contract"),
                    c.text("variance"),
                    c.text("source"),
                    c.text("code"),
                    c.string("code_hash"),
                    c.string("generator"),
                    c.optional_string("model"),
                    c.time("created_at"),
                ],
            ),
            table(
                "sessions",
                vec![
                    c.key("session_id"),
                    c.string("app_id"),
                    c.text("intent"),
                    c.optional_string("blueprint_id"),
                    c.text("contract"),
                    c.optional_string("theme_id"),
                    c.string("status"),
                    c.big("epoch"),
                    c.text("props"),
                    c.time("last_activity_at"),
                    c.big("ttl_seconds"),
                    c.optional_string("failure_code"),
                    c.optional_text("failure_message"),
                    c.optional_string("host_name"),
                    c.optional_string("host_session_id"),
                    c.text("context_snapshot"),
                    c.big("event_sequence"),
                    c.time("created_at"),
                    c.big("revision"),
                ],
            ),
            table(
                "session_history",
                vec![
                    c.string("session_id"),
                    c.big("epoch"),
                    c.text("props"),
                    c.time("frozen_at"),
                ],
            ),
            table(
                "action_events",
                vec![
                    c.string("session_id"),
                    c.big("sequence"),
                    c.optional_big("client_seq"),
                    c.text("intent"),
                    c.text("action_data"),
                    c.text("ui_context"),
                    c.string("action_id"),
                    c.time("fired_at"),
                    c.optional_time("drained_at"),
                ],
            ),
            table(
                "stream_envelopes",
                vec![
                    c.string("session_id"),
                    c.string("channel"),
                    c.big("seq"),
                    c.string("mode"),
                    c.text("payload"),
                    c.flag("complete"),
                    c.time("timestamp"),
                ],
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
