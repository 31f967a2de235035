//! Re-hashes every stored blueprint's `contract_hash` by the current rule.
//!
//! The first rule removed the annotation names (`title`, `description`, `default`, `examples`,
//! `$comment`) at every depth, so a property, `$defs` entry, intent, channel or slot with such a
//! name vanished from the hash and two contracts of different shape could share one. The rule now
//! removes them only where they annotate (`svc_domain::contract::contract_hash`). A row keeping
//! its old hash would never again be found by an exact or semantic lookup, so each row whose
//! hash differs is rewritten. The `(app_id, intent, contract_hash, variant_key)` index is not
//! unique, so no rewrite can fail on it.
//!
//! It calls the domain's current `contract_hash`: should the rule change again, a later migration
//! re-hashes again, and this one then computes the newer rule (harmless: the newest rule is the
//! one every row must end at).
//!
//! `down` keeps the new hashes: the old rule is gone, and a server of the previous version finds
//! those rows as it would find any other blueprint of a contract it hashes differently (a cache
//! miss, then a generation beside them).

use sea_orm::{ConnectionTrait, Order};
use sea_orm_migration::prelude::*;
use serde_json::Value;
use svc_domain::contract::{Contract, contract_hash};

#[derive(DeriveMigrationName)]
pub struct Migration;

/// Rows read per page, so a large cache is never held in memory at once.
const PAGE: u64 = 500;

fn col(name: &str) -> Alias {
    Alias::new(name)
}

#[async_trait::async_trait]
impl MigrationTrait for Migration {
    async fn up(&self, manager: &SchemaManager) -> Result<(), DbErr> {
        let db = manager.get_connection();
        let backend = db.get_database_backend();
        let mut after: Option<String> = None;
        loop {
            let mut page = Query::select();
            page.columns([col("blueprint_id"), col("contract"), col("contract_hash")])
                .from(col("blueprints"))
                .order_by(col("blueprint_id"), Order::Asc)
                .limit(PAGE);
            if let Some(last) = &after {
                page.and_where(Expr::col(col("blueprint_id")).gt(last.clone()));
            }
            let rows = db.query_all_raw(backend.build(&page)).await?;
            let Some(last) = rows.last() else {
                return Ok(());
            };
            after = Some(last.try_get::<String>("", "blueprint_id")?);
            for row in &rows {
                let id: String = row.try_get("", "blueprint_id")?;
                let stored: String = row.try_get("", "contract_hash")?;
                let contract: String = row.try_get("", "contract")?;
                let Some(current) = rehashed(&contract) else {
                    tracing::warn!(blueprint_id = %id, "a stored contract is not a JSON object; its contract_hash is kept");
                    continue;
                };
                if current != stored {
                    let update = Query::update()
                        .table(col("blueprints"))
                        .value(col("contract_hash"), current)
                        .and_where(Expr::col(col("blueprint_id")).eq(id))
                        .to_owned();
                    manager.exec_stmt(update).await?;
                }
            }
        }
    }

    async fn down(&self, _manager: &SchemaManager) -> Result<(), DbErr> {
        Ok(())
    }
}

/// The current hash of a stored contract, `None` when the text is not a JSON object.
fn rehashed(contract: &str) -> Option<String> {
    match serde_json::from_str::<Value>(contract).ok()? {
        Value::Object(map) => Some(contract_hash(&Contract::from_agreed(map))),
        _ => None,
    }
}
