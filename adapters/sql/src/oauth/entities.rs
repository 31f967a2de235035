//! Hand-written entities of the OAuth tables (portable types: strings and `DateTimeUtc`).

pub mod oauth_clients {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "oauth_clients")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub client_id: String,
        pub client_name: Option<String>,
        /// JSON array of the registered URIs, verbatim.
        pub redirect_uris: String,
        pub created_at: DateTimeUtc,
        pub last_resource: Option<String>,
        /// When the client last completed an authorization; `None`: not since it registered.
        pub last_authorized_at: Option<DateTimeUtc>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod oauth_authorization_codes {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "oauth_authorization_codes")]
    pub struct Model {
        /// Lowercase sha256 hex of the code; the code itself is never stored.
        #[sea_orm(primary_key, auto_increment = false)]
        pub code_hash: String,
        pub client_id: String,
        pub redirect_uri: String,
        pub code_challenge: String,
        pub resource: Option<String>,
        pub key_id: String,
        pub key_owner_id: String,
        pub sealed_token: String,
        pub issued_at: DateTimeUtc,
        pub expires_at: DateTimeUtc,
        pub consumed_at: Option<DateTimeUtc>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod oauth_client_keys {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "oauth_client_keys")]
    pub struct Model {
        #[sea_orm(primary_key)]
        pub seq: i64,
        pub key_id: String,
        pub client_id: String,
        pub owner_id: String,
        /// Empty for a universal connection.
        pub app_id: String,
        pub delivered_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
