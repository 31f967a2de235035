//! Repositories of the artifact registry (SQLite and PostgreSQL alike): versions, author keys
//! and publisher tokens. Bundles are not here: they live in the bundle store, by content hash.

mod artifacts;
mod author_keys;
mod entities;
mod tokens;

pub use artifacts::SeaOrmArtifactRepository;
pub use author_keys::SeaOrmAuthorKeyRepository;
pub use tokens::SeaOrmRegistryTokenRepository;
