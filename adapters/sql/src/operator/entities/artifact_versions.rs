use sea_orm::entity::prelude::*;

#[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
#[sea_orm(table_name = "artifact_versions")]
pub struct Model {
    #[sea_orm(primary_key, auto_increment = false)]
    pub scope: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub name: String,
    #[sea_orm(primary_key, auto_increment = false)]
    pub version: String,
    pub kind: String,
    pub visibility: String,
    #[sea_orm(column_type = "JsonBinary")]
    pub manifest: Json,
    pub signature_algorithm: String,
    pub signature_public_key_id: String,
    pub signature_bundle_sha384: String,
    pub author_public_key: String,
    pub bundle_sri: Option<String>,
    pub status: String,
    pub published_at: DateTimeUtc,
    pub yanked_at: Option<DateTimeUtc>,
}

#[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
pub enum Relation {}

impl ActiveModelBehavior for ActiveModel {}
