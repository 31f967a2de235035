use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use svc_application::ports::RepositoryError;
use svc_application::ports::operator::{LedgerPage, LedgerPosition, TransitionError, WalletRepository};
use svc_domain::wallet::{LedgerEntry, Principal, PrincipalType, TransactionKind, Wallet, WalletError, WalletMovement};

use super::entities::{ledger_entries, wallets};
use crate::errors::{begin_write, corrupt, inconsistent, repository_error};

pub struct SeaOrmWalletRepository {
    db: DatabaseConnection,
}

impl SeaOrmWalletRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl WalletRepository for SeaOrmWalletRepository {
    async fn get(&self, principal: &Principal) -> Result<Option<Wallet>, RepositoryError> {
        let row = wallets::Entity::find_by_id(principal_key(principal))
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        row.map(wallet_from_row).transpose()
    }

    async fn apply(
        &self,
        principal: &Principal,
        movement: WalletMovement,
        now: DateTime<Utc>,
    ) -> Result<(Wallet, LedgerEntry), TransitionError<WalletError>> {
        let txn = begin_write(&self.db).await.map_err(repository_error)?;
        let wallet = lock_or_open(&txn, principal, now).await?;
        let (next, entry) = wallet.apply(movement, now).map_err(TransitionError::Rejected)?;
        write_movement(&txn, &next, &entry).await?;
        txn.commit().await.map_err(repository_error)?;
        Ok((next, entry))
    }

    async fn apply_once(
        &self,
        principal: &Principal,
        movement: WalletMovement,
        now: DateTime<Utc>,
    ) -> Result<Option<(Wallet, LedgerEntry)>, TransitionError<WalletError>> {
        let txn = begin_write(&self.db).await.map_err(repository_error)?;
        // The wallet row is locked first, so racing first uses queue here and the second one
        // sees the first one's ledger row.
        let wallet = lock_or_open(&txn, principal, now).await?;
        let already = ledger_entries::Entity::find()
            .filter(ledger_entries::Column::PrincipalType.eq(principal.principal_type.as_str()))
            .filter(ledger_entries::Column::PrincipalId.eq(principal.principal_id.as_str()))
            .filter(ledger_entries::Column::Kind.eq(movement.kind.as_str()))
            .one(&txn)
            .await
            .map_err(repository_error)?;
        if already.is_some() {
            txn.commit().await.map_err(repository_error)?;
            return Ok(None);
        }
        let (next, entry) = wallet.apply(movement, now).map_err(TransitionError::Rejected)?;
        write_movement(&txn, &next, &entry).await?;
        txn.commit().await.map_err(repository_error)?;
        Ok(Some((next, entry)))
    }

    async fn list_ledger(
        &self,
        principal: &Principal,
        limit: u32,
        before: Option<LedgerPosition>,
    ) -> Result<LedgerPage, RepositoryError> {
        let mut query = ledger_entries::Entity::find()
            .filter(ledger_entries::Column::PrincipalType.eq(principal.principal_type.as_str()))
            .filter(ledger_entries::Column::PrincipalId.eq(principal.principal_id.as_str()));
        if let Some(before) = before {
            query = query.filter(ledger_entries::Column::Seq.lt(before));
        }
        // One row more than asked tells whether another page follows.
        let mut rows = query
            .order_by_desc(ledger_entries::Column::Seq)
            .limit(u64::from(limit) + 1)
            .all(&self.db)
            .await
            .map_err(repository_error)?;
        let has_more = rows.len() > limit as usize;
        rows.truncate(limit as usize);
        let next_before = if has_more { rows.last().map(|row| row.seq) } else { None };
        let entries = rows.into_iter().map(ledger_entry_from_row).collect::<Result<_, _>>()?;
        Ok(LedgerPage { entries, next_before })
    }
}

pub(super) fn principal_key(principal: &Principal) -> (String, String) {
    (
        principal.principal_type.as_str().to_owned(),
        principal.principal_id.clone(),
    )
}

/// Inserts a new wallet; an existing one for the principal is a `Conflict`.
pub(super) async fn insert_wallet(conn: &impl ConnectionTrait, wallet: &Wallet) -> Result<(), RepositoryError> {
    wallets::Entity::insert(wallet_row(wallet))
        .exec_without_returning(conn)
        .await
        .map_err(repository_error)?;
    Ok(())
}

