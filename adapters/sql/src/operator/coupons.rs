use chrono::{DateTime, Utc};
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter, QuerySelect};
use svc_application::ports::RepositoryError;
use svc_application::ports::operator::{CouponRepository, TransitionError};
use svc_domain::coupon::{Coupon, CouponCode, CouponError, CouponStatus, Redemption};
use svc_domain::wallet::Principal;

use super::entities::coupons;
use super::wallets::{lock_or_open, principal_from_row, write_movement};
use crate::errors::{begin_write, corrupt, repository_error};

pub struct SeaOrmCouponRepository {
    db: DatabaseConnection,
}

impl SeaOrmCouponRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl CouponRepository for SeaOrmCouponRepository {
    async fn issue(&self, coupon: &Coupon) -> Result<(), RepositoryError> {
        coupons::Entity::insert(coupon_row(coupon))
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn get(&self, code: &CouponCode) -> Result<Option<Coupon>, RepositoryError> {
        let row = coupons::Entity::find_by_id(code.stored_hash())
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        row.map(|row| coupon_from_row(row, code)).transpose()
    }

    async fn redeem(
        &self,
        code: &CouponCode,
        target: &Principal,
        transaction_id: String,
        now: DateTime<Utc>,
    ) -> Result<Redemption, TransitionError<CouponError>> {
        // Any early return drops the transaction, which rolls back whatever it wrote.
        let txn = begin_write(&self.db).await.map_err(repository_error)?;
        // On PostgreSQL a racing redemption waits here and then reads the activated coupon.
        let coupon = coupons::Entity::find_by_id(code.stored_hash())
            .lock_exclusive()
            .one(&txn)
            .await
            .map_err(repository_error)?
            .map(|row| coupon_from_row(row, code))
            .transpose()?
            .ok_or(TransitionError::Rejected(CouponError::NotFound))?;
        let wallet = lock_or_open(&txn, target, now).await?;
        let redemption = coupon
            .redeem(&wallet, transaction_id, now)
            .map_err(TransitionError::Rejected)?;
        // Conditional on `issued` as well, so a missing lock could never credit twice.
        let activated = coupons::Entity::update_many()
            .set(coupon_row(&redemption.coupon))
            .filter(coupons::Column::CodeHash.eq(code.stored_hash()))
            .filter(coupons::Column::Status.eq(CouponStatus::Issued.as_str()))
            .exec(&txn)
            .await
            .map_err(repository_error)?;
        if activated.rows_affected != 1 {
            return Err(TransitionError::Rejected(CouponError::AlreadyRedeemed));
        }
        write_movement(&txn, &redemption.wallet, &redemption.ledger_entry).await?;
        txn.commit().await.map_err(repository_error)?;
        Ok(redemption)
    }
}

fn coupon_row(coupon: &Coupon) -> coupons::ActiveModel {
    let redeemed_by = coupon.redeemed_by.as_ref();
    coupons::ActiveModel {
        code_hash: Set(coupon.code.stored_hash()),
        credit_cents: Set(coupon.credit_cents),
        status: Set(coupon.status.as_str().to_owned()),
        created_at: Set(coupon.created_at),
        expires_at: Set(coupon.expires_at),
        activated_at: Set(coupon.activated_at),
        redeemed_by_principal_type: Set(redeemed_by.map(|p| p.principal_type.as_str().to_owned())),
        redeemed_by_principal_id: Set(redeemed_by.map(|p| p.principal_id.clone())),
    }
}

/// The coupon of a row found by the hash of `code`: the row holds only the hash, so the code is
/// the one the caller presented.
fn coupon_from_row(row: coupons::Model, code: &CouponCode) -> Result<Coupon, RepositoryError> {
    let code = code.clone();
    let status = CouponStatus::parse(&row.status)
        .ok_or_else(|| corrupt("coupons.status", format!("status {:?}", row.status)))?;
    let redeemed_by = match (row.redeemed_by_principal_type, row.redeemed_by_principal_id) {
        (Some(principal_type), Some(principal_id)) => Some(principal_from_row(
            &principal_type,
            principal_id,
            "coupons.redeemed_by_principal_type",
        )?),
        (None, None) => None,
        _ => {
            return Err(corrupt(
                "coupons.redeemed_by_principal_id",
                "half a redeeming principal",
            ));
        }
    };
    Ok(Coupon {
        code,
        credit_cents: row.credit_cents,
        status,
        created_at: row.created_at,
        expires_at: row.expires_at,
        activated_at: row.activated_at,
        redeemed_by,
    })
}
