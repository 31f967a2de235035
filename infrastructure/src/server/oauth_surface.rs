//! The OAuth 2.1 surface a server offers when `[oauth] enabled`: its issuer, ports and options.

use std::sync::Arc;

use sea_orm::DatabaseConnection;
use svc_application::ports::agent::AppRepository;
use svc_application::ports::{Clock, Ids};
use svc_application::services::oauth::{
    ClientDocuments, ConsentChecks, KnownAppsResourceValidator, OAuthPorts, OAuthService,
};
use svc_domain::oauth::{CODE_LIFETIME_SECONDS, Issuer};
use svc_http::{OAuth, OAuthOptions, ReqwestClientDocumentFetcher};
use svc_sql::oauth::{SeaOrmAuthorizationCodeRepository, SeaOrmOAuthClientKeyRepository, SeaOrmOAuthClientRepository};

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
    // Checked with OAuth off too: a setting that cannot work is refused when written, not when
    // the surface is turned on later.
    let lifetime = code_lifetime(o.code_lifetime_seconds)?;
    let configured_issuer = (!o.issuer.is_empty())
        .then(|| parse_issuer(&o.issuer, "oauth.issuer"))
        .transpose()?;
    if !o.enabled {
        return Ok(None);
    }
    let issuer = match configured_issuer {
        Some(issuer) => issuer,
        None => parse_issuer(base_url, "oauth.issuer (empty: the public base URL)")?,
    };
    let ports = OAuthPorts {
        clients: Arc::new(SeaOrmOAuthClientRepository::new(db.clone())),
        codes: Arc::new(SeaOrmAuthorizationCodeRepository::new(db.clone())),
        client_keys: Arc::new(SeaOrmOAuthClientKeyRepository::new(db.clone())),
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

/// `oauth.code_lifetime_seconds`: 1 to Document 2's 5 minutes (tests shorten it; a longer-lived
/// code is a longer window for a stolen one).
fn code_lifetime(seconds: u64) -> Result<chrono::TimeDelta, StartError> {
    i64::try_from(seconds)
        .ok()
        .filter(|s| (1..=CODE_LIFETIME_SECONDS).contains(s))
        .map(chrono::TimeDelta::seconds)
        .ok_or_else(|| {
            StartError::Config(format!(
                "oauth.code_lifetime_seconds must be 1 to {CODE_LIFETIME_SECONDS} (Document 2: a code lives 5 minutes), not {seconds}"
            ))
        })
}

/// The issuer `raw` (read from `setting`), an origin without a path: discovery is served at
/// the root form only (`/.well-known/oauth-authorization-server`, not the RFC 8414 path-inserted
/// form an issuer with a path needs), so a client could not find such an issuer's metadata.
fn parse_issuer(raw: &str, setting: &str) -> Result<Issuer, StartError> {
    let issuer = Issuer::parse(raw).map_err(|e| StartError::Config(format!("{setting}: {e}")))?;
    if issuer.as_str() != issuer.origin() {
        return Err(StartError::Config(format!(
            "{setting} must be an origin without a path (discovery is served at the root only), got {raw:?}"
        )));
    }
    Ok(issuer)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn code_lifetimes_from_one_second_to_five_minutes_are_accepted() {
        let rows = [(0, false), (1, true), (300, true), (301, false), (u64::MAX, false)];
        for (seconds, accepted) in rows {
            let outcome = code_lifetime(seconds);
            assert_eq!(outcome.is_ok(), accepted, "{seconds}");
            if let Err(error) = outcome {
                assert!(error.to_string().contains("oauth.code_lifetime_seconds"), "{error}");
            }
        }
    }

    #[test]
    fn an_issuer_must_be_an_origin() {
        let rows = [
            ("https://mcp.example.com", Ok("https://mcp.example.com")),
            ("https://mcp.example.com/", Ok("https://mcp.example.com")),
            ("http://127.0.0.1:6781", Ok("http://127.0.0.1:6781")),
            ("http://[::1]:9/", Ok("http://[::1]:9")),
            ("https://mcp.example.com/base", Err("must be an origin without a path")),
            ("https://mcp.example.com/base/", Err("must be an origin without a path")),
            ("http://mcp.example.com", Err("must use https")),
        ];
        for (raw, expected) in rows {
            match (parse_issuer(raw, "oauth.issuer"), expected) {
                (Ok(issuer), Ok(canonical)) => assert_eq!(issuer.as_str(), canonical, "{raw}"),
                (Err(error), Err(part)) => {
                    let line = error.to_string();
                    assert!(line.contains("oauth.issuer") && line.contains(part), "{raw}: {line}");
                }
                (outcome, expected) => panic!("{raw}: {outcome:?}, wanted {expected:?}"),
            }
        }
    }
}