/// The principal's wallet, created empty if missing, locked for the rest of the transaction
/// on PostgreSQL (SQLite's write transaction already excludes other writers).
pub(super) async fn lock_or_open(
    conn: &impl ConnectionTrait,
    principal: &Principal,
    now: DateTime<Utc>,
) -> Result<Wallet, RepositoryError> {
    wallets::Entity::insert(wallet_row(&Wallet::open(principal.clone(), now)))
        .on_conflict_do_nothing()
        .exec_without_returning(conn)
        .await
        .map_err(repository_error)?;
    let row = wallets::Entity::find_by_id(principal_key(principal))
        .lock_exclusive()
        .one(conn)
        .await
        .map_err(repository_error)?
        .ok_or_else(|| inconsistent("wallets", "vanished inside its transaction"))?;
    wallet_from_row(row)
}

/// The principal's wallet if it exists, locked for the rest of the transaction on PostgreSQL
/// and MariaDB (SQLite's write transaction already excludes other writers); none is made.
pub(super) async fn lock_existing(
    conn: &impl ConnectionTrait,
    principal: &Principal,
) -> Result<Option<Wallet>, RepositoryError> {
    wallets::Entity::find_by_id(principal_key(principal))
        .lock_exclusive()
        .one(conn)
        .await
        .map_err(repository_error)?
        .map(wallet_from_row)
        .transpose()
}

/// Writes the wallet after a movement and the movement's ledger row.
pub(super) async fn write_movement(
    conn: &impl ConnectionTrait,
    wallet: &Wallet,
    entry: &LedgerEntry,
) -> Result<(), RepositoryError> {
    let updated = wallets::Entity::update_many()
        .set(wallet_row(wallet))
        .filter(wallets::Column::PrincipalType.eq(wallet.principal.principal_type.as_str()))
        .filter(wallets::Column::PrincipalId.eq(wallet.principal.principal_id.as_str()))
        .exec(conn)
        .await
        .map_err(repository_error)?;
    if updated.rows_affected != 1 {
        return Err(inconsistent("wallets", "movement on a wallet that does not exist"));
    }
    ledger_entries::Entity::insert(ledger_row(entry))
        .exec_without_returning(conn)
        .await
        .map_err(repository_error)?;
    Ok(())
}

fn wallet_row(wallet: &Wallet) -> wallets::ActiveModel {
    wallets::ActiveModel {
        principal_type: Set(wallet.principal.principal_type.as_str().to_owned()),
        principal_id: Set(wallet.principal.principal_id.clone()),
        balance_cents: Set(wallet.balance_cents),
        lifetime_granted_cents: Set(wallet.lifetime_granted_cents),
        lifetime_spent_cents: Set(wallet.lifetime_spent_cents),
        updated_at: Set(wallet.updated_at),
    }
}

pub(super) fn principal_from_row(
    principal_type: &str,
    principal_id: String,
    column: &'static str,
) -> Result<Principal, RepositoryError> {
    let principal_type = PrincipalType::parse(principal_type)
        .ok_or_else(|| corrupt(column, format!("principal type {principal_type:?}")))?;
    Ok(Principal {
        principal_type,
        principal_id,
    })
}

pub(super) fn wallet_from_row(row: wallets::Model) -> Result<Wallet, RepositoryError> {
    Ok(Wallet {
        principal: principal_from_row(&row.principal_type, row.principal_id, "wallets.principal_type")?,
        balance_cents: row.balance_cents,
        lifetime_granted_cents: row.lifetime_granted_cents,
        lifetime_spent_cents: row.lifetime_spent_cents,
        updated_at: row.updated_at,
    })
}

fn ledger_row(entry: &LedgerEntry) -> ledger_entries::ActiveModel {
    ledger_entries::ActiveModel {
        seq: Default::default(),
        transaction_id: Set(entry.transaction_id.clone()),
        principal_type: Set(entry.principal.principal_type.as_str().to_owned()),
        principal_id: Set(entry.principal.principal_id.clone()),
        kind: Set(entry.kind.as_str().to_owned()),
        delta_cents: Set(entry.delta_cents),
        balance_after_cents: Set(entry.balance_after_cents),
        reason: Set(entry.reason.clone()),
        created_at: Set(entry.created_at),
        related_session_id: Set(entry.related_session_id.clone()),
    }
}

fn ledger_entry_from_row(row: ledger_entries::Model) -> Result<LedgerEntry, RepositoryError> {
    let kind = TransactionKind::parse(&row.kind)
        .ok_or_else(|| corrupt("ledger_entries.kind", format!("kind {:?}", row.kind)))?;
    Ok(LedgerEntry {
        transaction_id: row.transaction_id,
        principal: principal_from_row(&row.principal_type, row.principal_id, "ledger_entries.principal_type")?,
        kind,
        delta_cents: row.delta_cents,
        balance_after_cents: row.balance_after_cents,
        reason: row.reason,
        created_at: row.created_at,
        related_session_id: row.related_session_id,
    })
}
