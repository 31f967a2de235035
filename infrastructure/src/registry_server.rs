//! Wiring of the artifact registry server (`svc registry serve`; docs/registry.md): its own
//! database and bundle directory, apart from the `svc serve` deployment.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use poem::EndpointExt;
use poem::listener::{Acceptor, Listener, TcpAcceptor, TcpListener};
use sea_orm::DatabaseConnection;
use svc_application::ports::registry::BundleStore;
use svc_application::services::cpu_gate::CpuGate;
use svc_application::services::registry::{RegistryPorts, RegistryService};
use svc_attest::registry_ports::{AttestEd25519Verifier, AttestSigstoreVerifier};
use svc_attest::sigstore::TrustedRoot;
use svc_registry::{FsBundleStore, RegistryState};
use svc_sql::registry::{
    EarlierReleaseBackfill, SeaOrmArtifactRepository, SeaOrmAuthorKeyRepository, SeaOrmRegistryTokenRepository,
};

use crate::bundle_inspection::IsolatedModuleInspector;
use crate::connections::{ConnectionLimits, Draining, NoDelay, Probes};
use crate::open_files::PatientAcceptor;
use crate::settings::{ConnectionSettings, RegistrySettings};
use crate::system::{RandomIds, SystemClock};

/// How long in-flight requests may finish after a shutdown signal.
const GRACE_PERIOD: Duration = Duration::from_secs(10);

/// `GET /health` answers on a connection past the cap; anything else is the registry's
/// `overloaded` error (docs/registry.md).
const PROBES: Probes = Probes {
    paths: &["/health"],
    refused: svc_registry::overloaded,
};

/// The registry service over the SQL repositories and the bundle directory of `settings`.
/// `bundles` parses long gadget bundles (`IsolatedModuleInspector`: `svc` itself).
pub fn registry_service(
    settings: &RegistrySettings,
    db: &DatabaseConnection,
    bundles: IsolatedModuleInspector,
) -> Result<RegistryService, String> {
    let root = if settings.sigstore_trusted_root.as_os_str().is_empty() {
        TrustedRoot::production()
    } else {
        let path = &settings.sigstore_trusted_root;
        let json = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        TrustedRoot::from_json(&json).map_err(|e| format!("{}: {e}", path.display()))?
    };
    Ok(RegistryService::new(RegistryPorts {
        artifacts: Arc::new(SeaOrmArtifactRepository::new(db.clone())),
        author_keys: Arc::new(SeaOrmAuthorKeyRepository::new(db.clone())),
        tokens: Arc::new(SeaOrmRegistryTokenRepository::new(db.clone())),
        bundles: Arc::new(FsBundleStore::new(settings.data_dir.join("bundles"))),
        ed25519: Arc::new(AttestEd25519Verifier),
        sigstore: Arc::new(AttestSigstoreVerifier::new(root, settings.accept_unverified_sigstore)),
        modules: Arc::new(bundles),
        compiler: Arc::new(svc_compiler::OxcCompiler::new()),
        render_check: Arc::new(svc_render_check::QuickJsRenderCheck::default()),
        // The registry has no `[limits]` of its own: one check per core at a time.
        cpu: CpuGate::new(0, Duration::ZERO),
        clock: Arc::new(SystemClock),
        ids: Arc::new(RandomIds),
    })
    .with_quota(settings.publish_quota()))
}

/// Connects to the registry's database (creating the data directory for SQLite), migrates it,
/// and completes any version a registry of an earlier release stored, but for its size: a
/// command (`svc registry token mint`, `yank`) may run where the bundles are not.
pub async fn connect(settings: &RegistrySettings) -> Result<DatabaseConnection, String> {
    connect_with_bundles(settings, None).await
}

