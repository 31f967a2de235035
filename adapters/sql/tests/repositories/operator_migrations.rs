//! Every migration on every backend: all of them roll back cleanly and apply again.

use crate::support;

use sea_orm::{ConnectionTrait, DatabaseConnection, Statement};
use sea_orm_migration::MigratorTrait;
use svc_sql::Migrator;

support::backend_tests!(the_migrations_roll_back_and_reapply);

const OPERATOR_TABLES: [&str; 8] = [
    "orgs",
    "org_memberships",
    "org_invites",
    "connector_keys",
    "coupons",
    "wallets",
    "ledger_entries",
    "mail_outbox",
];

async fn table_exists(db: &DatabaseConnection, table: &str) -> bool {
    // A query that fails on a missing table works the same on both backends.
    let probe = format!("SELECT 1 FROM {table} WHERE 1 = 0");
    db.query_one_raw(Statement::from_string(db.get_database_backend(), probe))
        .await
        .is_ok()
}

/// A table of each later migration, so the check does not depend on their order.
const OTHER_TABLES: [&str; 11] = [
    "sessions",
    "handshakes",
    "live_messages",
    "blueprints",
    "registry_artifact_versions",
    "registry_author_keys",
    "registry_tokens",
    "accounts",
    "account_tokens",
    "oauth_client_keys",
    "credit_reservations",
];

async fn the_migrations_roll_back_and_reapply(db: DatabaseConnection) {
    for table in OPERATOR_TABLES.iter().chain(OTHER_TABLES.iter()) {
        assert!(table_exists(&db, table).await, "{table} after migrating");
    }
    Migrator::down(&db, None).await.unwrap();
    for table in OTHER_TABLES {
        assert!(!table_exists(&db, table).await, "{table} after rolling back");
    }
    for table in OPERATOR_TABLES {
        assert!(!table_exists(&db, table).await, "{table} after rolling back");
    }
    Migrator::up(&db, None).await.unwrap();
    for table in OPERATOR_TABLES {
        assert_eq!(support::count_rows(&db, table).await, 0, "{table} after reapplying");
    }
}
