//! Hand-written entities with portable types: string ids, JSON as text, UTC timestamps.

pub mod app {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "apps")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub app_id: String,
        pub owner_id: String,
        pub display_name: String,
        pub system_prompt: Option<String>,
        pub is_default: bool,
        pub created_at: DateTimeUtc,
        pub updated_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod handshake {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "handshakes")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub handshake_id: String,
        pub app_id: String,
        pub intent: String,
        pub contract: String,
        pub variance: String,
        pub generator: Option<String>,
        pub origin: String,
        pub action: String,
        pub blueprint_id: String,
        pub cache: Option<String>,
        pub created_at: DateTimeUtc,
        pub consumed_at: Option<DateTimeUtc>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod blueprint {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "blueprints")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub blueprint_id: String,
        pub app_id: String,
        pub intent: String,
        pub contract_hash: String,
        pub variant_key: String,
        pub contract: String,
        pub variance: String,
        pub source: String,
        pub code: String,
        pub code_hash: String,
        pub generator: String,
        pub model: Option<String>,
        pub created_at: DateTimeUtc,
        pub name: Option<String>,
        pub description: Option<String>,
        pub category: Option<String>,
        pub fixture_props: Option<String>,
        /// Little-endian f32s.
        pub embedding: Option<Vec<u8>>,
        pub embedding_model: Option<String>,
        pub featured: bool,
        pub persona: Option<String>,
        pub aesthetic: Option<String>,
        pub is_operator_default: bool,
        pub source_kind: String,
        pub updated_at: Option<DateTimeUtc>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod session {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "sessions")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub session_id: String,
        pub app_id: String,
        pub intent: String,
        pub blueprint_id: Option<String>,
        pub contract: String,
        pub theme_id: Option<String>,
        pub status: String,
        pub epoch: i64,
        pub props: String,
        pub last_activity_at: DateTimeUtc,
        pub ttl_seconds: i64,
        pub failure_code: Option<String>,
        pub failure_message: Option<String>,
        pub host_name: Option<String>,
        pub host_session_id: Option<String>,
        pub context_snapshot: String,
        pub event_sequence: i64,
        pub created_at: DateTimeUtc,
        pub revision: i64,
        /// Indexed for the retention sweep, UTC (`session_expiry.rs`).
        pub expires_at: DateTime,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod session_history {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "session_history")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub session_id: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub epoch: i64,
        pub props: String,
        pub frozen_at: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod action_event {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "action_events")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub session_id: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub sequence: i64,
        pub client_seq: Option<i64>,
        pub intent: String,
        pub action_data: String,
        pub ui_context: String,
        pub action_id: String,
        pub fired_at: DateTimeUtc,
        pub drained_at: Option<DateTimeUtc>,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}

pub mod stream_envelope {
    use sea_orm::entity::prelude::*;

    #[derive(Clone, Debug, PartialEq, Eq, DeriveEntityModel)]
    #[sea_orm(table_name = "stream_envelopes")]
    pub struct Model {
        #[sea_orm(primary_key, auto_increment = false)]
        pub session_id: String,
        pub channel: String,
        #[sea_orm(primary_key, auto_increment = false)]
        pub seq: i64,
        pub mode: String,
        pub payload: String,
        pub complete: bool,
        pub timestamp: DateTimeUtc,
    }

    #[derive(Copy, Clone, Debug, EnumIter, DeriveRelation)]
    pub enum Relation {}

    impl ActiveModelBehavior for ActiveModel {}
}