/// [`connect`], sizing such versions from `bundles` too (`svc registry serve`). When none is left
/// to complete, that is one indexed probe (`svc_sql::registry::backfill_earlier_release_versions`).
async fn connect_with_bundles(
    settings: &RegistrySettings,
    bundles: Option<&FsBundleStore>,
) -> Result<DatabaseConnection, String> {
    if settings.database_url.is_empty() {
        std::fs::create_dir_all(&settings.data_dir)
            .map_err(|e| format!("cannot create {}: {e}", settings.data_dir.display()))?;
    }
    let db = svc_sql::connect_and_migrate(&settings.database_url())
        .await
        .map_err(|e| e.to_string())?;
    let bundles = bundles.map(|b| b as &dyn BundleStore);
    let done = svc_sql::registry::backfill_earlier_release_versions(&db, bundles)
        .await
        .map_err(|e| format!("cannot complete the versions an earlier release stored: {e:#}"))?;
    if done != EarlierReleaseBackfill::default() {
        tracing::info!(
            keyed = done.keyed,
            released = done.released,
            described = done.described,
            sized = done.sized,
            "versions published by an earlier release completed"
        );
    }
    Ok(db)
}

pub struct RegistryApplication {
    acceptor: TcpAcceptor,
    limits: ConnectionLimits,
    local_addr: SocketAddr,
    base_url: String,
    state: RegistryState,
    db: DatabaseConnection,
}

impl RegistryApplication {
    /// Binds the port (0 picks a free one) and prepares the routes. Connections are served under
    /// `[connections]` as `svc serve`'s are (header-read and idle timeouts, the cap).
    /// `bundles` parses long gadget bundles in a child process.
    pub async fn build(
        settings: &RegistrySettings,
        connections: &ConnectionSettings,
        bundles: IsolatedModuleInspector,
    ) -> Result<Self, String> {
        crate::settings::bounds::check_section(connections, "connections.")?;
        let limits = ConnectionLimits::for_this_process(connections);
        std::fs::create_dir_all(settings.data_dir.join("bundles"))
            .map_err(|e| format!("cannot create {}: {e}", settings.data_dir.display()))?;
        let bundle_store = FsBundleStore::new(settings.data_dir.join("bundles"));
        let db = connect_with_bundles(settings, Some(&bundle_store)).await?;
        let addr = format!("{}:{}", settings.host, settings.port);
        let acceptor = TcpListener::bind(addr.clone())
            .into_acceptor()
            .await
            .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
        let local_addr = acceptor
            .local_addr()
            .first()
            .and_then(|a| a.as_socket_addr().copied())
            .ok_or_else(|| format!("cannot listen on {addr}: no local address"))?;
        let base_url = if settings.public_base_url.is_empty() {
            // Bound to every interface, the address written into `bundleUrl` is this machine's
            // loopback, as `svc serve` writes its own (`0.0.0.0` reaches nothing from a client).
            let mut shown = local_addr;
            if shown.ip().is_unspecified() {
                shown.set_ip(match shown {
                    std::net::SocketAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
                    std::net::SocketAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
                });
            }
            format!("http://{shown}")
        } else {
            settings.public_base_url.trim_end_matches('/').to_owned()
        };
        let state = RegistryState {
            service: registry_service(settings, &db, bundles)?,
            public_base_url: base_url.clone(),
        };
        Ok(Self {
            acceptor,
            limits,
            local_addr,
            base_url,
            state,
            db,
        })
    }

    pub fn local_addr(&self) -> SocketAddr {
        self.local_addr
    }

    /// The origin of `bundleUrl`s.
    pub fn base_url(&self) -> &str {
        &self.base_url
    }

    /// Serves until `shutdown` resolves, then closes the database.
    pub async fn run_until(
        self,
        shutdown: impl std::future::Future<Output = ()> + Send + 'static,
    ) -> std::io::Result<()> {
        let endpoint = svc_registry::routes(self.state).with(poem::middleware::Tracing).boxed();
        let served = crate::connections::serve(
            PatientAcceptor::new(NoDelay::new(self.acceptor)),
            endpoint,
            self.limits,
            PROBES,
            shutdown,
            GRACE_PERIOD,
            Draining::default(),
        )
        .await;
        let _ = self.db.close().await;
        served
    }
}
