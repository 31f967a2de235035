//! Coupon codes are bearer secrets (Document 3): store only their sha256. The primary key column
//! `coupons.code` becomes `coupons.code_hash`, and every row still holding a code in plain text
//! (issued or activated) gets its hash, computed here by the domain's rule on both backends
//! (SQLite has no sha256 function). A hash is hex and never starts `cpn_`, so a row is hashed
//! at most once.
//!
//! `down` renames the column back but keeps the hashes: the plain codes are gone, so a server of
//! the previous version finds no coupon by its code (the holders of unredeemed codes must be given
//! new ones).

use sea_orm::{ConnectionTrait, Order};
use sea_orm_migration::prelude::*;
use svc_domain::coupon::{COUPON_CODE_PREFIX, coupon_code_hash};

#[derive(DeriveMigrationName)]
pub struct Migration;

const TABLE: &str = "coupons";
const PLAIN: &str = "code";
const HASHED: &str = "code_hash";

fn col(name: &str) -> Alias {
    Alias::new(name)
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let rename = Table::alter()
            .table(col(TABLE))
            .rename_column(col(PLAIN), col(HASHED))
            .to_owned();
        manager.alter_table(rename).await?;

        let db = manager.get_connection();
        let backend = db.get_database_backend();
        let mut plain = Query::select();
        // Selected under an alias: SQLite may still name a just-renamed column by its old name.
        plain
            .expr_as(Expr::col(col(HASHED)), col("plain_code"))
            .from(col(TABLE))
            .and_where(Expr::col(col(HASHED)).like(format!("{COUPON_CODE_PREFIX}%")))
            .order_by(col(HASHED), Order::Asc);
        for row in db.query_all_raw(backend.build(&plain)).await? {
            let code: String = row.try_get("", "plain_code")?;
            let update = Query::update()
                .table(col(TABLE))
                .value(col(HASHED), coupon_code_hash(&code))
                .and_where(Expr::col(col(HASHED)).eq(code))
                .to_owned();
            manager.exec_stmt(update).await?;
        }
        Ok(())
    }

    async fn down(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let rename = Table::alter()
            .table(col(TABLE))
            .rename_column(col(HASHED), col(PLAIN))
            .to_owned();
        manager.alter_table(rename).await
    }
}
