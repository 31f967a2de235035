//! Wiring: settings in, a listening server out. The one place that picks adapters for ports.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use poem::listener::{Acceptor, Listener, TcpListener};
use sea_orm::DatabaseConnection;
use svc_application::ports::agent::{AppRepository, BlueprintRepository};
use svc_application::ports::auth::KeyStore;
use svc_application::ports::{Clock, Ids};
use svc_application::services::agent::{AgentPorts, AgentService, AgentSettings, GenerationLimit, GenerationQueue};
use svc_application::services::apps::AppService;
use svc_application::services::auth::{AuthMode, AuthService};
use svc_application::services::blueprints::BlueprintReadCache;
use svc_application::services::cpu_gate::CpuGate;
use svc_application::services::oauth::{AccountSignIn, ConsentChecks};
use svc_application::services::operator::{
    ConnectorKeyService, CouponService, OpsBlueprintPorts, OpsBlueprintService, OrgService,
};
use svc_application::services::pairing::{PAIR_CODE_DIGITS, PairingService};
use svc_application::services::rate_limit::WindowQuota;
use svc_application::services::tool_call_limit::{LimitedPer, ToolCallLimiter};
use svc_domain::themes::DEFAULT_THEME_ID;
use svc_http::{ExternalRuntime, McpApps};
use svc_http::{HostGuard, HttpState, LiveTokens, OpsConnectorKeys, OpsDomains, Pairing, PublicUrls};
use svc_sql::ClaimMode;
use svc_sql::agent::{
    SeaOrmAppRepository, SeaOrmBlueprintRepository, SeaOrmEventRepository, SeaOrmHandshakeRepository,
    SeaOrmSessionRepository,
};
use svc_sql::operator::{
    SeaOrmConnectorKeyRepository, SeaOrmCouponRepository, SeaOrmInviteRepository, SeaOrmMailOutbox, SeaOrmOrgRepository,
};

use crate::connections::{ConnectionLimits, Draining};
use crate::event_bus::{BusTasks, event_bus};
use crate::exposure::is_loopback;
use crate::keys_file::LOCAL_OPERATOR;
use crate::open_files::PatientAcceptor;
use crate::settings::Settings;
use crate::system::{RandomIds, SystemClock};

mod database;
mod hosted_quotas;
mod limits;
mod live_timings;
mod oauth_surface;
mod run;
mod tool_channels;
pub use database::pool_size;
use database::{SOLE_SERVER_PATIENCE, ServerReadiness, claim_database};
use limits::{connection_limits, generation_queue, public_demo_limit, tool_call_limit};
use oauth_surface::oauth_surface;
use tool_channels::tool_channels;

/// The MCP-Apps option of `[mcp_apps]` (Document 2): it needs the live channel, and an external
/// runtime bundle needs its integrity digest. `None`: off.
fn mcp_apps(settings: &Settings) -> Result<Option<McpApps>, StartError> {
    let m = &settings.mcp_apps;
    // Checked with the option off too: a half-set pair is refused when written, not when the
    // option is turned on later.
    let external_runtime = external_runtime(m)?;
    if !m.enabled {
        return Ok(None);
    }
    if !settings.live.enabled {
        return Err(StartError::Config(
            "mcp_apps.enabled needs the live channel: set live.enabled = true or mcp_apps.enabled = false".into(),
        ));
    }
    Ok(Some(McpApps { external_runtime }))
}

/// `mcp_apps.runtime_url` with its integrity digest, both or neither.
fn external_runtime(m: &crate::settings::McpAppsSettings) -> Result<Option<ExternalRuntime>, StartError> {
    Ok(match (m.runtime_url.trim(), m.runtime_integrity.trim()) {
        ("", "") => None,
        ("", _) => {
            return Err(StartError::Config(
                "mcp_apps.runtime_integrity is set without mcp_apps.runtime_url".into(),
            ));
        }
        (url, integrity) => {
            if !(url.starts_with("https://") || url.starts_with("http://")) {
                return Err(StartError::Config(format!(
                    "mcp_apps.runtime_url must be an http(s) URL, not `{url}`"
                )));
            }
            let digest = ["sha256-", "sha384-", "sha512-"]
                .iter()
                .any(|prefix| integrity.strip_prefix(prefix).is_some_and(|d| !d.is_empty()));
            if !digest {
                return Err(StartError::Config(
                    "mcp_apps.runtime_url needs mcp_apps.runtime_integrity, a Subresource Integrity digest (sha384-...)"
                        .into(),
                ));
            }
            Some(ExternalRuntime {
                url: url.to_owned(),
                integrity: integrity.to_owned(),
            })
        }
    })
}

