//! Rows the retention sweep deletes because nobody can use them any more: handshakes past their
//! lifetime (`svc_domain::handshake::rows_may_go_if_created_by` gives the cutoff), and the mailed
//! links of org invites that ended (accepted, revoked or expired) by the cutoff.
//!
//! A batch reads its keys (at most `limit`; along `ix_handshakes_created_at` for handshakes), then
//! deletes them by key in one statement: PostgreSQL has no `DELETE ... LIMIT`, and MySQL cannot
//! delete through a `LIMIT`ed subquery of the same table. Both conditions only ever come true (a
//! handshake only ages; an invite's expiry never moves, and an ended invite stays ended), so a
//! key read is still due when its delete runs, and replicas racing delete it once between them.

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
}

impl Unusable {
    fn table(self) -> &'static str {
        match self {
            Self::Handshakes => "handshakes",
            Self::InviteLinks => "org_invite_links",
        }
    }

    fn key(self) -> &'static str {
        match self {
            Self::Handshakes => "handshake_id",
            Self::InviteLinks => "token_hash",
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
        };
        keys
    }
}

/// The link's invite, if it was still usable after `cutoff`: pending then, or ended after it.
fn usable_invite(cutoff: DateTime<Utc>) -> SelectStatement {
    let invite = |column: &str| Expr::col((Alias::new("org_invites"), Alias::new(column)));
    let not_by_cutoff = |column: &str| {
        Condition::any()
            .add(invite(column).is_null())
            .add(invite(column).gt(cutoff))
    };
    Query::select()
        .expr(Expr::val(1))
        .from(Alias::new("org_invites"))
        .and_where(invite("id").equals((Alias::new("org_invite_links"), Alias::new("invite_id"))))
        .and_where(invite("expires_at").gt(cutoff))
        .cond_where(not_by_cutoff("accepted_at"))
        .cond_where(not_by_cutoff("revoked_at"))
        .to_owned()
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
        self.delete(statement, |_| {}).await
    }
}
