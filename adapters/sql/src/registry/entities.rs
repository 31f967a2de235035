//! Hand-written sea-orm entities of the registry tables (m20261202_000001, m20261217_000001,
//! m20261219_000001, m20261226_000001, m20261228_000001).

pub mod artifact_versions {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "registry_artifact_versions")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub scope: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub name: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub version: String,
        pub kind: String,
        pub visibility: String,
        pub publisher: String,
        #[sea_orm(column_type = "JsonBinary")]
        pub manifest: Json,
        pub signature_algorithm: String,
        pub signature_public_key_id: Option<String>,
        pub signature_value: Option<String>,
        #[sea_orm(column_type = "JsonBinary", nullable)]
        pub sigstore_bundle: Option<Json>,
        pub author_public_key: Option<String>,
        pub bundle_sri: String,
        pub status: String,
        pub yank_reason: Option<String>,
        pub published_at: DateTimeUtc,
        pub yanked_at: Option<DateTimeUtc>,
        /// The search columns (`search_columns.rs`, m20261217_000001); NULL until keyed.
        pub precedence_key: Option<String>,
        pub search_text: Option<String>,
        pub facets: Option<String>,
        /// The release (`release_keys.rs`, m20261219_000001), unique per package; NULL until keyed.
        pub release_key: Option<String>,
        /// The manifest's description (`descriptions.rs`, m20261226_000001); NULL until described.
        #[sea_orm(column_type = "Text", nullable)]
        pub description: Option<String>,
        /// What the version costs its publisher (`version_sizes.rs`, m20261228_000001); NULL when
        /// a registry of an earlier release stored it, until sized.
        pub stored_bytes: Option<i64>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod author_keys {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "registry_author_keys")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub public_key_id: String,
        pub public_key: String,
        pub publisher: String,
        pub created_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod tokens {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "registry_tokens")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub token_sha256: String,
        pub publisher: String,
        pub admin: bool,
        pub created_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
