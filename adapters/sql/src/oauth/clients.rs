use chrono::{DateTime, Utc};
use sea_orm::sea_query::{ColumnRef, Expr, ExprTrait, IntoColumnRef, IntoTableRef, Query, TableRef};
use sea_orm::{ActiveValue::Set, ColumnTrait, Condition, DatabaseConnection, EntityTrait, QueryFilter};
use svc_application::ports::RepositoryError;
use svc_application::ports::oauth::OAuthClientRepository;
use svc_domain::connector_key::ConnectorKeyStatus;
use svc_domain::oauth::{ClientName, OAuthClient, RedirectUri};

use super::entities::{oauth_authorization_codes as codes, oauth_client_keys as client_keys, oauth_clients};
use crate::errors::repository_error;
use crate::operator::entities::connector_keys;

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
            last_authorized_at: Set(None),
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

    async fn record_last_resource(
        &self,
        client_id: &str,
        resource: Option<&str>,
        at: DateTime<Utc>,
    ) -> Result<(), RepositoryError> {
        oauth_clients::Entity::update_many()
            .col_expr(
                oauth_clients::Column::LastResource,
                Expr::value(resource.map(str::to_owned)),
            )
            .col_expr(oauth_clients::Column::LastAuthorizedAt, Expr::value(Some(at)))
            .filter(oauth_clients::Column::ClientId.eq(client_id))
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(())
    }

    async fn forget_unused(&self, unused_since: DateTime<Utc>) -> Result<u64, RepositoryError> {
        let referred_by = |table: TableRef, client_id: ColumnRef| {
            Query::select()
                .expr(Expr::val(1))
                .from(table)
                .and_where(Expr::col(client_id).equals((oauth_clients::Entity, oauth_clients::Column::ClientId)))
                .to_owned()
        };
        let codes = referred_by(
            codes::Entity.into_table_ref(),
            (codes::Entity, codes::Column::ClientId).into_column_ref(),
        );
        // A delivered key counts while it can still be used: not revoked, and not expired before
        // the client's idle time began (a revocation leaves the delivery's row in place).
        let keys = referred_by(
            client_keys::Entity.into_table_ref(),
            (client_keys::Entity, client_keys::Column::ClientId).into_column_ref(),
        )
        .inner_join(
            connector_keys::Entity,
            Expr::col((connector_keys::Entity, connector_keys::Column::Id))
                .equals((client_keys::Entity, client_keys::Column::KeyId)),
        )
        .and_where(
            Expr::col((connector_keys::Entity, connector_keys::Column::Status)).eq(ConnectorKeyStatus::Active.as_str()),
        )
        .cond_where(
            Condition::any()
                .add(Expr::col((connector_keys::Entity, connector_keys::Column::ExpiresAt)).is_null())
                .add(Expr::col((connector_keys::Entity, connector_keys::Column::ExpiresAt)).gt(unused_since)),
        )
        .to_owned();
        let deleted = oauth_clients::Entity::delete_many()
            .filter(oauth_clients::Column::CreatedAt.lt(unused_since))
            .filter(
                Condition::any()
                    .add(oauth_clients::Column::LastAuthorizedAt.is_null())
                    .add(oauth_clients::Column::LastAuthorizedAt.lt(unused_since)),
            )
            .filter(Expr::exists(codes).not())
            .filter(Expr::exists(keys).not())
            .exec(&self.db)
            .await
            .map_err(repository_error)?;
        Ok(deleted.rows_affected)
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