/// The lifetime of a render without a `ttlSeconds`: hosted deployments keep renders
/// indefinitely (`sessions.default_ttl_seconds` applies to self-hosted servers only); a
/// self-hosted server's must be at least a second, and is checked on a hosted one too, as every
/// setting of a feature that is off is.
fn default_session_ttl(settings: &Settings) -> Result<u64, StartError> {
    let ttl = settings.sessions.default_ttl_seconds;
    if !svc_domain::session::is_usable_default_ttl(ttl) {
        return Err(StartError::Config(format!(
            "sessions.default_ttl_seconds must be at least 1, not {ttl}"
        )));
    }
    Ok(if settings.hosted.enabled {
        crate::hosted::HOSTED_RENDER_TTL_SECONDS
    } else {
        ttl
    })
}

/// The public URLs written into results: `mcp_apps.ws_url` overrides the live channel's.
fn public_urls(settings: &Settings, base_url: &str) -> Result<PublicUrls, StartError> {
    let mut urls = PublicUrls::from_base(base_url);
    let ws_url = settings.mcp_apps.ws_url.trim();
    if !ws_url.is_empty() {
        if !(ws_url.starts_with("wss://") || ws_url.starts_with("ws://")) {
            return Err(StartError::Config(format!(
                "mcp_apps.ws_url must be a ws:// or wss:// URL, not `{ws_url}`"
            )));
        }
        urls.ws = ws_url.to_owned();
    }
    Ok(urls)
}

/// What a program embedding the server adds to the settings (`crate::embed`).
#[derive(Default)]
pub struct Embedding {
    /// The embedder's own bearer check, consulted before the keys file and connector keys.
    pub key_check: Option<Arc<dyn KeyStore>>,
}

