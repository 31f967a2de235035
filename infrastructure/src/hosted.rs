//! Wiring of hosted mode (`[hosted]`, `svc serve --hosted`): the checks it needs before start-up
//! (PostgreSQL, a master key), the settings it changes (OAuth on, renders kept indefinitely), and
//! the provider-key and credit services it adds.

use std::sync::Arc;

use base64::Engine;
use sea_orm::DatabaseConnection;
use svc_application::ports::{Clock, Ids};
use svc_application::services::accounts::{AccountLinks, AccountService, InviteSignup, ResetSignOut};
use svc_application::services::hosted::{
    AppPayers, CreditReservations, GenerationAccount, GenerationPricing, ProviderKeyService,
};
use svc_application::services::oauth::ExternalSignIn;
use svc_application::services::operator::{ConnectorKeyService, CreditService, InviteLinks};
use svc_domain::account::SignupMode;
use svc_domain::credit_reservation::RenderDeadline;
use svc_domain::provider_key::{Keyring, MasterKey};
use svc_domain::render_price::RenderPrice;
use svc_sql::SqlSharedWindows;
use svc_sql::hosted::{
    SeaOrmAccountRepository, SeaOrmAccountTokenRepository, SeaOrmExternalIdentities, SeaOrmPendingExternalSignIns,
};
use svc_sql::operator::{
    SeaOrmCreditReservationRepository, SeaOrmInviteLinkRepository, SeaOrmInviteRepository, SeaOrmMailOutbox,
    SeaOrmProviderKeyRepository, SeaOrmWalletRepository,
};

use crate::settings::Settings;

/// The sliding lifetime of a render without `ttlSeconds` in hosted mode: a century, which is
/// "indefinitely" for a card (Document 1: hosted deployments retain renders by default).
pub const HOSTED_RENDER_TTL_SECONDS: u64 = 100 * 365 * 24 * 3600;

/// The settings hosted mode implies: OAuth on and renders kept indefinitely.
pub fn effective(settings: &Settings) -> Settings {
    let mut s = settings.clone();
    if s.hosted.enabled {
        s.oauth.enabled = true;
    }
    s
}

/// Refuses a hosted start-up that cannot work, in one line naming the fix; with hosted mode off,
/// refuses `[hosted]` values that could never work (turning the mode on later must not be the
/// moment they fail), as every setting of a feature that is off is checked.
pub fn check(settings: &Settings) -> Result<(), String> {
    if settings.hosted.enabled {
        let url = settings.database_url();
        if !(url.starts_with("postgres://") || url.starts_with("postgresql://")) {
            return Err(
                "hosted mode needs PostgreSQL (SQLite and MariaDB are for self-hosting): set server.database_url (or --database-url) to postgres://user@host/db"
                    .into(),
            );
        }
    }
    // A master key is needed only in hosted mode; one written is checked either way.
    if settings.hosted.enabled || !settings.hosted.master_keys.secrets().is_empty() {
        keyring(settings)?;
    }
    price(settings)?;
    signup_mode(settings)?;
    oidc_settings(settings, "https://svc.invalid")?;
    if settings.hosted.free_credit_cents < 0 {
        return Err("hosted.free_credit_cents must be 0 or more".into());
    }
    Ok(())
}

/// The master keyring of `hosted.master_keys` (`id:base64-of-32-bytes`, the first seals).
pub fn keyring(settings: &Settings) -> Result<Keyring, String> {
    let entries = settings.hosted.master_keys.secrets();
    if entries.is_empty() {
        return Err(
            "hosted mode needs a master key for provider keys: set hosted.master_keys = [\"k1:<openssl rand -base64 32>\"] (SVC_HOSTED__MASTER_KEYS)"
                .into(),
        );
    }
    let mut keys = Vec::with_capacity(entries.len());
    for (index, entry) in entries.iter().enumerate() {
        let (id, material) = entry
            .split_once(':')
            .ok_or_else(|| format!("hosted.master_keys[{index}] must be written id:base64-of-32-bytes"))?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(material.trim())
            .ok()
            .and_then(|b| <[u8; 32]>::try_from(b).ok())
            .ok_or_else(|| format!("hosted.master_keys[{index}] (`{id}`): the key must be 32 bytes in base64"))?;
        if id.trim().is_empty() {
            return Err(format!("hosted.master_keys[{index}] needs an id before the colon"));
        }
        keys.push(MasterKey::new(id.trim(), bytes));
    }
    Keyring::new(keys).ok_or_else(|| "hosted.master_keys: two keys share an id".into())
}

