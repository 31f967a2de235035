//! The code sweep's deletion of registered clients nobody uses: a client is deleted only when no
//! authorization code and no delivered key still usable (active, not expired before the cut-off)
//! refers to it and it has neither registered nor completed an authorization since the cut-off;
//! anything else keeps it.

use crate::support;

use chrono::{DateTime, TimeDelta, Utc};
use sea_orm::sea_query::{Alias, Expr, ExprTrait, Query};
use sea_orm::{ConnectionTrait, DatabaseConnection};
use sea_orm_migration::MigratorTrait;
use svc_application::ports::oauth::{
    AuthorizationCodeRepository, ClientConnection, OAuthClientKeyRepository, OAuthClientRepository,
};
use svc_domain::oauth::{AuthorizationCode, CodeBinding, CodeChallenge, KeyGrant, OAuthClient, RedirectUri};
use svc_sql::Migrator;
use svc_sql::oauth::{SeaOrmAuthorizationCodeRepository, SeaOrmOAuthClientKeyRepository, SeaOrmOAuthClientRepository};

support::backend_tests!(
    a_client_is_deleted_only_once_nothing_refers_to_it_and_it_went_unused,
    a_client_registered_before_the_migration_is_kept_as_if_it_had_just_connected,
);

fn now() -> DateTime<Utc> {
    "2027-02-01T12:00:00Z".parse().unwrap()
}

fn days_ago(days: i64) -> DateTime<Utc> {
    now() - TimeDelta::days(days)
}

fn client(client_id: &str, registered: DateTime<Utc>) -> OAuthClient {
    OAuthClient {
        client_id: client_id.to_owned(),
        client_name: None,
        redirect_uris: vec![RedirectUri::from_stored("https://host.example/cb".into())],
        created_at: registered,
        last_resource: None,
    }
}

/// A connector key as the operator store keeps it: `status`, and its expiry if it has one.
async fn connector_key(db: &DatabaseConnection, id: &str, status: &str, expires_at: Option<DateTime<Utc>>) {
    let insert = Query::insert()
        .into_table(Alias::new("connector_keys"))
        .columns(
            [
                "id",
                "owner_user_id",
                "api_key_prefix",
                "key_hash",
                "status",
                "created_at",
                "expires_at",
            ]
            .map(Alias::new),
        )
        .values_panic([
            id.into(),
            "alice".into(),
            "svc_".into(),
            format!("hash-{id}").into(),
            status.into(),
            days_ago(50).into(),
            expires_at.into(),
        ])
        .to_owned();
    db.execute(&insert).await.unwrap();
}

fn code_for(client_id: &str, issued: DateTime<Utc>) -> AuthorizationCode {
    AuthorizationCode {
        code_hash: format!("hash-of-{client_id}"),
        binding: CodeBinding {
            client_id: client_id.to_owned(),
            redirect_uri: "https://host.example/cb".into(),
            code_challenge: CodeChallenge::from_stored("challenge".into()),
            resource: None,
        },
        key: KeyGrant {
            key_id: format!("key-of-{client_id}"),
            owner_id: "alice".into(),
        },
        sealed_token: "sealed".into(),
        issued_at: issued,
        expires_at: issued + TimeDelta::minutes(5),
        consumed_at: None,
    }
}

async fn a_client_is_deleted_only_once_nothing_refers_to_it_and_it_went_unused(db: DatabaseConnection) {
    let clients = SeaOrmOAuthClientRepository::new(db.clone());
    let codes = SeaOrmAuthorizationCodeRepository::new(db.clone());
    let keys = SeaOrmOAuthClientKeyRepository::new(db.clone());
    for (id, registered) in [
        ("never-used", days_ago(40)),
        ("just-registered", days_ago(10)),
        ("code-in-flight", days_ago(40)),
        ("connected", days_ago(40)),
        ("key-expired-long-ago", days_ago(40)),
        ("authorized-lately", days_ago(40)),
        ("authorized-long-ago", days_ago(60)),
    ] {
        clients.insert(&client(id, registered)).await.unwrap();
    }
    codes.insert(&code_for("code-in-flight", days_ago(40))).await.unwrap();
    let connection = ClientConnection {
        client_id: "connected",
        owner_id: "alice",
        app_id: None,
    };
    connector_key(&db, "key-1", "active", None).await;
    keys.record(connection, "key-1", days_ago(39)).await.unwrap();
    connector_key(&db, "key-2", "active", Some(days_ago(35))).await;
    let expired = ClientConnection {
        client_id: "key-expired-long-ago",
        owner_id: "alice",
        app_id: None,
    };
    keys.record(expired, "key-2", days_ago(39)).await.unwrap();
    clients
        .record_last_resource("authorized-lately", None, days_ago(5))
        .await
        .unwrap();
    clients
        .record_last_resource("authorized-long-ago", Some("https://svc.example/apps/a"), days_ago(40))
        .await
        .unwrap();

    assert_eq!(clients.forget_unused(days_ago(30)).await.unwrap(), 3);
    for (id, kept) in [
        ("never-used", false),
        ("just-registered", true),
        ("code-in-flight", true),
        ("connected", true),
        ("key-expired-long-ago", false),
        ("authorized-lately", true),
        ("authorized-long-ago", false),
    ] {
        assert_eq!(clients.get(id).await.unwrap().is_some(), kept, "{id}");
    }

    // Once its key is revoked (the delivery's row stays), a long-idle client goes too.
    let revoke = Query::update()
        .table(Alias::new("connector_keys"))
        .value(Alias::new("status"), "revoked")
        .and_where(Expr::col(Alias::new("id")).eq("key-1"))
        .to_owned();
    db.execute(&revoke).await.unwrap();
    assert_eq!(clients.forget_unused(days_ago(30)).await.unwrap(), 1);
    assert!(clients.get("connected").await.unwrap().is_none());
    assert!(
        clients.get("code-in-flight").await.unwrap().is_some(),
        "its code still refers to it"
    );
}

/// Whether a client registered before `m20261224_000001_oauth_clients_last_authorized` ever
/// connected was not recorded: the migration counts it as connected when it ran.
async fn a_client_registered_before_the_migration_is_kept_as_if_it_had_just_connected(db: DatabaseConnection) {
    support::roll_back_through(&db, "m20261224_000001_oauth_clients_last_authorized").await;
    let registered: DateTime<Utc> = "2020-01-01T00:00:00Z".parse().unwrap();
    let insert = Query::insert()
        .into_table(Alias::new("oauth_clients"))
        .columns(
            [
                "client_id",
                "client_name",
                "redirect_uris",
                "created_at",
                "last_resource",
            ]
            .map(Alias::new),
        )
        .values_panic([
            Expr::val("old-client"),
            Expr::val(Option::<String>::None),
            Expr::val(r#"["https://host.example/cb"]"#),
            Expr::val(registered),
            Expr::val(Option::<String>::None),
        ])
        .to_owned();
    db.execute(&insert).await.unwrap();
    Migrator::up(&db, None).await.unwrap();

    let clients = SeaOrmOAuthClientRepository::new(db);
    // The migration ran just now, by the wall clock: a cut-off a day before keeps the client.
    let migrated_about = Utc::now();
    assert_eq!(
        clients
            .forget_unused(migrated_about - TimeDelta::days(1))
            .await
            .unwrap(),
        0
    );
    assert!(clients.get("old-client").await.unwrap().is_some());
    assert_eq!(
        clients
            .forget_unused(migrated_about + TimeDelta::days(1))
            .await
            .unwrap(),
        1,
        "unused since the migration"
    );
}
