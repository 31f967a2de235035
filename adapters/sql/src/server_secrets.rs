//! Secrets kept in the database (`server_secrets`): the first replica to start stores its
//! candidate, and every replica, now and after a restart, reads the stored one.

use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, Statement};

/// The secret stored under `name`; `candidate` is stored first when there is none.
pub async fn keep_first(
    db: &DatabaseConnection,
    name: &str,
    candidate: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<String, DbErr> {
    let backend = db.get_database_backend();
    db.execute_raw(Statement::from_sql_and_values(
        backend,
        "INSERT INTO server_secrets (name, value, created_at) VALUES ($1, $2, $3) ON CONFLICT (name) DO NOTHING",
        [name.into(), candidate.into(), now.into()],
    ))
    .await?;
    let row = db
        .query_one_raw(Statement::from_sql_and_values(
            backend,
            "SELECT value FROM server_secrets WHERE name = $1",
            [name.into()],
        ))
        .await?
        .ok_or_else(|| DbErr::RecordNotFound(format!("server secret {name}")))?;
    row.try_get("", "value")
}
