//! One service per area.

pub mod agent;
pub mod auth;
pub mod operator;
pub mod pairing;
