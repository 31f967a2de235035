//! The keys redeemed OAuth codes delivered to clients: recorded per connection (client, owner,
//! app) in one order on every replica, read back for the connection alone, forgotten one by
//! one; a `client_id` URL longer than a `VARCHAR` is kept.

use crate::support;

use chrono::{DateTime, Utc};
use sea_orm::DatabaseConnection;
use svc_application::ports::oauth::{ClientConnection, OAuthClientKeyRepository};
use svc_sql::oauth::SeaOrmOAuthClientKeyRepository;

support::backend_tests!(deliveries_are_kept_per_connection_in_order_until_forgotten);

fn connection<'a>(client_id: &'a str, owner_id: &'a str, app_id: Option<&'a str>) -> ClientConnection<'a> {
    ClientConnection {
        client_id,
        owner_id,
        app_id,
    }
}

async fn deliveries_are_kept_per_connection_in_order_until_forgotten(db: DatabaseConnection) {
    let keys = SeaOrmOAuthClientKeyRepository::new(db);
    let url_client = format!("https://client.example.com/{}", "p".repeat(400));
    // Recorded with clocks that disagree: the order is the database's, not theirs.
    let later: DateTime<Utc> = "2026-12-20T10:00:05Z".parse().unwrap();
    let earlier: DateTime<Utc> = "2026-12-20T10:00:00Z".parse().unwrap();
    let alice = connection("client-a", "alice", None);
    let first = keys.record(alice, "k1", later).await.unwrap();
    let second = keys.record(alice, "k2", earlier).await.unwrap();
    assert!(second > first, "{first} then {second}");
    keys.record(connection("client-a", "bob", None), "k3", earlier)
        .await
        .unwrap();
    keys.record(connection("client-b", "alice", None), "k4", earlier)
        .await
        .unwrap();
    keys.record(connection("client-a", "alice", Some("app1")), "k5", earlier)
        .await
        .unwrap();
    keys.record(connection(&url_client, "alice", None), "k6", earlier)
        .await
        .unwrap();

    let mut delivered: Vec<(String, i64)> = keys
        .delivered(alice)
        .await
        .unwrap()
        .into_iter()
        .map(|d| (d.key_id, d.seq))
        .collect();
    delivered.sort();
    assert_eq!(delivered, [("k1".to_owned(), first), ("k2".to_owned(), second)]);
    let per_app = keys
        .delivered(connection("client-a", "alice", Some("app1")))
        .await
        .unwrap();
    assert_eq!(per_app.len(), 1, "a per-app connection is its own");
    assert_eq!(per_app[0].key_id, "k5");
    let long = keys.delivered(connection(&url_client, "alice", None)).await.unwrap();
    assert_eq!(long.len(), 1, "a long URL client_id is stored whole");
    assert_eq!(long[0].key_id, "k6");

    keys.forget("k1").await.unwrap();
    keys.forget("k1").await.unwrap();
    let left: Vec<String> = keys
        .delivered(alice)
        .await
        .unwrap()
        .into_iter()
        .map(|d| d.key_id)
        .collect();
    assert_eq!(left, ["k2"]);
    assert_eq!(
        keys.delivered(connection("client-a", "bob", None)).await.unwrap().len(),
        1
    );
}
