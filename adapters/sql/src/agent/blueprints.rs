use sea_orm::{
    ActiveModelTrait, ColumnTrait, DatabaseConnection, EntityTrait, PaginatorTrait, QueryFilter, QueryOrder, Set,
};
use svc_application::ports::RepositoryError;
use svc_application::ports::agent::{BlueprintRecord, BlueprintRepository};

use super::entities::blueprint;
use super::seam::{db, from_text, to_text};

pub struct SeaOrmBlueprintRepository {
    db: DatabaseConnection,
}

impl SeaOrmBlueprintRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

fn record(m: blueprint::Model) -> Result<BlueprintRecord, RepositoryError> {
    Ok(BlueprintRecord {
        contract: from_text(&m.contract)?,
        variance: from_text(&m.variance)?,
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
    })
}

#[async_trait::async_trait]
impl BlueprintRepository for SeaOrmBlueprintRepository {
    async fn insert(&self, r: &BlueprintRecord) -> Result<(), RepositoryError> {
        blueprint::ActiveModel {
            blueprint_id: Set(r.blueprint_id.clone()),
            app_id: Set(r.app_id.clone()),
            intent: Set(r.intent.clone()),
            contract_hash: Set(r.contract_hash.clone()),
            variant_key: Set(r.variant_key.clone()),
            contract: Set(to_text(&r.contract)),
            variance: Set(to_text(&r.variance)),
            source: Set(r.source.clone()),
            code: Set(r.code.clone()),
            code_hash: Set(r.code_hash.clone()),
            generator: Set(r.generator.clone()),
            model: Set(r.model.clone()),
            created_at: Set(r.created_at),
        }
        .insert(&self.db)
        .await
        .map_err(db)?;
        Ok(())
    }

    async fn get(&self, blueprint_id: &str) -> Result<Option<BlueprintRecord>, RepositoryError> {
        blueprint::Entity::find_by_id(blueprint_id.to_owned())
            .one(&self.db)
            .await
            .map_err(db)?
            .map(record)
            .transpose()
    }

    async fn find_exact(
        &self,
        app_id: &str,
        intent: &str,
        contract_hash: &str,
        variant_key: &str,
    ) -> Result<Option<BlueprintRecord>, RepositoryError> {
        blueprint::Entity::find()
            .filter(blueprint::Column::AppId.eq(app_id))
            .filter(blueprint::Column::Intent.eq(intent))
            .filter(blueprint::Column::ContractHash.eq(contract_hash))
            .filter(blueprint::Column::VariantKey.eq(variant_key))
            .order_by_desc(blueprint::Column::CreatedAt)
            .order_by_desc(blueprint::Column::BlueprintId)
            .one(&self.db)
            .await
            .map_err(db)?
            .map(record)
            .transpose()
    }

    async fn intent_cached(&self, app_id: &str, intent: &str) -> Result<bool, RepositoryError> {
        let count = blueprint::Entity::find()
            .filter(blueprint::Column::AppId.eq(app_id))
            .filter(blueprint::Column::Intent.eq(intent))
            .count(&self.db)
            .await
            .map_err(db)?;
        Ok(count > 0)
    }
}
