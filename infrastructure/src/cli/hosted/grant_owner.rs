//! Who `svc credits grant` credits: an org or a user the deployment knows. A wallet is opened by
//! its first movement, so without these checks a mistyped id would be credited to a wallet no
//! one will ever own.

use std::sync::Arc;

use sea_orm::DatabaseConnection;
use svc_application::ports::RepositoryError;
use svc_application::ports::accounts::AccountRepository;
use svc_application::ports::agent::AppRepository;
use svc_application::ports::operator::{ConnectorKeyRepository, OrgRepository, WalletRepository};
use svc_domain::wallet::{Principal, PrincipalType};
use svc_sql::agent::SeaOrmAppRepository;
use svc_sql::hosted::SeaOrmAccountRepository;
use svc_sql::operator::{SeaOrmConnectorKeyRepository, SeaOrmOrgRepository, SeaOrmWalletRepository};

use crate::system::{RandomIds, SystemClock};

/// `principal` as the wallet owner to credit: a user named by an account's email becomes that
/// account's user id; an org must exist (`no org with id ...`); a user id must be an account's,
/// a key's owner, an app's id, or already hold a wallet (`no user with id ...`).
pub(super) async fn grant_owner(
    settings: &crate::settings::Settings,
    db: &DatabaseConnection,
    principal: &Principal,
) -> Result<Principal, String> {
    let id = &principal.principal_id;
    match principal.principal_type {
        PrincipalType::Org => {
            let org = SeaOrmOrgRepository::new(db.clone()).get(id).await.map_err(refused)?;
            org.map(|_| principal.clone())
                .ok_or_else(|| format!("cannot grant the credit: no org with id {id}"))
        }
        PrincipalType::User if id.contains('@') => account_of(settings, db, id).await,
        PrincipalType::User => {
            if known_user(db, principal).await.map_err(refused)? {
                Ok(principal.clone())
            } else {
                Err(format!("cannot grant the credit: no user with id {id}"))
            }
        }
    }
}

/// The account of `email`, as its user.
async fn account_of(
    settings: &crate::settings::Settings,
    db: &DatabaseConnection,
    email: &str,
) -> Result<Principal, String> {
    let accounts = crate::hosted::account_service(settings, db, Arc::new(SystemClock), Arc::new(RandomIds));
    let account = accounts
        .find_by_email(email)
        .await
        .map_err(|e| format!("cannot grant the credit: {e}"))?
        .ok_or_else(|| format!("cannot grant the credit: no account with email {email}"))?;
    Ok(Principal::user(account.user_id))
}

/// Whether any record names `user` as a user: an account, a key's owner, an app (a caller
/// without a user acts as its app), or a wallet it already has (a keys-file user who has used
/// the hosted plane).
async fn known_user(db: &DatabaseConnection, user: &Principal) -> Result<bool, RepositoryError> {
    let id = &user.principal_id;
    Ok(SeaOrmAccountRepository::new(db.clone()).find_by_id(id).await?.is_some()
        || !SeaOrmConnectorKeyRepository::new(db.clone())
            .list_by_owner(id)
            .await?
            .is_empty()
        || SeaOrmAppRepository::new(db.clone()).get(id).await?.is_some()
        || SeaOrmWalletRepository::new(db.clone()).get(user).await?.is_some())
}

fn refused(error: RepositoryError) -> String {
    format!("cannot grant the credit: {error}")
}
