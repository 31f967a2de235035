use sea_orm::sea_query::Expr;
use sea_orm::{ActiveValue::Set, ColumnTrait, DatabaseConnection, EntityTrait, QueryFilter};
use svc_application::ports::RepositoryError;
use svc_application::ports::oauth::OAuthClientRepository;
use svc_domain::oauth::{ClientName, OAuthClient, RedirectUri};

use super::entities::oauth_clients;
use crate::errors::repository_error;

pub struct SeaOrmOAuthClientRepository {
    db: DatabaseConnection,
}

impl SeaOrmOAuthClientRepository {
    pub fn new(db: DatabaseConnection) -> Self {
        Self { db }
    }
}

#[async_trait::async_trait]
impl OAuthClientRepository for SeaOrmOAuthClientRepository {
    async fn insert(&self, client: &OAuthClient) -> Result<(), RepositoryError> {
        let uris: Vec<&str> = client.redirect_uris.iter().map(RedirectUri::as_str).collect();
        let row = oauth_clients::ActiveModel {
            client_id: Set(client.client_id.clone()),
            client_name: Set(client.client_name.as_ref().map(|n| n.as_str().to_owned())),
            redirect_uris: Set(serde_json::to_string(&uris).map_err(|e| RepositoryError::Unavailable(e.into()))?),
            created_at: Set(client.created_at),
            last_resource: Set(client.last_resource.clone()),
        };
        oauth_clients::Entity::insert(row)
            .exec_without_returning(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn get(&self, client_id: &str) -> Result<Option<OAuthClient>, RepositoryError> {
        let row = oauth_clients::Entity::find_by_id(client_id.to_owned())
            .one(&self.db)
            .await
            .map_err(repository_error)?;
        row.map(client_from_row).transpose()
    }

    async fn record_last_resource(&self, client_id: &str, resource: Option<&str>) -> Result<(), RepositoryError> {
        oauth_clients::Entity::update_many()
            .col_expr(
                oauth_clients::Column::LastResource,
                Expr::value(resource.map(str::to_owned)),
            )
            .filter(oauth_clients::Column::ClientId.eq(client_id))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }
}

fn client_from_row(row: oauth_clients::Model) -> Result<OAuthClient, RepositoryError> {
    let uris: Vec<String> = serde_json::from_str(&row.redirect_uris)
        .map_err(|e| crate::errors::corrupt("oauth_clients.redirect_uris", e))?;
    Ok(OAuthClient {
        client_id: row.client_id,
        client_name: row.client_name.map(ClientName::from_stored),
        redirect_uris: uris.into_iter().map(RedirectUri::from_stored).collect(),
        created_at: row.created_at,
        last_resource: row.last_resource,
    })
}
