use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{
    ActiveModelTrait, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter,
    QueryOrder, Set,
};
use svc_application::ports::agent::{AppRecord, AppRepository, NewAppId};
use svc_application::ports::{BoundedInsert, RepositoryError};

use super::entities::app;
use crate::errors::{begin_write, is_unique_violation, repository_error};
use crate::write_guards::WriteGuard;

/// Name of an app created implicitly as its owner's default.
pub use svc_domain::app::DEFAULT_APP_NAME;

/// How long an owner's default app is trusted without reading it again. Every authenticated
/// request resolves it; a change made through this repository is seen at once, one made on
/// another replica within this long.
const DEFAULT_APP_TIME_TO_LIVE: std::time::Duration = std::time::Duration::from_secs(1);

/// An owner's default app, read by the first request that asks once the last reading expired;
/// the requests that ask meanwhile wait for that one reading instead of each querying, and share
/// its failure too (so a database outage fails them together, not one timeout after another).
type DefaultReading = Arc<tokio::sync::OnceCell<Result<Arc<AppRecord>, String>>>;

pub struct SeaOrmAppRepository {
    db: DatabaseConnection,
    /// Owner id to its default app.
    defaults: moka::sync::Cache<String, DefaultReading>,
}

impl SeaOrmAppRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self {
            db,
            defaults: moka::sync::Cache::builder()
                .max_capacity(100_000)
                .time_to_live(DEFAULT_APP_TIME_TO_LIVE)
                .build(),
        }
    }

    async fn oldest_default(&self, owner_id: &str) -> Result<Option<app::Model>, RepositoryError> {
        oldest_default(&self.db, owner_id).await
    }

    /// The owner's default app from the database, created with `new_app_id` when it has none.
    async fn default_app_uncached(
        &self,
        owner_id: &str,
        new_app_id: NewAppId<'_>,
        now: DateTime<Utc>,
    ) -> Result<AppRecord, RepositoryError> {
        if let Some(found) = self.oldest_default(owner_id).await? {
            return Ok(record(found));
        }
        let candidate = app::ActiveModel {
            app_id: Set(new_app_id()),
            owner_id: Set(owner_id.to_owned()),
            display_name: Set(DEFAULT_APP_NAME.to_owned()),
            system_prompt: Set(None),
            is_default: Set(true),
            created_at: Set(now),
            updated_at: Set(now),
        };
        // Two first requests may race: the one-default-per-owner unique index lets one insert
        // win and refuses the other; both then read the one default.
        match candidate.insert(&self.db).await {
            Ok(_) => {}
            Err(e) if is_unique_violation(&e) => {}
            Err(e) => return Err(repository_error(e)),
        }
        let chosen = self.oldest_default(owner_id).await?;
        chosen
            .map(record)
            .ok_or_else(|| RepositoryError::Unavailable(anyhow::anyhow!("default app vanished")))
    }
}

async fn oldest_default(db: &impl ConnectionTrait, owner_id: &str) -> Result<Option<app::Model>, RepositoryError> {
    app::Entity::find()
        .filter(app::Column::OwnerId.eq(owner_id))
        .filter(app::Column::IsDefault.eq(true))
        .order_by_asc(app::Column::CreatedAt)
        .order_by_asc(app::Column::AppId)
        .one(db)
        .await
        .map_err(repository_error)
}

/// A new app that is not its owner's default.
fn not_default(new_app: &AppRecord) -> app::ActiveModel {
    app::ActiveModel {
        app_id: Set(new_app.app_id.clone()),
        owner_id: Set(new_app.owner_id.clone()),
        display_name: Set(new_app.display_name.clone()),
        system_prompt: Set(new_app.system_prompt.clone()),
        is_default: Set(false),
        created_at: Set(new_app.created_at),
        updated_at: Set(new_app.updated_at),
    }
}

fn record(m: app::Model) -> AppRecord {
    AppRecord {
        app_id: m.app_id,
        owner_id: m.owner_id,
        display_name: m.display_name,
        system_prompt: m.system_prompt,
        created_at: m.created_at,
        updated_at: m.updated_at,
    }
}

#[async_trait::async_trait]
impl AppRepository for SeaOrmAppRepository {
    async fn default_app(
        &self,
        owner_id: &str,
        new_app_id: NewAppId<'_>,
        now: DateTime<Utc>,
    ) -> Result<Arc<AppRecord>, RepositoryError> {
        let reading = self.defaults.get_with_by_ref(owner_id, DefaultReading::default);
        let read = reading
            .get_or_init(|| async {
                let read = self.default_app_uncached(owner_id, new_app_id, now).await;
                read.map(Arc::new).map_err(|e| format!("{:#}", anyhow::Error::from(e)))
            })
            .await;
        match read {
            Ok(found) => Ok(Arc::clone(found)),
            Err(reason) => {
                // The next request reads again (unless a newer reading took this one's place).
                self.defaults
                    .entry_by_ref(owner_id)
                    .and_compute_with(|kept| match kept {
                        Some(entry) if Arc::ptr_eq(entry.value(), &reading) => moka::ops::compute::Op::Remove,
                        _ => moka::ops::compute::Op::Nop,
                    });
                Err(RepositoryError::Unavailable(anyhow::anyhow!("{reason}")))
            }
        }
    }

