//! The OAuth 2.1 surface for MCP hosts (Document 2) over real HTTP: discovery, registration,
//! authorize and consent, token, and the key the flow yields on `/mcp`. Scenarios that store
//! clients or codes run on SQLite and on PostgreSQL (`oauth_scenarios!`).

pub(crate) mod support;

/// Like `svc_tests::on_every_backend!`, on a server started with OAuth on (and its settings
/// changed by an optional `configure` closure).
macro_rules! oauth_scenarios {
    ($auth:expr => $($scenario:ident),+ $(,)?) => {
        oauth_scenarios!($auth, |_| {} => $($scenario),+);
    };
    ($auth:expr, $configure:expr => $($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[allow(unused_imports)]
                use super::*;

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    let spawned = crate::oauth::support::OAuthApp::spawn(
                        stringify!($scenario), svc_tests::Backend::Sqlite, $auth, $configure,
                    ).await;
                    if let Some(app) = spawned {
                        super::$scenario(app).await;
                    }
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    let spawned = crate::oauth::support::OAuthApp::spawn(
                        stringify!($scenario), svc_tests::Backend::Postgres, $auth, $configure,
                    ).await;
                    if let Some(app) = spawned {
                        super::$scenario(app).await;
                    }
                }
            }
        )+
    };
}

mod authorization;
mod client_documents;
mod consent_origin;
mod discovery;
mod registration;
mod rejected_requests;
mod token;
