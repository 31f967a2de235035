use std::sync::Arc;

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Expr, OnConflict};
use sea_orm::{
    ActiveModelTrait, ColumnTrait, Condition, DatabaseConnection, EntityTrait, FromQueryResult, PaginatorTrait,
    QueryFilter, QueryOrder, QuerySelect, SelectModel, Set,
};
use svc_application::ports::blueprints::{
    BlueprintChange, BlueprintFilter, BlueprintListing, BlueprintRecord, BlueprintRepository, BlueprintSummary,
    ListingPosition, SHARED_POOL_APP_ID, SUMMARY_TEXT_MAX_CHARS, StoredEmbedding,
};
use svc_application::ports::{BoundedInsert, RepositoryError};
use svc_domain::blueprint::SourceKind;

use super::blueprint_listing;
use super::entities::blueprint;
use super::seam::{contract_from_text, contract_to_text, from_text, to_text};
use crate::errors::{begin_write, corrupt, is_unique_violation, repository_error};
use crate::read_lane::ReadLane;
use crate::reads::KeyedRead;
use crate::write_guards::WriteGuard;

pub struct SeaOrmBlueprintRepository {
    db: DatabaseConnection,
    lane: Option<ReadLane>,
}

impl SeaOrmBlueprintRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db, lane: None }
    }

    /// Reads a blueprint by id on `lane`'s held connections (PostgreSQL).
    pub fn with_read_lane(mut self, lane: Option<ReadLane>) -> Self {
        self.lane = lane;
        self
    }
}

/// A blueprint by id: every `resources/read` of a render asks it.
pub(crate) static BLUEPRINT_BY_ID: KeyedRead<SelectModel<blueprint::Model>> =
    KeyedRead::new(|id| blueprint::Entity::find_by_id(id.to_owned()).into_model());

fn vector_bytes(vector: &[f32]) -> Vec<u8> {
    vector.iter().flat_map(|x| x.to_le_bytes()).collect()
}

