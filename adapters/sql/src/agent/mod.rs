//! Repositories of the agent plane.

mod apps;
mod blueprints;
pub(crate) mod entities;
mod events;
mod handshakes;
mod pending_handshakes;
mod seam;
mod sessions;

pub use apps::SeaOrmAppRepository;
pub use blueprints::SeaOrmBlueprintRepository;
pub use events::SeaOrmEventRepository;
pub use handshakes::SeaOrmHandshakeRepository;
pub use sessions::SeaOrmSessionRepository;
