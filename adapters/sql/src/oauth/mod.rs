//! Repositories of the OAuth surface: registered clients and authorization codes, in the same
//! database as everything else, so any replica can finish a flow another one started.

mod clients;
mod codes;
mod entities;

pub use clients::SeaOrmOAuthClientRepository;
pub use codes::SeaOrmAuthorizationCodeRepository;
