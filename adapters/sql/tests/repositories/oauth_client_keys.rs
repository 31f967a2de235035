//! The keys redeemed OAuth codes delivered to clients: recorded per client and owner, read back
//! for the pair alone, forgotten one by one; a `client_id` URL longer than a `VARCHAR` is kept.

use crate::support;

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::oauth::{ClientKeyDelivery, OAuthClientKeyRepository};
use svc_domain::oauth::KeyGrant;
use svc_sql::oauth::SeaOrmOAuthClientKeyRepository;

support::backend_tests!(deliveries_are_kept_per_client_and_owner_until_forgotten);

fn at(seconds: i64) -> DateTime<Utc> {
    DateTime::parse_from_rfc3339("2026-12-20T10:00:00Z").unwrap().to_utc() + TimeDelta::seconds(seconds)
}

fn grant(key_id: &str, owner_id: &str) -> KeyGrant {
    KeyGrant {
        key_id: key_id.to_owned(),
        owner_id: owner_id.to_owned(),
    }
}

async fn deliveries_are_kept_per_client_and_owner_until_forgotten(db: DatabaseConnection) {
    let keys = SeaOrmOAuthClientKeyRepository::new(db);
    let url_client = format!("https://client.example.com/{}", "p".repeat(400));
    keys.record("client-a", &grant("k1", "alice"), at(0)).await.unwrap();
    keys.record("client-a", &grant("k2", "alice"), at(1)).await.unwrap();
    keys.record("client-a", &grant("k3", "bob"), at(2)).await.unwrap();
    keys.record("client-b", &grant("k4", "alice"), at(3)).await.unwrap();
    keys.record(&url_client, &grant("k5", "alice"), at(4)).await.unwrap();

    let mut delivered = keys.delivered("client-a", "alice").await.unwrap();
    delivered.sort_by(|a, b| a.key_id.cmp(&b.key_id));
    let expected = [("k1", at(0)), ("k2", at(1))].map(|(key_id, delivered_at)| ClientKeyDelivery {
        key_id: key_id.to_owned(),
        delivered_at,
    });
    assert_eq!(delivered, expected);
    let long = keys.delivered(&url_client, "alice").await.unwrap();
    assert_eq!(long.len(), 1, "a long URL client_id is stored whole");
    assert_eq!(long[0].key_id, "k5");

    keys.forget("k1").await.unwrap();
    keys.forget("k1").await.unwrap();
    let left: Vec<String> = keys
        .delivered("client-a", "alice")
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.key_id)
        .collect();
    assert_eq!(left, ["k2"]);
    assert_eq!(keys.delivered("client-a", "bob").await.unwrap().len(), 1);
}
