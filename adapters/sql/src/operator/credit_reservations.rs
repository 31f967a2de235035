//! Open credit reservations, written with the wallet movement they belong to.
//!
//! Every transaction here that touches a wallet locks it before the reservation row (as a
//! wallet movement does), so two of them never wait on each other in a circle. A refund deletes
//! the reservation in its own transaction and writes the refund only when its delete removed the
//! row: of racing refunds (replicas, a cancelled render's and the sweep's) exactly one writes.

use chrono::{DateTime, Utc};
use sea_orm::{
    ActiveValue::Set, ColumnTrait, ConnectionTrait, DatabaseConnection, EntityTrait, QueryFilter, QueryOrder,
    QuerySelect,
};
use svc_application::ports::RepositoryError;
use svc_application::ports::credit_reservations::{CreditReservationRepository, RefundOutcome};
use svc_application::ports::operator::TransitionError;
use svc_domain::credit_reservation::{CreditReservation, ReservationRefund, ReservedCharge};
use svc_domain::wallet::{Principal, WalletError};

use super::entities::credit_reservations::{ActiveModel, Column, Entity, Model};
use super::wallets::{lock_existing, lock_or_open, principal_from_row, write_movement};
use crate::errors::{begin_write, repository_error};

pub struct SeaOrmCreditReservationRepository {
    db: DatabaseConnection,
}

impl SeaOrmCreditReservationRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl CreditReservationRepository for SeaOrmCreditReservationRepository {
    async fn open(
        &self,
        principal: &Principal,
        charge: ReservedCharge,
        now: DateTime<Utc>,
    ) -> Result<CreditReservation, TransitionError<WalletError>> {
        let txn = begin_write(&self.db).await.map_err(repository_error)?;
        let wallet = lock_or_open(&txn, principal, now).await?;
        // A refused charge drops the transaction: not even the empty wallet is kept.
        let (reservation, next, entry) =
            CreditReservation::open(&wallet, charge, now).map_err(TransitionError::Rejected)?;
        write_movement(&txn, &next, &entry).await?;
        Entity::insert(reservation_row(&reservation))
            .exec_without_returning(&txn)
            .await
            .map_err(repository_error)?;
        txn.commit().await.map_err(repository_error)?;
        Ok(reservation)
    }

    async fn settle(&self, transaction_id: &str) -> Result<bool, RepositoryError> {
        let deleted = Entity::delete_by_id(transaction_id.to_owned())
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(deleted.rows_affected == 1)
    }

    async fn refund(
        &self,
        transaction_id: &str,
        refund: ReservationRefund,
        now: DateTime<Utc>,
    ) -> Result<RefundOutcome, TransitionError<WalletError>> {
        // Read first to learn whose wallet to lock; what a reservation holds never changes, only
        // whether it is still open, which the delete below decides.
        let Some(row) = Entity::find_by_id(transaction_id.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?
        else {
            return Ok(RefundOutcome::NotOpen);
        };
        let reservation = reservation_from_row(row)?;
        let txn = begin_write(&self.db).await.map_err(repository_error)?;
        // Locked if it is there, never made: a deleted payer's wallet stays deleted.
        let wallet = lock_existing(&txn, &reservation.principal).await?;
        if !delete(&txn, transaction_id).await? {
            // Refunded or settled by another caller since the read.
            txn.rollback().await.map_err(repository_error)?;
            return Ok(RefundOutcome::NotOpen);
        }
        let refunded = reservation
            .refund(wallet.as_ref(), refund, now)
            .map_err(TransitionError::Rejected)?;
        let outcome = match refunded {
            Some((next, entry)) => {
                write_movement(&txn, &next, &entry).await?;
                RefundOutcome::Refunded(entry)
            }
            None => RefundOutcome::PayerGone,
        };
        txn.commit().await.map_err(repository_error)?;
        Ok(outcome)
    }

    async fn opened_before(
        &self,
        cutoff: DateTime<Utc>,
        limit: u64,
    ) -> Result<Vec<CreditReservation>, RepositoryError> {
        Entity::find()
            .filter(Column::OpenedAt.lt(cutoff))
            .order_by_asc(Column::OpenedAt)
            .limit(limit)
            .all(&self.db)
            .await
            .map_err(repository_error)?
            .into_iter()
            .map(reservation_from_row)
            .collect()
    }
}

/// Whether this call deleted the open reservation (and so may refund it).
async fn delete(conn: &impl ConnectionTrait, transaction_id: &str) -> Result<bool, RepositoryError> {
    let deleted = Entity::delete_by_id(transaction_id.to_owned())
        .exec(conn)
        .await
        .map_err(repository_error)?;
    Ok(deleted.rows_affected == 1)
}

fn reservation_row(reservation: &CreditReservation) -> ActiveModel {
    ActiveModel {
        transaction_id: Set(reservation.transaction_id.clone()),
        principal_type: Set(reservation.principal.principal_type.as_str().to_owned()),
        principal_id: Set(reservation.principal.principal_id.clone()),
        amount_cents: Set(reservation.amount_cents),
        related_session_id: Set(reservation.related_session_id.clone()),
        opened_at: Set(reservation.opened_at),
    }
}

fn reservation_from_row(row: Model) -> Result<CreditReservation, RepositoryError> {
    Ok(CreditReservation {
        principal: principal_from_row(
            &row.principal_type,
            row.principal_id,
            "credit_reservations.principal_type",
        )?,
        transaction_id: row.transaction_id,
        amount_cents: row.amount_cents,
        related_session_id: row.related_session_id,
        opened_at: row.opened_at,
    })
}
