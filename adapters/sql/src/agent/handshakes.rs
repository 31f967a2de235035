use chrono::{DateTime, Utc};
use futures_util::TryFutureExt;
use sea_orm::sea_query::Expr;
use sea_orm::{
    ColumnTrait, ConnectionTrait, DatabaseConnection, DbBackend, DbErr, EntityTrait, QueryFilter, QueryTrait, Set,
    UpdateMany,
};
use serde_json::json;
use svc_application::ports::RepositoryError;
use svc_application::ports::agent::{CacheMatch, HandshakeRecord, HandshakeRepository, SessionRecord};
use svc_domain::handshake::{HandshakeAction, HandshakeLifecycle, Origin};

use super::entities::handshake;
use super::pending_handshakes::PendingHandshakes;
use super::render_in_one_trip;
use super::seam::{contract_from_text, contract_to_text, from_text, to_text};
use super::sessions::{insert_row as insert_session_row, session_row};
use crate::errors::repository_error;
use crate::group_commit::{Coalescable, Undo, Writer, write_settled};

pub struct SeaOrmHandshakeRepository {
    db: DatabaseConnection,
    writer: Option<Writer>,
    pending: Option<PendingHandshakes>,
}

impl SeaOrmHandshakeRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self {
            db,
            writer: None,
            pending: None,
        }
    }

    /// Keeps the handshakes it issues until a render consumes them (`pending_handshakes.rs`);
    /// only for a database this process alone writes.
    pub fn keeping_pending(mut self, keep: bool) -> Self {
        self.pending = keep.then(PendingHandshakes::new);
        self
    }

    fn forget(&self, handshake_id: &str) {
        if let Some(pending) = &self.pending {
            pending.forget(handshake_id);
        }
    }

    /// Writes through the group-commit writer when there is one (SQLite).
    pub fn with_writer(mut self, writer: Option<Writer>) -> Self {
        self.writer = writer;
        self
    }
}

/// Without `RETURNING`: nothing of the row is read back.
async fn insert_row<C: ConnectionTrait>(c: &C, row: handshake::ActiveModel) -> Result<(), DbErr> {
    handshake::Entity::insert(row).exec_without_returning(c).await.map(drop)
}

/// Compare-and-set: only the render that flips consumed_at from NULL wins.
pub(super) fn consume_statement(handshake_id: &str, at: DateTime<Utc>) -> UpdateMany<handshake::Entity> {
    handshake::Entity::update_many()
        .col_expr(handshake::Column::ConsumedAt, Expr::value(at))
        .filter(handshake::Column::HandshakeId.eq(handshake_id))
        .filter(handshake::Column::ConsumedAt.is_null())
}

async fn consume_row<C: ConnectionTrait>(c: &C, handshake_id: String, at: DateTime<Utc>) -> Result<bool, DbErr> {
    let result = consume_statement(&handshake_id, at).exec(c).await?;
    Ok(result.rows_affected == 1)
}

/// The consume, and the session only if this render won it, where a failed statement ends the
/// transaction (its rollback undoes the consume). SQLite sends both at once
/// (`render_in_one_trip`).
async fn consume_into_session_rows<C: ConnectionTrait>(
    c: &C,
    handshake_id: String,
    at: DateTime<Utc>,
    session: super::entities::session::ActiveModel,
) -> Result<bool, DbErr> {
    if !consume_row(c, handshake_id, at).await? {
        return Ok(false);
    }
    insert_session_row(c, session).await?;
    Ok(true)
}

pub(super) async fn release_row<C: ConnectionTrait>(c: &C, handshake_id: String) -> Result<(), DbErr> {
    handshake::Entity::update_many()
        .col_expr(
            handshake::Column::ConsumedAt,
            Expr::value(Option::<DateTime<Utc>>::None),
        )
        .filter(handshake::Column::HandshakeId.eq(handshake_id))
        .exec(c)
        .await
        .map(drop)
}

fn corrupt(column: &'static str, value: &str) -> RepositoryError {
    crate::errors::corrupt(column, format!("unreadable value {}", svc_domain::text::excerpt(value)))
}

fn record(m: handshake::Model) -> Result<HandshakeRecord, RepositoryError> {
    let cache = match m.cache.as_deref() {
        None => None,
        Some(text) => {
            let v = from_text("handshakes.cache", text)?;
            Some(CacheMatch {
                blueprint_id: v["blueprintId"]
                    .as_str()
                    .ok_or_else(|| corrupt("handshakes.cache", text))?
                    .to_owned(),
                similarity: v["similarity"].as_f64().unwrap_or(1.0),
                kind: v["kind"].as_str().unwrap_or("exact").to_owned(),
                reason: v["reason"].as_str().unwrap_or_default().to_owned(),
            })
        }
    };
    Ok(HandshakeRecord {
        contract: contract_from_text("handshakes.contract", &m.contract)?,
        variance: from_text("handshakes.variance", &m.variance)?,
        origin: Origin::parse(&m.origin).ok_or_else(|| corrupt("handshakes.origin", &m.origin))?,
        action: HandshakeAction::parse(&m.action).ok_or_else(|| corrupt("handshakes.action", &m.action))?,
        lifecycle: HandshakeLifecycle {
            created_at: m.created_at,
            consumed_at: m.consumed_at,
        },
        handshake_id: m.handshake_id,
        app_id: m.app_id,
        intent: m.intent,
        generator: m.generator,
        blueprint_id: m.blueprint_id,
        cache,
    })
}

