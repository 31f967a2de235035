//! One service per area.

pub mod accounts;
pub mod agent;
pub mod app_endpoint;
pub mod app_settings;
pub mod apps;
pub mod auth;
pub mod blueprints;
pub mod compile;
pub mod console;
pub mod cpu_gate;
pub mod federated_caller;
pub mod generation;
pub mod hosted;
pub mod mail;
pub mod oauth;
pub mod operator;
pub mod pairing;
pub mod rate_limit;
pub mod registry;
pub mod retention;
pub mod tool_call_limit;
pub mod tool_channels;