fn price(settings: &Settings) -> Result<RenderPrice, String> {
    let h = &settings.hosted;
    RenderPrice::new(h.render_price_cents, h.model_price_cents.clone()).map_err(|e| format!("hosted: {e}"))
}

/// The hosted services over the database.
pub struct HostedPlane {
    pub provider_keys: ProviderKeyService,
    /// Who pays for a generation (an org app's: the org), for renders and operator generations.
    pub app_payers: AppPayers,
    pub credits: Arc<CreditService>,
    pub account: GenerationAccount,
    /// Accounts, rate limited in the database and mailing their links through the outbox.
    pub accounts: AccountService,
    /// Where invite mails' one-time links point (`/account/invite`) and are kept.
    pub invite_links: InviteLinks,
    /// Accepting an invite through its link, creating or signing in to the account.
    pub invite_signup: InviteSignup,
    /// Sign-in with the external OpenID Connect provider of `[hosted.oidc]`, when configured.
    pub external: Option<ExternalSignIn>,
}

/// svc's callback at the provider.
pub const OIDC_CALLBACK_PATH: &str = "/oauth/oidc/callback";

/// `[hosted.oidc]` as the provider adapter takes it; `None` while no issuer is set.
fn oidc_settings(settings: &Settings, base_url: &str) -> Result<Option<svc_oidc::OidcProviderSettings>, String> {
    let oidc = &settings.hosted.oidc;
    if oidc.issuer.trim().is_empty() {
        return Ok(None);
    }
    if oidc.client_id.trim().is_empty() {
        return Err(
            "hosted.oidc.issuer is set but hosted.oidc.client_id is empty: set svc's client id at the provider".into(),
        );
    }
    let secret = oidc.client_secret.trim().to_owned();
    if secret.is_empty() {
        return Err("hosted.oidc.issuer is set but hosted.oidc.client_secret is empty: set svc's client secret at the provider (SVC_HOSTED__OIDC__CLIENT_SECRET)".into());
    }
    let provider = svc_oidc::OidcProviderSettings {
        issuer: oidc.issuer.trim().to_owned(),
        client_id: oidc.client_id.trim().to_owned(),
        client_secret: secret,
        display_name: oidc.display_name.trim().to_owned(),
        redirect_uri: format!("{}{OIDC_CALLBACK_PATH}", base_url.trim_end_matches('/')),
    };
    // The URLs are checked now, so a typo stops the start-up.
    svc_oidc::OidcProvider::new(provider.clone())?;
    Ok(Some(provider))
}

fn external_sign_in(
    settings: &Settings,
    db: &DatabaseConnection,
    base_url: &str,
) -> Result<Option<ExternalSignIn>, String> {
    let Some(provider) = oidc_settings(settings, base_url)? else {
        return Ok(None);
    };
    Ok(Some(ExternalSignIn {
        provider: Arc::new(svc_oidc::OidcProvider::new(provider)?),
        pending: Arc::new(SeaOrmPendingExternalSignIns::new(db.clone())),
    }))
}

pub fn credit_service(
    settings: &Settings,
    db: &DatabaseConnection,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
) -> CreditService {
    CreditService::new(Arc::new(SeaOrmWalletRepository::new(db.clone())), clock, ids)
        .with_free_credit(settings.hosted.free_credit_cents)
}

/// Model calls of a cold generation: the reply, and one repair round (`LlmGenerator`).
const GENERATION_ROUNDS: u64 = 2;
/// What no setting bounds: compiling and render-checking each round's reply (the CPU gate may
/// make them wait) and the render's own writes.
const CHECKING_ALLOWANCE_SECONDS: u64 = 60;

/// `hosted.render_deadline_seconds`, or when 0 the longest the generation settings let a render
/// run: its wait for a queue slot, then each round's model call with every retry (each attempt
/// cut at `attempt_timeout_seconds`, each wait at `max_retry_wait_seconds`), and the allowance for
/// checking. The render is held to it (ended and refunded past it), so it bounds the render even
/// where the settings do not.
pub fn render_deadline(settings: &Settings) -> RenderDeadline {
    let seconds = match settings.hosted.render_deadline_seconds {
        0 => {
            let g = &settings.generation;
            let attempts = u64::from(g.max_attempts.max(1));
            let one_call = attempts
                .saturating_mul(g.attempt_timeout_seconds)
                .saturating_add((attempts - 1).saturating_mul(g.max_retry_wait_seconds));
            g.max_wait_seconds
                .saturating_add(GENERATION_ROUNDS.saturating_mul(one_call))
                .saturating_add(CHECKING_ALLOWANCE_SECONDS)
        }
        set => set,
    };
    RenderDeadline::new(std::time::Duration::from_secs(seconds))
}

