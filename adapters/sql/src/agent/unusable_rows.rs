//! Rows the retention sweep deletes because nobody can use them any more: handshakes past their
//! lifetime (`svc_domain::handshake::rows_may_go_if_created_by` gives the cutoff), org invites
//! that ended (accepted, revoked or expired) by the cutoff, and their mailed links.
//!
//! A batch reads its keys (at most `limit`; along `ix_handshakes_created_at` for handshakes), then
//! deletes them by key in one statement: PostgreSQL has no `DELETE ... LIMIT`, and MySQL cannot
//! delete through a `LIMIT`ed subquery of the same table. Every condition only ever comes true (a
//! handshake only ages; an invite's expiry never moves, an ended invite stays ended, and a
//! deleted one stays deleted), so a key read is still due when its delete runs, and replicas
//! racing delete it once between them. Invites are read without an index: an org keeps few, and
//! this keeps them few.

use chrono::{DateTime, Utc};
use sea_orm::sea_query::{Alias, Condition, Expr, ExprTrait, Query, SelectStatement};
use sea_orm::{ConnectionTrait, DbErr};

use super::retention::SeaOrmRetentionRepository;

/// The kinds of rows deleted once unusable.
#[derive(Clone, Copy)]
pub(super) enum Unusable {
    /// Created at or before the cutoff.
    Handshakes,
    /// Of an invite that ended at or before the cutoff, or of one that no longer exists.
    InviteLinks,
    /// Ended at or before the cutoff.
    Invites,
}

impl Unusable {
    fn table(self) -> &'static str {
        match self {
            Self::Handshakes => "handshakes",
            Self::InviteLinks => "org_invite_links",
            Self::Invites => INVITES,
        }
    }

    fn key(self) -> &'static str {
        match self {
            Self::Handshakes => "handshake_id",
            Self::InviteLinks => "token_hash",
            Self::Invites => "id",
        }
    }

    /// Up to `limit` keys of rows unusable by `cutoff`.
    fn keys(self, cutoff: DateTime<Utc>, limit: u64) -> SelectStatement {
        let mut keys = Query::select()
            .column(Alias::new(self.key()))
            .from(Alias::new(self.table()))
            .limit(limit)
            .to_owned();
        match self {
            Self::Handshakes => keys
                .and_where(Expr::col(Alias::new("created_at")).lte(cutoff))
                .order_by(Alias::new("created_at"), sea_orm::Order::Asc),
            Self::InviteLinks => keys.and_where(Expr::exists(usable_invite(cutoff)).not()),
            Self::Invites => keys.cond_where(ended_by(cutoff)),
        };
        keys
    }
}

const INVITES: &str = "org_invites";

fn invite(column: &str) -> Expr {
    Expr::col((Alias::new(INVITES), Alias::new(column)))
}

/// When an invite ends: accepted, revoked or past its expiry, whichever comes first.
const ENDS: [&str; 3] = ["accepted_at", "revoked_at", "expires_at"];

/// The invite ended at or before `cutoff`.
fn ended_by(cutoff: DateTime<Utc>) -> Condition {
    ENDS.iter()
        .fold(Condition::any(), |ended, column| ended.add(invite(column).lte(cutoff)))
}

/// The link's invite, if it was still usable after `cutoff`: pending then, or ended after it.
fn usable_invite(cutoff: DateTime<Utc>) -> SelectStatement {
    let mut usable = Query::select()
        .expr(Expr::val(1))
        .from(Alias::new(INVITES))
        .and_where(invite("id").equals((Alias::new("org_invite_links"), Alias::new("invite_id"))))
        .to_owned();
    for column in ENDS {
        usable.cond_where(
            Condition::any()
                .add(invite(column).is_null())
                .add(invite(column).gt(cutoff)),
        );
    }
    usable
}

impl SeaOrmRetentionRepository {
    /// Deletes up to `limit` rows of `rows` unusable by `cutoff`; how many it deleted.
    pub(super) async fn delete_unusable(
        &self,
        rows: Unusable,
        cutoff: DateTime<Utc>,
        limit: u64,
    ) -> Result<u64, DbErr> {
        let found = self.db.query_all(&rows.keys(cutoff, limit)).await?;
        let keys = found
            .iter()
            .map(|row| row.try_get_by_index::<String>(0))
            .collect::<Result<Vec<_>, _>>()?;
        if keys.is_empty() {
            return Ok(0);
        }
        let statement = Query::delete()
            .from_table(Alias::new(rows.table()))
            .and_where(Expr::col(Alias::new(rows.key())).is_in(keys))
            .to_owned();
        self.write_one(statement, |_| {}).await
    }
}
