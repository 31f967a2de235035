//! The black-box suite: one test binary (the server and its dependencies link once), one
//! module per area. Run one area with `cargo test -p svc-tests --test blackbox <module>::`.

// Shared helpers first: `with_tenants!` is used by the modules after it.
mod federation_support;
mod hosted_support;
#[macro_use]
mod ops_support;
mod registry_support;

mod agent_tools;
mod app_endpoint;
mod app_rate_limit;
mod apps_configure;
mod behind_nginx;
mod blueprint_embedder;
mod blueprint_pools;
mod blueprints;
mod body_limits;
mod browser;
mod cli;
mod connections;
mod crash;
mod deployment;
mod discover;
mod embedding;
mod federated_identities;
mod file_permissions;
mod gadget_bundles;
mod gadget_types;
mod generation_queue;
mod hosted_credits;
mod hosted_mode;
mod hosted_provider_keys;
mod hostile_inputs;
mod input_hygiene;
mod key_revocation;
mod live_channel;
mod live_roles;
mod llm_generation;
mod mcp_apps_option;
mod mcp_apps_variant;
mod mcp_transport;
mod oauth;
mod observability;
mod openapi_fuzz;
mod ops_apps;
mod ops_blueprints;
mod ops_connector_keys;
mod ops_coupons;
mod ops_locked_keys;
mod ops_orgs;
mod ops_route;
mod pairing;
mod peers;
mod peers_oauth;
mod public_demo;
mod registry_cli;
mod registry_end_to_end;
mod registry_server;
mod render_progress;
mod replicas;
mod token_logging;
mod tool_channels;
mod tool_rate_limit;
mod tool_schemas;