#[async_trait::async_trait]
impl HandshakeRepository for SeaOrmHandshakeRepository {
    async fn insert(&self, r: &HandshakeRecord) -> Result<(), RepositoryError> {
        let cache = r.cache.as_ref().map(|c| {
            to_text(&json!({ "blueprintId": c.blueprint_id, "similarity": c.similarity, "kind": c.kind, "reason": c.reason }))
        });
        let (contract, variance) = (contract_to_text(&r.contract), to_text(&r.variance));
        let stored_bytes = contract.len() + variance.len() + r.intent.len() + r.handshake_id.len();
        let row = handshake::ActiveModel {
            handshake_id: Set(r.handshake_id.clone()),
            app_id: Set(r.app_id.clone()),
            intent: Set(r.intent.clone()),
            contract: Set(contract),
            variance: Set(variance),
            generator: Set(r.generator.clone()),
            origin: Set(r.origin.as_str().to_owned()),
            action: Set(r.action.as_str().to_owned()),
            blueprint_id: Set(r.blueprint_id.clone()),
            cache: Set(cache),
            created_at: Set(r.lifecycle.created_at),
            consumed_at: Set(r.lifecycle.consumed_at),
        };
        match &self.writer {
            Some(writer) => {
                // One statement that inserts one row: batched handshakes go in one list.
                let statement = handshake::Entity::insert(row).build(self.db.get_database_backend());
                let insert = Coalescable {
                    statement,
                    answer: |rows| (rows == 1).then_some(()),
                };
                writer
                    .write_coalescable(insert, |txn, statement| {
                        Box::pin(txn.execute_raw(statement).map_ok(drop))
                    })
                    .await
            }
            None => insert_row(&self.db, row).await,
        }
        .map_err(repository_error)?;
        if let Some(pending) = &self.pending {
            pending.keep(r, stored_bytes);
        }
        Ok(())
    }

    async fn get(&self, handshake_id: &str) -> Result<Option<HandshakeRecord>, RepositoryError> {
        if let Some(record) = self.pending.as_ref().and_then(|p| p.get(handshake_id)) {
            return Ok(Some(record));
        }
        handshake::Entity::find_by_id(handshake_id.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?
            .map(record)
            .transpose()
    }

    async fn consume(&self, handshake_id: &str, at: DateTime<Utc>) -> Result<bool, RepositoryError> {
        self.forget(handshake_id);
        let id = handshake_id.to_owned();
        match &self.writer {
            Some(writer) => writer.write_one(move |txn| Box::pin(consume_row(txn, id, at))).await,
            None => consume_row(&self.db, id, at).await,
        }
        .map_err(repository_error)
    }

    async fn consume_for_session(
        &self,
        handshake_id: &str,
        at: DateTime<Utc>,
        session: &SessionRecord,
    ) -> Result<bool, RepositoryError> {
        self.forget(handshake_id);
        let (id, row) = (handshake_id.to_owned(), session_row(session));
        if self.db.get_database_backend() != DbBackend::Sqlite {
            // Two writes that stand or fall together, by the transaction's rollback.
            return write_settled(
                self.writer.as_ref(),
                &self.db,
                Undo::Compensated,
                move |txn| Box::pin(consume_into_session_rows(txn, id, at, row)),
                |_| {},
            )
            .await
            .map_err(repository_error);
        }
        // On SQLite one statement list that undoes its consume itself when the session is refused;
        // batched renders go in one list.
        let both = render_in_one_trip::consume_then_insert(&id, at, &row).map_err(repository_error)?;
        match &self.writer {
            Some(writer) => {
                let render = Coalescable {
                    statement: both,
                    answer: render_in_one_trip::won_by_inserted_rows,
                };
                writer
                    .submit_coalescable(
                        render,
                        move |txn, both| Box::pin(render_in_one_trip::consume_into_session(txn, id, both)),
                        |_| {},
                        Undo::Compensated,
                    )
                    .await
            }
            None => {
                write_settled(
                    None,
                    &self.db,
                    Undo::Compensated,
                    move |txn| Box::pin(render_in_one_trip::consume_into_session(txn, id, both)),
                    |_| {},
                )
                .await
            }
        }
        .map_err(repository_error)
    }

    async fn release(&self, handshake_id: &str) -> Result<(), RepositoryError> {
        self.forget(handshake_id);
        let id = handshake_id.to_owned();
        match &self.writer {
            Some(writer) => writer.write_one(move |txn| Box::pin(release_row(txn, id))).await,
            None => release_row(&self.db, id).await,
        }
        .map_err(repository_error)
    }
}