fn vector_of(bytes: &[u8]) -> Vec<f32> {
    bytes
        .chunks_exact(4)
        .map(|c| f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
        .collect()
}

fn embedding_of(bytes: Option<Vec<u8>>, model: Option<String>) -> Option<StoredEmbedding> {
    match (bytes, model) {
        (Some(bytes), Some(model)) => Some(StoredEmbedding {
            model,
            vector: vector_of(&bytes),
        }),
        _ => None,
    }
}

/// An unknown kind is corrupt, never read as `llm`: the kind decides what a blueprint may do.
pub(super) fn source_kind(raw: &str) -> Result<SourceKind, RepositoryError> {
    SourceKind::parse(raw).ok_or_else(|| corrupt("blueprints.source_kind", format!("unknown kind {raw:?}")))
}

fn record(m: blueprint::Model) -> Result<BlueprintRecord, RepositoryError> {
    Ok(BlueprintRecord {
        contract: contract_from_text("blueprints.contract", &m.contract)?,
        variance: from_text("blueprints.variance", &m.variance)?,
        fixture_props: m
            .fixture_props
            .as_deref()
            .map(|text| from_text("blueprints.fixture_props", text))
            .transpose()?,
        embedding: embedding_of(m.embedding, m.embedding_model),
        source_kind: source_kind(&m.source_kind)?,
        updated_at: m.updated_at.unwrap_or(m.created_at),
        blueprint_id: m.blueprint_id,
        app_id: m.app_id,
        intent: m.intent,
        contract_hash: m.contract_hash,
        variant_key: m.variant_key,
        source: m.source,
        code: m.code,
        code_hash: m.code_hash,
        generator: m.generator,
        model: m.model,
        created_at: m.created_at,
        name: m.name,
        description: m.description,
        category: m.category,
        featured: m.featured,
        persona: m.persona,
        aesthetic: m.aesthetic,
        is_operator_default: m.is_operator_default,
    })
}

fn active(r: &BlueprintRecord) -> blueprint::ActiveModel {
    blueprint::ActiveModel {
        blueprint_id: Set(r.blueprint_id.clone()),
        app_id: Set(r.app_id.clone()),
        intent: Set(r.intent.clone()),
        contract_hash: Set(r.contract_hash.clone()),
        variant_key: Set(r.variant_key.clone()),
        contract: Set(contract_to_text(&r.contract)),
        variance: Set(to_text(&r.variance)),
        source: Set(r.source.clone()),
        code: Set(r.code.clone()),
        code_hash: Set(r.code_hash.clone()),
        generator: Set(r.generator.clone()),
        model: Set(r.model.clone()),
        created_at: Set(r.created_at),
        name: Set(r.name.clone()),
        description: Set(r.description.clone()),
        category: Set(r.category.clone()),
        fixture_props: Set(r.fixture_props.as_ref().map(to_text)),
        embedding: Set(r.embedding.as_ref().map(|e| vector_bytes(&e.vector))),
        embedding_model: Set(r.embedding.as_ref().map(|e| e.model.clone())),
        featured: Set(r.featured),
        persona: Set(r.persona.clone()),
        aesthetic: Set(r.aesthetic.clone()),
        is_operator_default: Set(r.is_operator_default),
        source_kind: Set(r.source_kind.as_str().to_owned()),
        updated_at: Set(Some(r.updated_at)),
    }
}

fn app_or_pool(app_id: &str) -> Condition {
    Condition::any()
        .add(blueprint::Column::AppId.eq(app_id))
        .add(blueprint::Column::AppId.eq(SHARED_POOL_APP_ID))
}

#[derive(Debug, FromQueryResult)]
struct SummaryRow {
    blueprint_id: String,
    app_id: String,
    intent: String,
    name: Option<String>,
    description: Option<String>,
    category: Option<String>,
    contract_hash: String,
    variant_key: String,
    contract: String,
    generator: String,
    featured: bool,
    persona: Option<String>,
    embedding: Option<Vec<u8>>,
    embedding_model: Option<String>,
    created_at: DateTime<Utc>,
    updated_at: Option<DateTime<Utc>>,
}

#[async_trait::async_trait]
impl BlueprintRepository for SeaOrmBlueprintRepository {
    async fn insert(&self, r: &BlueprintRecord) -> Result<(), RepositoryError> {
        active(r).insert(&self.db).await.map_err(repository_error)?;
        Ok(())
    }

    async fn insert_bounded(&self, r: &BlueprintRecord, max: u64) -> Result<BoundedInsert, RepositoryError> {
        let txn = WriteGuard::blueprints_of(&r.app_id)
            .begin(&self.db, r.updated_at)
            .await
            .map_err(repository_error)?;
        let stored = blueprint::Entity::find()
            .filter(blueprint::Column::AppId.eq(r.app_id.as_str()))
            .count(&txn)
            .await
            .map_err(repository_error)?;
        if stored >= max {
            // Dropping the transaction rolls it back and lets the next writer in.
            return Ok(BoundedInsert::Full { stored });
        }
        active(r).insert(&txn).await.map_err(repository_error)?;
        txn.commit().await.map_err(repository_error)?;
        Ok(BoundedInsert::Inserted)
    }

    async fn insert_if_absent(&self, r: &BlueprintRecord) -> Result<bool, RepositoryError> {
        // A plain insert whose duplicate key means "already there": portable, where an upsert
        // that does nothing counts the found row as affected on MySQL.
        match active(r).insert(&self.db).await {
            Ok(_) => Ok(true),
            Err(e) if is_unique_violation(&e) => Ok(false),
            Err(e) => Err(repository_error(e)),
        }
    }

    async fn upsert(&self, r: &BlueprintRecord) -> Result<(), RepositoryError> {
        use blueprint::Column as C;
        blueprint::Entity::insert(active(r))
            .on_conflict(
                OnConflict::column(C::BlueprintId)
                    .update_columns([
                        C::AppId,
                        C::Intent,
                        C::ContractHash,
                        C::VariantKey,
                        C::Contract,
                        C::Variance,
                        C::Source,
                        C::Code,
                        C::CodeHash,
                        C::Generator,
                        C::Model,
                        C::Name,
                        C::Description,
                        C::Category,
                        C::FixtureProps,
                        C::Embedding,
                        C::EmbeddingModel,
                        C::Featured,
                        C::Persona,
                        C::Aesthetic,
                        C::IsOperatorDefault,
                        C::SourceKind,
                        C::UpdatedAt,
                    ])
                    .to_owned(),
            )
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn get(&self, blueprint_id: &str) -> Result<Option<Arc<BlueprintRecord>>, RepositoryError> {
        BLUEPRINT_BY_ID
            .one(&self.db, self.lane.as_ref(), blueprint_id)
            .await
            .map_err(repository_error)?
            .map(|row| record(row).map(Arc::new))
            .transpose()
    }

    async fn find_exact(
        &self,
        app_id: &str,
        intent: &str,
        contract_hash: &str,
        variant_key: &str,
    ) -> Result<Option<Arc<BlueprintRecord>>, RepositoryError> {
        // The app's own component first, then the shared pool's; newest first within each.
        let rows = blueprint::Entity::find()
            .filter(app_or_pool(app_id))
            .filter(blueprint::Column::Intent.eq(intent))
            .filter(blueprint::Column::ContractHash.eq(contract_hash))
            .filter(blueprint::Column::VariantKey.eq(variant_key))
            .order_by_desc(blueprint::Column::CreatedAt)
            .order_by_desc(blueprint::Column::BlueprintId)
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        let own = rows.iter().position(|m| m.app_id == app_id);
        let chosen = match own {
            Some(i) => rows.into_iter().nth(i),
            None => rows.into_iter().next(),
        };
        chosen.map(|row| record(row).map(Arc::new)).transpose()
    }

    async fn operator_default_id(&self, app_id: &str, contract_hash: &str) -> Result<Option<String>, RepositoryError> {
        use blueprint::Column as C;
        // The flags choose; a default without a compiled module (a registered component that
        // did not compile) is never served. No code, contract or vector is read.
        blueprint::Entity::find()
            .select_only()
            .column(C::BlueprintId)
            .filter(C::AppId.eq(app_id))
            .filter(C::ContractHash.eq(contract_hash))
            .filter(C::IsOperatorDefault.eq(true))
            .filter(C::Code.ne(""))
            .order_by_desc(C::UpdatedAt)
            .order_by_asc(C::BlueprintId)
            .into_tuple::<String>()
            .one(&self.db)
            .await
            .map_err(repository_error)
    }

    async fn intent_cached(&self, app_id: &str, intent: &str) -> Result<bool, RepositoryError> {
        let count = blueprint::Entity::find()
            .filter(app_or_pool(app_id))
            .filter(blueprint::Column::Intent.eq(intent))
            .count(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(count > 0)
    }

    async fn list(&self, filter: &BlueprintFilter) -> Result<Vec<BlueprintRecord>, RepositoryError> {
        use blueprint::Column as C;
        blueprint_listing::matching(filter)
            .order_by_asc(C::CreatedAt)
            .order_by_asc(C::BlueprintId)
            .all(&self.db)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(record)
            .collect()
    }

    async fn list_page(
        &self,
        filter: &BlueprintFilter,
        after: Option<&ListingPosition>,
        limit: u64,
    ) -> Result<Vec<BlueprintListing>, RepositoryError> {
        blueprint_listing::page(&self.db, filter, after, limit).await
    }

    async fn count_in_app(&self, app_id: &str) -> Result<u64, RepositoryError> {
        blueprint::Entity::find()
            .filter(blueprint::Column::AppId.eq(app_id))
            .count(&self.db)
            .await
            .map_err(repository_error)
    }

    async fn ids(&self) -> Result<Vec<String>, RepositoryError> {
        blueprint::Entity::find()
            .select_only()
            .column(blueprint::Column::BlueprintId)
            .into_tuple::<String>()
            .all(&self.db)
            .await
            .map_err(repository_error)
    }

    async fn summaries(&self, since: Option<DateTime<Utc>>) -> Result<Vec<BlueprintSummary>, RepositoryError> {
        use blueprint::Column as C;
        let mut query = blueprint::Entity::find().select_only().columns([
            C::BlueprintId,
            C::AppId,
            C::Category,
            C::ContractHash,
            C::VariantKey,
            C::Contract,
            C::Generator,
            C::Featured,
            C::Embedding,
            C::EmbeddingModel,
            C::CreatedAt,
            C::UpdatedAt,
        ]);
        // The texts only up to what the index reads of them: a row stored before the operator's
        // caps may hold megabytes.
        for column in ["intent", "name", "description", "persona"] {
            query = query.expr_as(
                Expr::cust(format!("SUBSTR({column}, 1, {SUMMARY_TEXT_MAX_CHARS})")),
                column,
            );
        }
        if let Some(since) = since {
            query = query.filter(C::UpdatedAt.gt(since));
        }
        let rows = query
            .order_by_asc(C::UpdatedAt)
            .order_by_asc(C::BlueprintId)
            .into_model::<SummaryRow>()
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        rows.into_iter()
            .map(|r| {
                Ok(BlueprintSummary {
                    contract: from_text("blueprints.contract", &r.contract)?,
                    embedding: embedding_of(r.embedding, r.embedding_model),
                    updated_at: r.updated_at.unwrap_or(r.created_at),
                    blueprint_id: r.blueprint_id,
                    app_id: r.app_id,
                    intent: r.intent,
                    name: r.name,
                    description: r.description,
                    category: r.category,
                    contract_hash: r.contract_hash,
                    variant_key: r.variant_key,
                    generator: r.generator,
                    featured: r.featured,
                    persona: r.persona,
                })
            })
            .collect()
    }

    async fn set_embedding(&self, blueprint_id: &str, embedding: &StoredEmbedding) -> Result<(), RepositoryError> {
        // Not a change replicas need to hear about: `updated_at` stays.
        blueprint::Entity::update_many()
            .col_expr(
                blueprint::Column::Embedding,
                Expr::value(vector_bytes(&embedding.vector)),
            )
            .col_expr(blueprint::Column::EmbeddingModel, Expr::value(embedding.model.clone()))
            .filter(blueprint::Column::BlueprintId.eq(blueprint_id))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn update(
        &self,
        app_id: &str,
        blueprint_id: &str,
        change: &BlueprintChange,
        at: DateTime<Utc>,
    ) -> Result<bool, RepositoryError> {
        use blueprint::Column as C;
        // Read before the write transaction: a missing row needs no write lock.
        let Some(found) = blueprint::Entity::find_by_id(blueprint_id.to_owned())
            .filter(C::AppId.eq(app_id))
            .one(&self.db)
            .await
            .map_err(repository_error)?
        else {
            return Ok(false);
        };
        let txn = begin_write(&self.db).await.map_err(repository_error)?;
        if change.is_operator_default == Some(true) {
            blueprint::Entity::update_many()
                .col_expr(C::IsOperatorDefault, Expr::value(false))
                .col_expr(C::UpdatedAt, Expr::value(at))
                .filter(C::AppId.eq(app_id))
                .filter(C::ContractHash.eq(found.contract_hash.clone()))
                .filter(C::IsOperatorDefault.eq(true))
                .filter(C::BlueprintId.ne(blueprint_id))
                .exec(&txn)
                .await
                .map_err(repository_error)?;
        }
        let mut row: blueprint::ActiveModel = found.into();
        if let Some((variance, variant_key)) = &change.variance {
            row.variance = Set(to_text(variance));
            row.variant_key = Set(variant_key.clone());
        }
        if let Some(flag) = change.is_operator_default {
            row.is_operator_default = Set(flag);
        }
        row.updated_at = Set(Some(at));
        row.update(&txn).await.map_err(repository_error)?;
        txn.commit().await.map_err(repository_error)?;
        Ok(true)
    }

    async fn delete(&self, app_id: &str, blueprint_id: &str) -> Result<bool, RepositoryError> {
        let deleted = blueprint::Entity::delete_many()
            .filter(blueprint::Column::BlueprintId.eq(blueprint_id))
            .filter(blueprint::Column::AppId.eq(app_id))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(deleted.rows_affected > 0)
    }
}
