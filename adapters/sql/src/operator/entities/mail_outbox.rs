use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "mail_outbox")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub id: String,
    pub kind: String,
    pub recipient: String,
    #[sea_orm(column_type = "JsonBinary")]
    pub payload: Json,
    pub created_at: DateTimeUtc,
    /// Set by the delivery worker once the mail left.
    pub sent_at: Option<DateTimeUtc>,
    /// Attempts so far (each counted when its lease is taken).
    pub attempts: i32,
    /// When the next attempt may run (also the end of a sender's lease); `None`: now.
    pub next_attempt_at: Option<DateTimeUtc>,
    pub last_error: Option<String>,
    /// Set when delivery gave up (a permanent failure, or the attempts spent).
    pub given_up_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
