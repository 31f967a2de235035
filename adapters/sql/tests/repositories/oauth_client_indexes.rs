//! The indexes of the unused-client sweep (`m20261225_000001_oauth_client_id_indexes`): the
//! sweep deletes a registered client only when no authorization code and no delivered key refers
//! to it, two `NOT EXISTS` lookups by `client_id` per client, which without these read the whole
//! of both tables. Read from each backend's own catalogue; rolled back and applied again.

use crate::support;

use sea_orm::{ConnectionTrait, DatabaseConnection, DbBackend, Statement};
use sea_orm_migration::MigratorTrait;
use svc_application::ports::oauth::{ClientConnection, OAuthClientKeyRepository};
use svc_sql::Migrator;
use svc_sql::oauth::SeaOrmOAuthClientKeyRepository;

support::backend_tests!(
    the_client_id_columns_are_indexed,
    the_indexes_roll_back_and_apply_again,
    a_delivery_to_a_long_url_client_is_still_recorded,
);

const MIGRATION: &str = "m20261225_000001_oauth_client_id_indexes";

/// (table, index) of each index the migration creates, on column `client_id`.
const INDEXES: [(&str, &str); 2] = [
    ("oauth_client_keys", "ix_oauth_client_keys_client_id"),
    ("oauth_authorization_codes", "ix_oauth_authorization_codes_client_id"),
];

/// Every (index, first column) of `table`, as the backend's catalogue lists them (primary keys
/// included on PostgreSQL and MariaDB).
async fn indexes_of(db: &DatabaseConnection, table: &str) -> Vec<(String, String)> {
    let backend = db.get_database_backend();
    let sql = match backend {
        DbBackend::Sqlite => format!(
            "SELECT il.name AS index_name, ii.name AS column_name \
             FROM pragma_index_list('{table}') AS il, pragma_index_info(il.name) AS ii \
             WHERE ii.seqno = 0"
        ),
        DbBackend::Postgres => format!(
            "SELECT i.relname AS index_name, a.attname AS column_name \
             FROM pg_index x \
             JOIN pg_class t ON t.oid = x.indrelid \
             JOIN pg_class i ON i.oid = x.indexrelid \
             JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = x.indkey[0] \
             WHERE t.relname = '{table}' AND t.relnamespace = to_regnamespace(current_schema())"
        ),
        _ => format!(
            "SELECT index_name AS index_name, column_name AS column_name \
             FROM information_schema.statistics \
             WHERE table_schema = DATABASE() AND table_name = '{table}' AND seq_in_index = 1"
        ),
    };
    db.query_all_raw(Statement::from_string(backend, sql))
        .await
        .unwrap_or_else(|e| panic!("indexes of {table}: {e}"))
        .iter()
        .map(|row| {
            (
                row.try_get::<String>("", "index_name").unwrap(),
                row.try_get::<String>("", "column_name").unwrap(),
            )
        })
        .collect()
}

/// Each of [`INDEXES`] present on `client_id` (`true`) or absent (`false`).
async fn assert_indexed(db: &DatabaseConnection, present: bool, when: &str) {
    for (table, index) in INDEXES {
        let found = indexes_of(db, table).await;
        let on_client_id = found
            .iter()
            .any(|(name, column)| name == index && column == "client_id");
        assert_eq!(on_client_id, present, "{index} {when}: {table} has {found:?}");
        if !present {
            assert!(
                !found.iter().any(|(name, _)| name == index),
                "{index} {when}: {found:?}"
            );
        }
    }
}

async fn the_client_id_columns_are_indexed(db: DatabaseConnection) {
    assert_indexed(&db, true, "after migrating").await;

    // SQLite shows whether a lookup by client_id reads the index rather than the table (what
    // each of the sweep's `NOT EXISTS` does for every client it considers).
    if db.get_database_backend() == DbBackend::Sqlite {
        for (table, index) in INDEXES {
            let plan = db
                .query_all_raw(Statement::from_string(
                    DbBackend::Sqlite,
                    format!("EXPLAIN QUERY PLAN SELECT 1 FROM {table} WHERE client_id = 'c'"),
                ))
                .await
                .unwrap();
            let details: Vec<String> = plan.iter().map(|row| row.try_get("", "detail").unwrap()).collect();
            assert!(
                details.iter().any(|d| d.contains(index)),
                "a lookup of {table} by client_id reads {index}: {details:?}"
            );
        }
    }
}

async fn the_indexes_roll_back_and_apply_again(db: DatabaseConnection) {
    support::roll_back_through(&db, MIGRATION).await;
    assert_indexed(&db, false, "after rolling back").await;
    Migrator::up(&db, None).await.unwrap();
    assert_indexed(&db, true, "after applying again").await;
}

/// A metadata-document `client_id` is a URL of any length: its index must not refuse a long one
/// (a PostgreSQL B-tree refuses an entry over 2704 bytes, after compression, so the path here is
/// random hex, which compresses poorly).
async fn a_delivery_to_a_long_url_client_is_still_recorded(db: DatabaseConnection) {
    let path: String = (0..128).map(|_| uuid::Uuid::new_v4().simple().to_string()).collect();
    let client_id = format!("https://client.example.com/{path}");
    assert!(client_id.len() > 4_000);
    let keys = SeaOrmOAuthClientKeyRepository::new(db);
    let connection = ClientConnection {
        client_id: &client_id,
        owner_id: "alice",
        app_id: None,
    };
    let at = "2026-12-20T10:00:00Z".parse().unwrap();
    let seq = keys.record(connection, "k1", at).await.unwrap();
    let delivered = keys.delivered(connection).await.unwrap();
    assert_eq!(delivered.len(), 1);
    assert_eq!((delivered[0].key_id.as_str(), delivered[0].seq), ("k1", seq));
}