/// Reservations of render charges over the database, for renders held to [`render_deadline`].
pub fn credit_reservations(
    settings: &Settings,
    db: &DatabaseConnection,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
) -> CreditReservations {
    CreditReservations::new(
        Arc::new(SeaOrmCreditReservationRepository::new(db.clone())),
        clock,
        ids,
        render_deadline(settings),
    )
}

/// `hosted.signup` as a mode.
pub fn signup_mode(settings: &Settings) -> Result<SignupMode, String> {
    let raw = settings.hosted.signup.trim();
    SignupMode::parse(raw).ok_or_else(|| format!("hosted.signup must be closed, invite or open, not `{raw}`"))
}

/// Accounts over the database, with the deployment's sign-up mode (`closed` when unreadable:
/// start-up refuses that before any request).
pub fn account_service(
    settings: &Settings,
    db: &DatabaseConnection,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
) -> AccountService {
    AccountService::new(Arc::new(SeaOrmAccountRepository::new(db.clone())), clock, ids)
        .with_signup(signup_mode(settings).unwrap_or_default())
        .with_identities(Arc::new(SeaOrmExternalIdentities::new(db.clone())))
}

/// Account links (verification, password reset) through the database's mail outbox.
pub fn account_links(db: &DatabaseConnection, base_url: &str) -> AccountLinks {
    AccountLinks {
        tokens: Arc::new(SeaOrmAccountTokenRepository::new(db.clone())),
        mailer: Arc::new(SeaOrmMailOutbox::new(db.clone())),
        base_url: base_url.to_owned(),
    }
}

pub fn provider_key_service(
    settings: &Settings,
    db: &DatabaseConnection,
    clock: Arc<dyn Clock>,
    ids: Arc<dyn Ids>,
) -> Result<ProviderKeyService, String> {
    Ok(ProviderKeyService::new(
        Arc::new(SeaOrmProviderKeyRepository::new(db.clone())),
        keyring(settings)?,
        clock,
        ids,
    ))
}

