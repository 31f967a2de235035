//! Repositories of the OAuth surface: registered clients, authorization codes and the keys codes
//! delivered to clients, in the same database as everything else, so any replica can finish a
//! flow another one started.

mod client_keys;
mod clients;
mod codes;
mod entities;

pub use client_keys::SeaOrmOAuthClientKeyRepository;
pub use clients::SeaOrmOAuthClientRepository;
pub use codes::SeaOrmAuthorizationCodeRepository;
