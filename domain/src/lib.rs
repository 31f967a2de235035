//! Pure rules of the service. Every entity of the seeds' "States and transitions" tables is a value
//! whose transitions are methods taking `now` as an argument and returning the next state or a
//! typed error. Nothing here reads a clock, touches I/O or draws randomness.

pub mod account;
pub mod action_event;
pub mod app;
pub mod app_settings;
pub mod artifact;
pub mod blueprint;
pub mod budget;
pub mod connector_key;
pub mod contract;
pub mod coupon;
pub mod credit_reservation;
pub mod gadgets;
pub mod handshake;
pub mod intent;
pub mod invite;
pub mod json_marker;
pub mod mail;
pub mod model_route;
pub mod name;
pub mod oauth;
pub mod org;
pub mod pair_code;
pub mod provider_key;
pub mod refusal;
pub mod render_price;
pub mod session;
pub mod text;
pub mod themes;
pub mod wallet;