    async fn get(&self, app_id: &str) -> Result<Option<AppRecord>, RepositoryError> {
        Ok(app::Entity::find_by_id(app_id.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?
            .map(record))
    }

    async fn list_by_owner(&self, owner_id: &str) -> Result<Vec<AppRecord>, RepositoryError> {
        Ok(app::Entity::find()
            .filter(app::Column::OwnerId.eq(owner_id))
            .order_by_asc(app::Column::CreatedAt)
            .order_by_asc(app::Column::AppId)
            .all(&self.db)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(record)
            .collect())
    }

    async fn insert(&self, new_app: &AppRecord) -> Result<(), RepositoryError> {
        not_default(new_app).insert(&self.db).await.map_err(repository_error)?;
        Ok(())
    }

    async fn insert_bounded(&self, new_app: &AppRecord, max: u64) -> Result<BoundedInsert, RepositoryError> {
        let txn = WriteGuard::apps_of(&new_app.owner_id)
            .begin(&self.db, new_app.created_at)
            .await
            .map_err(repository_error)?;
        let stored = app::Entity::find()
            .filter(app::Column::OwnerId.eq(new_app.owner_id.as_str()))
            .count(&txn)
            .await
            .map_err(repository_error)?;
        if stored >= max {
            // Dropping the transaction rolls it back and lets the next writer in.
            return Ok(BoundedInsert::Full { stored });
        }
        not_default(new_app).insert(&txn).await.map_err(repository_error)?;
        txn.commit().await.map_err(repository_error)?;
        Ok(BoundedInsert::Inserted)
    }

    async fn update(&self, changed: &AppRecord) -> Result<bool, RepositoryError> {
        let result = app::Entity::update_many()
            .col_expr(app::Column::DisplayName, Expr::value(changed.display_name.clone()))
            .col_expr(app::Column::SystemPrompt, Expr::value(changed.system_prompt.clone()))
            .col_expr(app::Column::UpdatedAt, Expr::value(changed.updated_at))
            .filter(app::Column::AppId.eq(changed.app_id.as_str()))
            .filter(app::Column::OwnerId.eq(changed.owner_id.as_str()))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        self.defaults.invalidate(&changed.owner_id);
        Ok(result.rows_affected > 0)
    }

    async fn set_default(&self, owner_id: &str, app_id: &str) -> Result<bool, RepositoryError> {
        // One write transaction: clear the owner's default, then set the target if it is theirs, else roll back. The
        // one-default index holds at every statement and no reader sees none.
        let tx = begin_write(&self.db).await.map_err(repository_error)?;
        app::Entity::update_many()
            .col_expr(app::Column::IsDefault, Expr::value(false))
            .filter(app::Column::OwnerId.eq(owner_id))
            .filter(app::Column::IsDefault.eq(true))
            .exec(&tx)
            .await
            .map_err(repository_error)?;
        let set = app::Entity::update_many()
            .col_expr(app::Column::IsDefault, Expr::value(true))
            .filter(app::Column::AppId.eq(app_id))
            .filter(app::Column::OwnerId.eq(owner_id))
            .exec(&tx)
            .await
            .map_err(repository_error)?;
        if set.rows_affected == 0 {
            tx.rollback().await.map_err(repository_error)?;
            return Ok(false);
        }
        tx.commit().await.map_err(repository_error)?;
        self.defaults.invalidate(owner_id);
        Ok(true)
    }

    async fn delete(&self, owner_id: &str, app_id: &str) -> Result<(), RepositoryError> {
        // Forgotten first and again at the end: a request in between reads the database.
        self.defaults.invalidate(owner_id);
        let outcome = self.delete_and_promote(owner_id, app_id).await;
        self.defaults.invalidate(owner_id);
        outcome
    }
}

impl SeaOrmAppRepository {
    /// Deletes the owner's app; when it was the default, promotes the oldest remaining one.
    ///
    /// One write transaction, as `set_default`: a reader sees the old default or the promoted
    /// one, never none in between (a default-app lookup then would create a fresh "My app" and
    /// keep it). Both statements commit together or neither does.
    async fn delete_and_promote(&self, owner_id: &str, app_id: &str) -> Result<(), RepositoryError> {
        let tx = begin_write(&self.db).await.map_err(repository_error)?;
        let result = app::Entity::delete_many()
            .filter(app::Column::AppId.eq(app_id))
            .filter(app::Column::OwnerId.eq(owner_id))
            .exec(&tx)
            .await
            .map_err(repository_error)?;
        if result.rows_affected > 0 {
            WriteGuard::blueprints_of(app_id)
                .forget(&tx)
                .await
                .map_err(repository_error)?;
        }
        if result.rows_affected > 0 && oldest_default(&tx, owner_id).await?.is_none() {
            let oldest = app::Entity::find()
                .filter(app::Column::OwnerId.eq(owner_id))
                .order_by_asc(app::Column::CreatedAt)
                .order_by_asc(app::Column::AppId)
                .one(&tx)
                .await
                .map_err(repository_error)?;
            if let Some(oldest) = oldest {
                app::Entity::update_many()
                    .col_expr(app::Column::IsDefault, Expr::value(true))
                    .filter(app::Column::AppId.eq(oldest.app_id))
                    .exec(&tx)
                    .await
                    .map_err(repository_error)?;
            }
        }
        tx.commit().await.map_err(repository_error)
    }
}
