//! `MailQueue` on the `mail_outbox` table: what the delivery worker reads and stamps. A row
//! done with (sent or given up) is stamped with the payload the worker keeps: its link's token
//! removed.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::Expr;
use sea_orm::{ColumnTrait, Condition, EntityTrait, ExprTrait, QueryFilter, QueryOrder, QuerySelect};
use svc_application::ports::RepositoryError;
use svc_application::ports::mail::{MailQueue, QueuedMail};

use super::entities::mail_outbox::{Column, Entity, Model};
use super::mail_outbox::SeaOrmMailOutbox;
use crate::errors::repository_error;

fn queued(m: Model) -> QueuedMail {
    QueuedMail {
        id: m.id,
        kind: m.kind,
        recipient: m.recipient,
        payload: m.payload,
        attempts: u32::try_from(m.attempts).unwrap_or(0),
        created_at: m.created_at,
    }
}

fn unsent() -> Condition {
    Condition::all()
        .add(Column::SentAt.is_null())
        .add(Column::GivenUpAt.is_null())
}

#[async_trait::async_trait]
impl MailQueue for SeaOrmMailOutbox {
    async fn due(&self, now: DateTime<Utc>, max_attempts: u32, limit: u64) -> Result<Vec<QueuedMail>, RepositoryError> {
        let rows = Entity::find()
            .filter(unsent())
            .filter(Column::Attempts.lt(i32::try_from(max_attempts).unwrap_or(i32::MAX)))
            .filter(
                Condition::any()
                    .add(Column::NextAttemptAt.is_null())
                    .add(Column::NextAttemptAt.lte(now)),
            )
            .order_by_asc(Column::CreatedAt)
            .limit(limit)
            .all(self.db())
            .await
            .map_err(repository_error)?;
        Ok(rows.into_iter().map(queued).collect())
    }

    async fn lease(&self, mail: &QueuedMail, until: DateTime<Utc>) -> Result<bool, RepositoryError> {
        let attempts = i32::try_from(mail.attempts).unwrap_or(i32::MAX);
        let taken = Entity::update_many()
            .col_expr(Column::Attempts, Expr::col(Column::Attempts).add(1))
            .col_expr(Column::NextAttemptAt, Expr::value(until))
            .filter(Column::Id.eq(mail.id.as_str()))
            .filter(Column::Attempts.eq(attempts))
            .filter(unsent())
            .exec(self.db())
            .await
            .map_err(repository_error)?;
        Ok(taken.rows_affected == 1)
    }

    async fn mark_sent(&self, id: &str, at: DateTime<Utc>, kept: &serde_json::Value) -> Result<(), RepositoryError> {
        Entity::update_many()
            .col_expr(Column::SentAt, Expr::value(at))
            .col_expr(Column::LastError, Expr::value(Option::<String>::None))
            .col_expr(Column::Payload, Expr::value(kept.clone()))
            .filter(Column::Id.eq(id))
            .exec(self.db())
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn mark_failed(&self, id: &str, retry_at: DateTime<Utc>, error: &str) -> Result<(), RepositoryError> {
        Entity::update_many()
            .col_expr(Column::NextAttemptAt, Expr::value(retry_at))
            .col_expr(Column::LastError, Expr::value(error))
            .filter(Column::Id.eq(id))
            .exec(self.db())
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn give_up(
        &self,
        id: &str,
        at: DateTime<Utc>,
        error: &str,
        kept: &serde_json::Value,
    ) -> Result<(), RepositoryError> {
        Entity::update_many()
            .col_expr(Column::GivenUpAt, Expr::value(at))
            .col_expr(Column::LastError, Expr::value(error))
            .col_expr(Column::Payload, Expr::value(kept.clone()))
            .filter(Column::Id.eq(id))
            .exec(self.db())
            .await
            .map_err(repository_error)?;
        Ok(())
    }
}
