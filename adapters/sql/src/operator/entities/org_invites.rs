use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "org_invites")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub org_id: String,
    pub email: String,
    pub role: String,
    pub inviter_user_id: String,
    pub status: String,
    pub expires_at: DateTimeUtc,
    pub created_at: DateTimeUtc,
    pub accepted_at: Option<DateTimeUtc>,
    pub accepted_by_user_id: Option<String>,
    pub revoked_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
