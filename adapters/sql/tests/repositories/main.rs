//! The repository tests, one binary: each module runs its tests on SQLite, PostgreSQL and MariaDB
//! (`support::backend_tests!`). Run one module with `cargo test -p svc-sql --test repositories <module>::`.

mod support;

mod agent_apps;
mod agent_blueprint_listing;
mod agent_blueprints;
mod agent_contract_rehash;
mod bounded_inserts;
mod capped_inserts;
mod database_claim;
mod event_large_rows;
mod group_commit;
mod hosted_accounts;
mod hosted_app_settings;
mod hosted_external_sign_ins;
mod oauth_client_indexes;
mod oauth_client_keys;
mod oauth_clients_sweep;
mod oauth_code_client_ids;
mod operator_connector_keys;
mod operator_coupon_hashes;
mod operator_coupons;
mod operator_credit_reservations;
mod operator_invites;
mod operator_migrations;
mod operator_orgs;
mod operator_wallets;
mod pending_handshakes;
mod pg_event_bus;
mod rate_windows;
mod read_lane;
mod registry_backfills;
mod registry_quotas;
mod registry_repositories;
mod render_commit;
mod replay_window_head;
mod session_event_bounds;
mod session_expires_at_migration;
mod session_large_rows;
mod session_read_cache;
mod session_retention;
mod session_rows;
mod session_undrained;
mod session_watch;
mod stored_column_corruption;
mod unusable_rows_retention;
