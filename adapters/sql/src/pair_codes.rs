//! `SqlPairCodes`: the pair code in force in one row (`pair_codes`, id 1) that every replica
//! reads, so a client pairs with the code the operator saw whichever replica answers. Writes are
//! compare-and-set on `version`.

use sea_orm::sea_query::Expr;
use sea_orm::{ActiveModelTrait, ColumnTrait, DatabaseConnection, DbErr, EntityTrait, QueryFilter, Set};
use svc_application::ports::RepositoryError;
use svc_application::ports::pair_codes::{PairCodeStore, StoredPairCode};
use svc_domain::pair_code::PairCode;

mod entity {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "pair_codes")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub id: i32,
        pub code: String,
        pub first_used_at: Option<DateTimeUtc>,
        pub version: i64,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

/// The one row.
const CURRENT: i32 = 1;

pub struct SqlPairCodes {
    db: DatabaseConnection,
}

impl SqlPairCodes {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }

    async fn current(&self) -> Result<Option<StoredPairCode>, DbErr> {
        Ok(entity::Entity::find_by_id(CURRENT)
            .one(&self.db)
            .await?
            .map(|row| StoredPairCode {
                code: PairCode::stored(row.code, row.first_used_at),
                version: row.version,
            }))
    }
}

fn unavailable(error: DbErr) -> RepositoryError {
    RepositoryError::Unavailable(anyhow::Error::new(error))
}

#[async_trait::async_trait]
impl PairCodeStore for SqlPairCodes {
    async fn load_or_issue(&self, fresh: PairCode) -> Result<StoredPairCode, RepositoryError> {
        if let Some(stored) = self.current().await.map_err(unavailable)? {
            return Ok(stored);
        }
        let inserted = entity::ActiveModel {
            id: Set(CURRENT),
            code: Set(fresh.code().to_owned()),
            first_used_at: Set(fresh.first_used_at()),
            version: Set(0),
        }
        .insert(&self.db)
        .await;
        match inserted {
            Ok(_) => Ok(StoredPairCode {
                code: fresh,
                version: 0,
            }),
            // Another replica inserted first: its code is the one in force.
            Err(insert_error) => self
                .current()
                .await
                .map_err(unavailable)?
                .ok_or_else(|| unavailable(insert_error)),
        }
    }

    async fn replace(&self, version: i64, next: &PairCode) -> Result<bool, RepositoryError> {
        let updated = entity::Entity::update_many()
            .col_expr(entity::Column::Code, Expr::value(next.code()))
            .col_expr(entity::Column::FirstUsedAt, Expr::value(next.first_used_at()))
            .col_expr(entity::Column::Version, Expr::value(version + 1))
            .filter(entity::Column::Id.eq(CURRENT))
            .filter(entity::Column::Version.eq(version))
            .exec(&self.db)
            .await
            .map_err(unavailable)?;
        Ok(updated.rows_affected == 1)
    }
}
