//! An authorization code's `client_id` is a metadata-document URL of any length
//! (`m20261227_000001_oauth_code_client_id_text`): a code for such a client is stored and
//! redeemed with its whole `client_id`, before and after the migration is rolled back and
//! applied again.

use crate::support;

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::DatabaseConnection;
use sea_orm_migration::MigratorTrait;
use svc_application::ports::oauth::{AuthorizationCodeRepository, CodeConsumption};
use svc_domain::oauth::{AuthorizationCode, CodeBinding, CodeChallenge, KeyGrant};
use svc_sql::Migrator;
use svc_sql::oauth::SeaOrmAuthorizationCodeRepository;

support::backend_tests!(
    a_code_for_a_long_url_client_is_stored_and_redeemed_whole,
    the_widening_rolls_back_and_applies_again,
);

const MIGRATION: &str = "m20261227_000001_oauth_code_client_id_text";

fn now() -> DateTime<Utc> {
    "2026-12-26T10:00:00Z".parse().unwrap()
}

/// A metadata-document URL of `length` characters, random hex (a PostgreSQL B-tree would refuse
/// an entry over 2704 bytes after compression; hex compresses poorly).
fn url_client(length: usize) -> String {
    let path: String = (0..length.div_ceil(32))
        .map(|_| uuid::Uuid::new_v4().simple().to_string())
        .collect();
    let id = format!("https://client.example.com/{path}");
    id[..length].to_owned()
}

fn code_for(client_id: &str, code_hash: &str) -> AuthorizationCode {
    AuthorizationCode {
        code_hash: code_hash.to_owned(),
        binding: CodeBinding {
            client_id: client_id.to_owned(),
            redirect_uri: "https://client.example.com/cb".into(),
            code_challenge: CodeChallenge::from_stored("challenge".into()),
            resource: None,
        },
        key: KeyGrant {
            key_id: format!("key-{code_hash}"),
            owner_id: "alice".into(),
        },
        sealed_token: "sealed".into(),
        issued_at: now(),
        expires_at: now() + TimeDelta::minutes(5),
        consumed_at: None,
    }
}

/// A code for `client_id` inserted and redeemed: the redemption sees the whole `client_id`.
async fn stored_and_redeemed(db: &DatabaseConnection, client_id: &str, code_hash: &str) {
    let codes = SeaOrmAuthorizationCodeRepository::new(db.clone());
    codes
        .insert(&code_for(client_id, code_hash))
        .await
        .unwrap_or_else(|e| panic!("a code for a {}-character client_id: {e}", client_id.len()));
    match codes.consume(code_hash, now()).await.unwrap() {
        CodeConsumption::Consumed(code) => assert_eq!(code.binding.client_id, client_id),
        other => panic!("a fresh code was not consumed: {other:?}"),
    }
}

async fn a_code_for_a_long_url_client_is_stored_and_redeemed_whole(db: DatabaseConnection) {
    stored_and_redeemed(&db, &url_client(256), "h256").await;
    stored_and_redeemed(&db, &url_client(4_096), "h4096").await;
}

async fn the_widening_rolls_back_and_applies_again(db: DatabaseConnection) {
    support::roll_back_through(&db, MIGRATION).await;
    stored_and_redeemed(&db, &url_client(200), "before").await;
    Migrator::up(&db, None).await.unwrap();
    stored_and_redeemed(&db, &url_client(4_096), "after").await;
}
