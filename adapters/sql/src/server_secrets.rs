//! Secrets kept in the database (`server_secrets`): the first replica to start stores its
//! candidate, and every replica, now and after a restart, reads the stored one.

use sea_orm::sea_query::{Alias, Expr, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection, DbErr, ExprTrait};

use crate::errors::is_unique_violation;

/// The secret stored under `name`; `candidate` is stored first when there is none.
pub async fn keep_first(
    db: &DatabaseConnection,
    name: &str,
    candidate: &str,
    now: chrono::DateTime<chrono::Utc>,
) -> Result<String, DbErr> {
    let table = Alias::new("server_secrets");
    let insert = Query::insert()
        .into_table(table.clone())
        .columns([Alias::new("name"), Alias::new("value"), Alias::new("created_at")])
        .values_panic([name.into(), candidate.into(), now.into()])
        .to_owned();
    // Another replica's secret already stored is the expected race, not a failure.
    match db.execute(&insert).await {
        Err(e) if !is_unique_violation(&e) => return Err(e),
        _ => {}
    }
    let select = Query::select()
        .column(Alias::new("value"))
        .from(table)
        .and_where(Expr::col(Alias::new("name")).eq(name))
        .to_owned();
    let row = db
        .query_one(&select)
        .await?
        .ok_or_else(|| DbErr::RecordNotFound(format!("server secret {name}")))?;
    row.try_get("", "value")
}
