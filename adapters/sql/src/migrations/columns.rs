//! The column builders every migration uses. Each one passes its column through [`fit`], so a
//! migration never forgets MySQL/MariaDB's spelling of a type (timestamps, text, bytes); on
//! SQLite and PostgreSQL the columns are sea-query's portable types, unchanged.

use sea_orm::DbBackend;
use sea_orm_migration::prelude::*;

use super::fit;

/// Columns for one backend: `Columns::new(manager.get_database_backend())`.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Columns(DbBackend);

impl Columns {
    pub(crate) fn new(backend: DbBackend) -> Self {
        Self(backend)
    }

    /// Any column built by hand (a default, a length, an auto-increment), fitted.
    pub(crate) fn fit(self, column: &mut ColumnDef) -> ColumnDef {
        fit(column.to_owned(), self.0)
    }

    /// A string primary key (ids).
    pub(crate) fn key(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).string().not_null().primary_key())
    }

    /// A short string (`VARCHAR`): ids, names, codes, hashes.
    pub(crate) fn string(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).string().not_null())
    }

    pub(crate) fn optional_string(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).string().null())
    }

    /// Text of any length: JSON, sources, sealed values.
    pub(crate) fn text(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).text().not_null())
    }

    pub(crate) fn optional_text(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).text().null())
    }

    /// An instant (`DateTimeUtc` in the entities).
    pub(crate) fn time(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).timestamp_with_time_zone().not_null())
    }

    pub(crate) fn optional_time(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).timestamp_with_time_zone().null())
    }

    /// A 64-bit integer: counters, sequences, cents.
    pub(crate) fn big(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).big_integer().not_null())
    }

    pub(crate) fn optional_big(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).big_integer().null())
    }

    /// JSON (`jsonb` on PostgreSQL).
    pub(crate) fn json(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).json_binary().not_null())
    }

    pub(crate) fn optional_json(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).json_binary().null())
    }

    pub(crate) fn flag(self, name: impl IntoIden) -> ColumnDef {
        self.fit(ColumnDef::new(name).boolean().not_null())
    }
}