#[derive(Debug, thiserror::Error)]
pub enum StartError {
    /// The manifest, a manifest UI, the seed pool or the blueprint index.
    #[error("{0}")]
    Blueprints(String),
    #[error("cannot create data directory {path}: {reason}")]
    DataDir { path: String, reason: String },
    #[error(transparent)]
    Database(#[from] svc_sql::ConnectError),
    #[error("configuration: {0}")]
    Config(String),
    #[error("cannot listen on {addr}: {reason}")]
    Bind { addr: String, reason: String },
    #[error("configuration: {0}")]
    Secret(#[from] crate::secrets::SecretError),
}

/// A server bound to its port, ready to run.
pub struct Application {
    acceptor: PatientAcceptor<crate::connections::NoDelay<poem::listener::TcpAcceptor>>,
    endpoint: poem::endpoint::BoxEndpoint<'static>,
    limits: ConnectionLimits,
    draining: Draining,
    /// Upgraded `/ws` sockets: asked to close when the drain starts, awaited before the pool closes.
    live_sockets: svc_http::LiveSockets,
    held_requests: svc_http::HeldRequests,
    streamed_renders: svc_http::StreamedRenders,
    /// Hosted: the credits whose background refunds are written before the database closes.
    generation_account: Option<svc_application::services::hosted::GenerationAccount>,
    /// The PostgreSQL bus's listener holds a pooled connection: stopped before the pool closes.
    bus_tasks: Option<BusTasks>,
    session_watch: Option<svc_sql::SessionWatch>,
    /// Delivers the mail outbox (`mail.smtp_url`): stopped before the pool closes.
    mail_worker: Option<crate::mail::MailWorker>,
    /// Swept of expired rows while the server runs.
    console_sweep: svc_application::services::console::ConsoleSessions,
    /// The OAuth service whose expired codes are swept (when `[oauth] enabled`).
    code_sweep: Option<svc_application::services::oauth::OAuthService>,
    /// Hosted: accounts whose expired tokens are swept, and whose background work (reset
    /// requests answered before their lookup) is finished before the database closes.
    accounts: Option<svc_application::services::accounts::AccountService>,
    /// Sessions past their grace, and what a replay no longer serves, deleted while it runs.
    retention: crate::retention::SessionRetention,
    db: DatabaseConnection,
    /// This server's claim on its SQLite file, released once the database is closed.
    sole_server: Option<svc_sql::SoleServer>,
    /// Its claim on a PostgreSQL database (shared by replicas, or held alone); losing it stops
    /// the server.
    database_claim: Option<svc_sql::DatabaseClaim>,
    pub local_addr: SocketAddr,
    pub base_url: String,
    pub auth_mode: AuthMode,
    /// The 6-digit pair code, in strict mode.
    pub pair_code: Option<String>,
    /// The OAuth issuer, when OAuth is on.
    pub oauth_issuer: Option<String>,
    /// The local host page `/_svc/playground`, when it is served.
    pub playground_url: Option<String>,
}

/// The operator's playground page is served on a loopback listener (only this machine reaches
/// it) or in dev mode (the server is open anyway); never on a strict server facing a network.
fn playground_served(settings: &Settings, auth_mode: AuthMode) -> bool {
    is_loopback(&settings.server.host) || auth_mode == AuthMode::DevAllowAll
}

/// Coupons over the database: redeemed on `/ops` (failed redemptions counted per caller in
/// `rate_windows`, shared by every replica), issued by `svc coupons issue`.
pub fn coupon_service(db: &DatabaseConnection, clock: Arc<dyn Clock>, ids: Arc<dyn Ids>) -> CouponService {
    CouponService::new(
        Arc::new(SeaOrmCouponRepository::new(db.clone())),
        Arc::new(SeaOrmOrgRepository::new(db.clone())),
        Arc::new(svc_sql::SqlSharedWindows::new(db.clone())),
        clock,
        ids,
    )
}

/// The domains of `/ops` that `[ops]` wires.
fn ops_domains(
    settings: &Settings,
    db: &DatabaseConnection,
    apps: AppService,
    keys: ConnectorKeyService,
    blueprints: impl FnOnce() -> OpsBlueprintService,
    clock: &Arc<dyn Clock>,
    ids: &Arc<dyn Ids>,
) -> OpsDomains {
    let wired = &settings.ops;
    let orgs = || {
        OrgService::new(
            Arc::new(SeaOrmOrgRepository::new(db.clone())),
            Arc::new(SeaOrmInviteRepository::new(db.clone())),
            Arc::new(SeaOrmMailOutbox::new(db.clone())),
            clock.clone(),
            ids.clone(),
        )
    };
    OpsDomains {
        apps: wired.apps.then(|| apps.clone()),
        orgs: wired.orgs.then(orgs),
        connector_keys: wired.connector_keys.then(|| OpsConnectorKeys { keys, apps }),
        coupons: wired.coupons.then(|| coupon_service(db, clock.clone(), ids.clone())),
        blueprints: wired.blueprints.then(blueprints),
        // Hosted deployments only (Document 3): wired by `build` in hosted mode.
        provider_keys: None,
        credits: None,
    }
}

/// A fresh 6-digit pair code from OS randomness.
fn pair_code() -> String {
    use rand::Rng;
    let n: u32 = rand::rng().random_range(0..1_000_000);
    format!("{n:0width$}", width = PAIR_CODE_DIGITS)
}

/// The first secret signs wsTokens; every one verifies them.
fn live_tokens(mut secrets: Vec<Vec<u8>>) -> LiveTokens {
    let signing = secrets.remove(0);
    LiveTokens::rotating(signing, secrets)
}

impl Application {
    /// Creates the data directory, opens and migrates the database and binds the port (0 picks one).
    pub async fn build(settings: &Settings) -> Result<Self, StartError> {
        Self::build_embedded(settings, Embedding::default()).await
    }

    /// [`Application::build`] with what an embedding program adds (see `crate::embed`).
    pub async fn build_embedded(settings: &Settings, embedding: Embedding) -> Result<Self, StartError> {
        // Settings an embedder built in code have not been through the load's range check.
        crate::settings::bounds::check(settings).map_err(StartError::Config)?;
        // Values that could never work, on or off (hosted mode needs PostgreSQL and a master
        // key): refused before anything starts.
        crate::settings::forms::check(settings).map_err(StartError::Config)?;
        let settings = &crate::hosted::effective(settings);
        crate::exposure::check_dev_allow_all(settings).map_err(StartError::Config)?;
        // Refuse weak secrets before touching the database.
        crate::secrets::configured_ws_secrets(settings)?;
        // Settings read before anything is logged: a refusal is the one line on stderr (the
        // public demo's check comes last, as it logs the limit it sets).
        let mcp_apps = mcp_apps(settings)?;
        let tool_call_limit = tool_call_limit(settings, Arc::new(SystemClock))?;
        let default_session_ttl_seconds = default_session_ttl(settings)?;
        let limits = connection_limits(settings);
        let generation_limit = public_demo_limit(settings)?;
        let data_dir = &settings.server.data_dir;
        crate::private_files::create_private_dir(data_dir).map_err(|e| StartError::DataDir {
            path: data_dir.display().to_string(),
            reason: e.to_string(),
        })?;
        let probe = data_dir.join(".write-probe");
        std::fs::write(&probe, b"ok").map_err(|e| StartError::DataDir {
            path: data_dir.display().to_string(),
            reason: e.to_string(),
        })?;
        std::fs::remove_file(&probe).ok();

        let manifest = crate::blueprints::load_manifest(&settings.blueprints).map_err(StartError::Blueprints)?;
        // The read caches below are right only while this server alone writes a SQLite file.
        let sole_server = svc_sql::SoleServer::claim(&settings.database_url(), SOLE_SERVER_PATIENCE).await?;
        let db = if settings.server.database_sole_server {
            svc_sql::connect_sole(&settings.database_url(), pool_size(settings)).await?
        } else {
            svc_sql::connect(&settings.database_url(), pool_size(settings)).await?
        };
        // Claimed before migrating: a server refused beside a sole server must not have changed
        // its schema or rows first.
        let database_claim = claim_database(settings, &db).await?;
        let applied = svc_sql::migrate(&db, &settings.database_url()).await?;
        if applied > 0 {
            tracing::info!(applied, "database migrated");
        }
        let ws_secrets = crate::secrets::ws_signing_secrets(settings, &db).await?;

        let draining = Draining::default();
        let live_sockets = svc_http::LiveSockets::default();
        let held_requests = svc_http::HeldRequests::default();
        let streamed_renders = svc_http::StreamedRenders::default();
        let addr = crate::exposure::listen_address(&settings.server.host, settings.server.port);
        let acceptor = TcpListener::bind(addr.clone())
            .into_acceptor()
            .await
            .map_err(|e| StartError::Bind {
                addr: addr.clone(),
                reason: e.to_string(),
            })?;
        let local_addr = acceptor
            .local_addr()
            .first()
            .and_then(|a| a.as_socket_addr().copied())
            .ok_or_else(|| StartError::Bind {
                addr: addr.clone(),
                reason: "no local address".into(),
            })?;
        let base_url = settings.public_base_url(local_addr.port());

        let clock: Arc<dyn Clock> = Arc::new(SystemClock);
        let clock_for_mail = clock.clone();
        let ids: Arc<dyn Ids> = Arc::new(RandomIds);
        let apps: Arc<dyn AppRepository> = Arc::new(SeaOrmAppRepository::new(db.clone()));
        let compiler: Arc<dyn svc_application::ports::generation::Compiler> =
            Arc::new(svc_compiler::OxcCompiler::new());
        let cpu = CpuGate::new(
            settings.limits.cpu_heavy_concurrency,
            Duration::from_millis(settings.limits.cpu_heavy_wait_ms),
        );
        let generators = crate::generation::generators(&settings.generation, compiler.clone(), cpu.clone())
            .map_err(StartError::Config)?;
        let (bus, bus_tasks) = event_bus(settings, &db, clock.clone(), ids.as_ref()).await?;
        // One group-commit writer on SQLite for the warm path's writes (handshakes, sessions,
        // gestures, deliveries): concurrent requests share a commit and its fsync.
        let writer = svc_sql::Writer::for_database_reporting(&db, Arc::new(svc_http::PrometheusTelemetry));
        // Where this process alone writes (the writer's SQLite file, a PostgreSQL database it
        // claimed alone), the read paths' rows are also kept in memory; the repositories forget
        // a session after each write of it.
        let sole_writer = writer.is_some() || database_claim.as_ref().is_some_and(|c| c.mode() == ClaimMode::Sole);
        let reads = sole_writer.then(svc_sql::ReadCache::new);
        // PostgreSQL replicas keep session rows too, each read waiting for the announcements of
        // other replicas' writes to be heard first (`svc_sql::SessionWatch`).
        let (session_reads, session_watch) = match &reads {
            Some(reads) => (Some(reads.clone()), None),
            None => svc_sql::SessionWatch::start_for(&db, &settings.database_url())
                .map_or((None, None), |(kept, watch)| (Some(kept), Some(watch))),
        };
        // PostgreSQL: the read paths' single-row reads skip the pool's ping on return.
        let lane = svc_sql::ReadLane::for_database(&db);
        let stored_blueprints: Arc<dyn BlueprintRepository> =
            Arc::new(SeaOrmBlueprintRepository::new(db.clone()).with_read_lane(lane.clone()));
        // Replicas on a shared database keep blueprint reads only when a bus carries each
        // other's changes (PostgreSQL or NATS); otherwise they read through.
        let replicas_hear_each_other = bus_tasks.is_some();
        let blueprints: Arc<dyn BlueprintRepository> = match (&reads, &database_claim) {
            (Some(reads), claim) => {
                let kept = Arc::new(BlueprintReadCache::new(stored_blueprints));
                if let Some(claim) = claim {
                    let (retaken_reads, retaken_kept) = (reads.clone(), kept.clone());
                    claim.when_retaken(move || {
                        retaken_reads.forget_everything();
                        retaken_kept.forget_all();
                    });
                    // Until the server has stopped, another server may write: read through.
                    let (lost_reads, lost_kept) = (reads.clone(), kept.clone());
                    claim.when_lost(move || {
                        lost_reads.stop_keeping();
                        lost_kept.stop_keeping();
                    });
                }
                kept
            }
            (None, _) if replicas_hear_each_other => {
                BlueprintReadCache::shared_by_replicas(stored_blueprints, bus.clone())
            }
            (None, _) => stored_blueprints,
        };
        let retention = crate::retention::SessionRetention::over(
            settings,
            &db,
            writer.clone(),
            session_reads.clone(),
            clock.clone(),
        );
        let ports = AgentPorts {
            clock: clock.clone(),
            ids: ids.clone(),
            apps: apps.clone(),
            handshakes: Arc::new(
                SeaOrmHandshakeRepository::new(db.clone())
                    .with_writer(writer.clone())
                    .keeping_pending(reads.is_some()),
            ),
            sessions: Arc::new(
                SeaOrmSessionRepository::new(db.clone())
                    .with_writer(writer.clone())
                    .with_read_cache(session_reads.clone())
                    .with_read_lane(lane.clone())
                    .with_parse_gate(Some(cpu.clone())),
            ),
            events: Arc::new(
                SeaOrmEventRepository::new(db.clone())
                    .with_writer(writer)
                    .with_read_cache(session_reads)
                    .with_read_lane(lane.clone())
                    .with_parse_gate(Some(cpu.clone())),
            ),
            blueprints,
            bus,
            generator: Arc::new(generators.catalog),
            compiler,
        };
        let catalog = crate::blueprints::wire(
            &settings.blueprints,
            manifest.as_ref(),
            ports.blueprints.clone(),
            clock.clone(),
            ports.compiler.as_ref(),
        )
        .await
        .map_err(StartError::Blueprints)?;
        let connector_keys = ConnectorKeyService::new(
            Arc::new(SeaOrmConnectorKeyRepository::new(db.clone())),
            clock.clone(),
            ids.clone(),
        )
        .announcing_revocations_on(ports.bus.clone());
        // As with blueprints: keys are kept only where every revocation is heard (this process
        // writes alone, or the replicas' bus carries each other's).
        let connector_keys = if sole_writer || replicas_hear_each_other {
            connector_keys
        } else {
            connector_keys.reading_every_key()
        };
        let connector_keys = hosted_quotas::connector_keys(settings, connector_keys);
        let hosted = crate::hosted::plane(settings, &db, &clock, &ids, &base_url, &connector_keys)
            .map_err(StartError::Config)?;
        let agent_settings = AgentSettings {
            default_session_ttl_seconds,
            model_registry: generators.registry.routes(),
            available_theme_ids: manifest
                .as_ref()
                .map(|m| m.available_theme_ids.clone())
                .unwrap_or_default(),
            default_theme_id: manifest
                .as_ref()
                .map_or(DEFAULT_THEME_ID.to_owned(), |m| m.default_theme_id.clone()),
            replay_buffer: settings.live.replay_buffer,
        };
        let queue = generation_queue(settings);
        let auth_mode = if settings.server.dev_allow_all {
            AuthMode::DevAllowAll
        } else {
            AuthMode::Strict
        };
        let hosted_keys = hosted.as_ref().map(|h| (h.provider_keys.clone(), h.app_payers.clone()));
        let ops_blueprints = || {
            let service = OpsBlueprintService::new(OpsBlueprintPorts {
                catalog: catalog.clone(),
                repository: ports.blueprints.clone(),
                generator: ports.generator.clone(),
                queue: queue.clone(),
                compiler: ports.compiler.clone(),
                cpu: cpu.clone(),
                clock: clock.clone(),
                ids: ids.clone(),
            });
            match hosted_keys {
                Some((keys, payers)) => service.with_provider_keys(keys).with_app_payers(payers),
                None => service,
            }
        };
        let ops = ops_domains(
            settings,
            &db,
            AppService::new(apps.clone(), clock.clone(), ids.clone()),
            connector_keys.clone(),
            ops_blueprints,
            &clock,
            &ids,
        );
        // Provider keys and credits: hosted only, absent from a self-hosted tools/list.
        let ops = OpsDomains {
            provider_keys: hosted.as_ref().map(|h| h.provider_keys.clone()),
            credits: hosted.as_ref().map(|h| h.credits.clone()),
            // Hosted: invite mails carry the one-time link that can create the account.
            orgs: match &hosted {
                Some(h) => ops
                    .orgs
                    .map(|orgs| hosted_quotas::orgs(settings, &db, orgs.linking(h.invite_links.clone()))),
                None => ops.orgs,
            },
            ..ops
        };
        let mut key_stores: Vec<Arc<dyn KeyStore>> = embedding.key_check.into_iter().collect();
        let keys_file = crate::keys_file_watch::WatchedKeysFile::open(data_dir)
            .map_err(|e| StartError::Config(format!("keys file: {e}")))?;
        key_stores.push(Arc::new(keys_file));
        key_stores.push(Arc::new(connector_keys.clone()));
        let pairing = (auth_mode == AuthMode::Strict).then(|| {
            Pairing::new(
                PairingService::new(
                    Arc::new(svc_sql::SqlPairCodes::new(db.clone())),
                    LOCAL_OPERATOR.to_owned(),
                    connector_keys.clone(),
                    clock.clone(),
                    Arc::new(pair_code),
                    Arc::new(crate::banner::announce_pair_code),
                ),
                Arc::new(svc_sql::SqlSharedWindows::new(db.clone())),
                clock.clone(),
                settings.oauth.trust_proxy,
            )
        });
        let pair_code = match &pairing {
            Some(p) => Some(
                p.service
                    .code()
                    .await
                    .map_err(|e| StartError::Config(format!("pair code: {e:#}")))?,
            ),
            None => None,
        };
        let auth = AuthService::new(auth_mode, key_stores, apps.clone(), clock.clone(), ids.clone())
            .with_federation(crate::per_app::federation(settings, &db));
        let oauth_checks = ConsentChecks {
            auth: auth.clone(),
            pairing: pairing.as_ref().map(|p| p.service.clone()),
            keys: connector_keys,
            accounts: hosted.as_ref().map(|h| AccountSignIn {
                accounts: h.accounts.clone(),
                credits: Some(h.credits.clone()),
            }),
            external: hosted.as_ref().and_then(|h| h.external.clone()),
        };
        let mut console = svc_application::services::console::ConsoleSessions::new(
            Arc::new(svc_sql::SqlConsoleSessions::new(db.clone())),
            auth.clone(),
            clock.clone(),
            ids.clone(),
        );
        if let Some(h) = &hosted {
            console = console.with_accounts(AccountSignIn {
                accounts: h.accounts.clone(),
                credits: Some(h.credits.clone()),
            });
        }
        let console = hosted_quotas::console_sessions(settings, console);
        let console_sweep = console.clone();
        let hosted_apps = settings
            .hosted
            .enabled
            .then(|| crate::per_app::app_settings_service(&db, apps.clone(), clock.clone()));
        let oauth = oauth_surface(settings, &base_url, &db, oauth_checks, apps, clock, ids)?;
        let oauth_issuer = oauth.as_ref().map(|o| o.issuer().to_owned());
        let code_sweep = oauth.as_ref().map(|o| o.service().clone());
        let readiness = Arc::new(ServerReadiness {
            db: db.clone(),
            draining: draining.clone(),
            catalog: catalog.clone(),
        });
        let mut agent = AgentService::new(ports, agent_settings, queue)
            .with_cpu_gate(cpu.clone())
            .with_catalog(catalog)
            .with_declared_gadgets(manifest.map(|m| m.gadgets).unwrap_or_default())
            .with_telemetry(Arc::new(svc_http::PrometheusTelemetry))
            .with_long_polls_per_caller(settings.limits.long_polls_per_caller);
        if let Some(limit) = generation_limit {
            agent = agent.with_generation_limit(limit);
        }
        if let Some(plane) = &hosted {
            agent = agent.with_generation_account(plane.account.clone());
        }
        agent = agent.with_app_render_limit(crate::per_app::render_limit(&db));
        let tool_channels = tool_channels(settings, &agent, cpu)?;
        let state = HttpState {
            agent,
            auth,
            tokens: live_tokens(ws_secrets),
            readiness,
            pairing,
            urls: public_urls(settings, &base_url)?,
            ops,
            oauth,
            tool_channels,
            in_flight: Default::default(),
            parsed_json: svc_http::ParsedJsonBudget::of_mib(settings.connections.parsed_json_mib_in_flight),
            generations_trust_proxy: settings.public_demo.trust_proxy,
            polling_flood_gates: Default::default(),
            mcp_apps,
            live_enabled: settings.live.enabled,
            live_sockets: live_sockets.clone(),
            live_timings: live_timings::from_settings(settings),
            held_requests: held_requests.clone(),
            streamed_renders: streamed_renders.clone(),
            tool_call_limit,
            hosted_apps,
            accounts: hosted.as_ref().map(|h| svc_http::AccountPages {
                accounts: h.accounts.clone(),
                invites: h.invite_signup.clone(),
                trust_proxy: settings.oauth.trust_proxy,
            }),
            pool_usage: Some(Arc::new(svc_sql::SqlxPoolUsage::new(db.clone()).with_read_lane(lane))),
            console: Some(console),
            playground: playground_served(settings, auth_mode),
            module_linker: Arc::new(svc_compiler::OxcModuleInspector),
        };
        let playground_url = state.playground_url();
        let bound_to_loopback = is_loopback(&settings.server.host);
        if !bound_to_loopback && !settings.server.allowed_hosts.is_empty() {
            tracing::warn!(
                host = %settings.server.host,
                "server.allowed_hosts is checked only when the server is bound to loopback; bound to this address it accepts every Host (filter at the proxy)"
            );
        }
        let guard = HostGuard::new(bound_to_loopback, crate::exposure::allowed_hosts(settings, &base_url));
        let endpoint = poem::EndpointExt::boxed(svc_http::routes(state, guard));
        let mail_worker = crate::mail::start(settings, &db, clock_for_mail).map_err(StartError::Config)?;
        Ok(Self {
            acceptor: PatientAcceptor::new(crate::connections::NoDelay::new(acceptor)),
            endpoint,
            limits,
            draining,
            live_sockets,
            held_requests,
            streamed_renders,
            generation_account: hosted.as_ref().map(|h| h.account.clone()),
            bus_tasks,
            session_watch,
            mail_worker,
            console_sweep,
            code_sweep,
            accounts: hosted.as_ref().map(|h| h.accounts.clone()),
            retention,
            db,
            sole_server,
            database_claim,
            local_addr,
            base_url,
            auth_mode,
            pair_code,
            oauth_issuer,
            playground_url,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A default lifetime of nothing stops start-up on a hosted server too, which does not use
    /// it: turning hosting off later must not be the moment it fails.
    #[test]
    fn a_default_session_ttl_of_nothing_is_refused_hosted_or_not() {
        let mut settings = Settings::load_from(None, Vec::new()).unwrap();
        for hosted in [false, true] {
            settings.hosted.enabled = hosted;
            settings.sessions.default_ttl_seconds = 0;
            let refused = default_session_ttl(&settings).unwrap_err().to_string();
            assert!(
                refused.contains("sessions.default_ttl_seconds must be at least 1, not 0"),
                "hosted {hosted}: {refused}"
            );
            settings.sessions.default_ttl_seconds = 60;
            let expected = if hosted {
                crate::hosted::HOSTED_RENDER_TTL_SECONDS
            } else {
                60
            };
            assert_eq!(default_session_ttl(&settings).unwrap(), expected, "hosted {hosted}");
        }
    }
}
