//! Repositories of the agent plane.

mod apps;
mod blueprint_listing;
pub(crate) mod blueprints;
pub(crate) mod entities;
pub(crate) mod events;
mod handshakes;
mod large_rows;
mod parsed_contracts;
mod pending_handshakes;
mod render_in_one_trip;
mod retention;
mod seam;
mod session_expiry;
mod session_row;
pub(crate) mod sessions;
mod unusable_rows;

pub use apps::SeaOrmAppRepository;
pub use blueprints::SeaOrmBlueprintRepository;
pub use events::SeaOrmEventRepository;
pub use handshakes::SeaOrmHandshakeRepository;
pub use retention::SeaOrmRetentionRepository;
pub use sessions::SeaOrmSessionRepository;
