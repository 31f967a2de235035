//! The OAuth 2.1 surface a server offers when `[oauth] enabled`: its issuer, ports and options.

use std::sync::Arc;

use sea_orm::DatabaseConnection;
use svc_application::ports::agent::AppRepository;
use svc_application::ports::{Clock, Ids};
use svc_application::services::oauth::{
    ClientDocuments, ConsentChecks, KnownAppsResourceValidator, OAuthPorts, OAuthService,
};
use svc_http::{OAuth, OAuthOptions, ReqwestClientDocumentFetcher};
use svc_sql::oauth::{SeaOrmAuthorizationCodeRepository, SeaOrmOAuthClientRepository};

use super::StartError;
use crate::exposure::is_loopback;
use crate::settings::Settings;

/// The OAuth surface when `[oauth] enabled` (`--oauth`); the issuer defaults to the public base URL.
pub(super) fn oauth_surface(
    settings: &Settings,
    base_url: &str,
    db: &DatabaseConnection,
    checks: ConsentChecks,
    apps: Arc<dyn AppRepository>,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
) -> Result<Option<OAuth>, StartError> {
    let o = &settings.oauth;
    if !o.enabled {
        return Ok(None);
    }
    let issuer_url = if o.issuer.is_empty() { base_url } else { &o.issuer };
    let issuer =
        svc_domain::oauth::Issuer::parse(issuer_url).map_err(|e| StartError::Config(format!("oauth.issuer: {e}")))?;
    let lifetime = i64::try_from(o.code_lifetime_seconds)
        .ok()
        .filter(|s| *s > 0)
        .map(chrono::TimeDelta::seconds)
        .ok_or_else(|| StartError::Config("oauth.code_lifetime_seconds must be a positive number".into()))?;
    let ports = OAuthPorts {
        clients: Arc::new(SeaOrmOAuthClientRepository::new(db.clone())),
        codes: Arc::new(SeaOrmAuthorizationCodeRepository::new(db.clone())),
        resources: Arc::new(KnownAppsResourceValidator::new(apps.clone())),
        apps,
        clock,
        ids,
        // Dev mode reads documents served on loopback (`http://127.0.0.1/...`); strict mode
        // only public https hosts.
        client_documents: ClientDocuments::new(
            // Loopback documents only for a dev server that is itself on loopback (no SSRF from afar).
            Arc::new(ReqwestClientDocumentFetcher::new(
                settings.server.dev_allow_all && is_loopback(&settings.server.host),
            )),
            settings.server.dev_allow_all,
        ),
    };
    let options = OAuthOptions {
        consent_url: (!o.consent_url.is_empty()).then(|| o.consent_url.clone()),
        trust_proxy: o.trust_proxy,
    };
    let windows = Arc::new(svc_sql::SqlSharedWindows::new(db.clone()));
    OAuth::new(OAuthService::new(issuer, ports, checks, lifetime), options, windows)
        .map(Some)
        .map_err(StartError::Config)
}