/// `None` unless hosted mode is on.
pub fn plane(
    settings: &Settings,
    db: &DatabaseConnection,
    clock: &Arc<dyn Clock>,
    ids: &Arc<dyn Ids>,
    base_url: &str,
    connector_keys: &ConnectorKeyService,
) -> Result<Option<HostedPlane>, String> {
    if !settings.hosted.enabled {
        return Ok(None);
    }
    let provider_keys = provider_key_service(settings, db, clock.clone(), ids.clone())?;
    let credits = Arc::new(credit_service(settings, db, clock.clone(), ids.clone()));
    let pricing = GenerationPricing {
        price: price(settings)?,
        default_generator: settings.generation.default_generator.clone(),
    };
    let app_payers = AppPayers {
        settings: crate::per_app::app_settings(db),
        apps: Arc::new(svc_sql::agent::SeaOrmAppRepository::new(db.clone())),
    };
    let reservations = credit_reservations(settings, db, clock.clone(), ids.clone());
    let account = GenerationAccount::new(credits.clone(), reservations, provider_keys.clone(), pricing)
        .with_app_payers(app_payers.clone());
    let accounts = account_service(settings, db, clock.clone(), ids.clone())
        .limited_by(Arc::new(SqlSharedWindows::new(db.clone())))
        .mailing(account_links(db, base_url))
        .signing_out_on_reset(ResetSignOut {
            keys: connector_keys.clone(),
            console_sessions: Arc::new(svc_sql::SqlConsoleSessions::new(db.clone())),
        });
    let links = Arc::new(SeaOrmInviteLinkRepository::new(db.clone()));
    let invite_signup = InviteSignup::new(
        accounts.clone(),
        Arc::new(SeaOrmInviteRepository::new(db.clone())),
        links.clone(),
    );
    Ok(Some(HostedPlane {
        provider_keys,
        app_payers,
        credits,
        account,
        accounts,
        invite_links: InviteLinks {
            links,
            base_url: base_url.to_owned(),
            accounts: Arc::new(SeaOrmAccountRepository::new(db.clone())),
        },
        invite_signup,
        external: external_sign_in(settings, db, base_url)?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hosted() -> Settings {
        let mut s = Settings::load(None).unwrap();
        s.hosted.enabled = true;
        s.server.database_url = "postgres://u@h/db".into();
        s.hosted.master_keys = crate::settings::SecretList::Many(vec![format!(
            "k1:{}",
            base64::engine::general_purpose::STANDARD.encode([7u8; 32])
        )]);
        s
    }

    #[test]
    fn hosted_mode_refuses_sqlite_and_a_missing_or_malformed_master_key_in_one_line() {
        assert_eq!(check(&hosted()), Ok(()));
        let mut sqlite = hosted();
        sqlite.server.database_url = String::new();
        let error = check(&sqlite).unwrap_err();
        assert!(
            error.contains("PostgreSQL") && error.contains("database_url"),
            "{error}"
        );
        assert!(!error.contains('\n'));
        let rows = [
            (vec![], "hosted.master_keys"),
            (vec!["nocolon".to_owned()], "id:base64"),
            (vec!["k1:c2hvcnQ=".to_owned()], "32 bytes"),
        ];
        for (keys, needle) in rows {
            let mut s = hosted();
            s.hosted.master_keys = crate::settings::SecretList::Many(keys);
            let error = check(&s).unwrap_err();
            assert!(error.contains(needle), "{error}");
        }
        let mut signup = hosted();
        signup.hosted.signup = "public".into();
        assert_eq!(
            check(&signup),
            Err("hosted.signup must be closed, invite or open, not `public`".into())
        );
        let mut negative = hosted();
        negative.hosted.render_price_cents = -1;
        assert!(check(&negative).unwrap_err().contains("0 or more"));
        let mut oidc = hosted();
        oidc.hosted.oidc.issuer = "https://id.example.org".into();
        assert!(check(&oidc).unwrap_err().contains("hosted.oidc.client_id"));
        oidc.hosted.oidc.client_id = "svc".into();
        assert!(check(&oidc).unwrap_err().contains("hosted.oidc.client_secret"));
        oidc.hosted.oidc.client_secret = "s3cret".into();
        assert_eq!(check(&oidc), Ok(()));
        assert!(!format!("{:?}", oidc.hosted.oidc).contains("s3cret"));
        oidc.hosted.oidc.issuer = "not a url".into();
        assert!(check(&oidc).unwrap_err().contains("hosted.oidc.issuer"));
        let mut off = hosted();
        off.hosted.enabled = false;
        off.server.database_url = String::new();
        assert_eq!(check(&off), Ok(()));
    }

    #[test]
    fn the_render_deadline_is_the_setting_else_what_the_generation_settings_allow() {
        let mut s = hosted();
        assert_eq!(
            render_deadline(&s).get().as_secs(),
            30 + 2 * (3 * 180 + 2 * 20) + 60,
            "the defaults: 30 s in the queue, two rounds of three 180 s attempts with two 20 s waits"
        );
        // (max_wait, attempt_timeout, max_attempts, max_retry_wait) -> derived seconds
        let rows = [
            ((0, 1, 1, 0), 2 + 60),
            ((5, 10, 0, 7), 5 + 2 * 10 + 60),
            (
                (u64::MAX, u64::MAX, u32::MAX, u64::MAX),
                RenderDeadline::LONGEST.as_secs(),
            ),
        ];
        for ((wait, attempt, attempts, retry_wait), expected) in rows {
            let g = &mut s.generation;
            (g.max_wait_seconds, g.attempt_timeout_seconds) = (wait, attempt);
            (g.max_attempts, g.max_retry_wait_seconds) = (attempts, retry_wait);
            assert_eq!(
                render_deadline(&s).get().as_secs(),
                expected,
                "{wait} {attempt} {attempts} {retry_wait}"
            );
        }
        s.hosted.render_deadline_seconds = 4;
        assert_eq!(
            render_deadline(&s).get().as_secs(),
            4,
            "a set deadline is taken as it is"
        );
    }

    #[test]
    fn hosted_mode_turns_oauth_on() {
        assert!(effective(&hosted()).oauth.enabled);
        let mut off = hosted();
        off.hosted.enabled = false;
        assert!(!effective(&off).oauth.enabled);
    }
}
