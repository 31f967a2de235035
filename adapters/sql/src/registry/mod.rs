//! Repositories of the artifact registry (every backend alike): versions, author keys
//! and publisher tokens. Bundles are not here: they live in the bundle store, by content hash.

mod artifacts;
mod author_keys;
mod descriptions;
mod earlier_releases;
mod entities;
mod keying;
mod publisher_usage;
mod release_keys;
mod search_columns;
mod tokens;
mod version_sizes;

pub use artifacts::SeaOrmArtifactRepository;
pub use author_keys::SeaOrmAuthorKeyRepository;
pub use descriptions::describe_undescribed_versions;
pub use earlier_releases::{BackfillError, EarlierReleaseBackfill, backfill_earlier_release_versions};
pub use keying::key_unkeyed_versions;
pub(crate) use release_keys::RELEASE_INDEX;
pub use release_keys::key_unreleased_versions;
pub use tokens::SeaOrmRegistryTokenRepository;
