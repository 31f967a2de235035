//! Embedding the server in another program (Document 2, Authentication: "A library-embedded
//! server with no key check configured defaults to the open mode and must be given a real key
//! check before exposure beyond the loopback interface").
//!
//! ```no_run
//! # async fn run() -> Result<(), Box<dyn std::error::Error>> {
//! use std::sync::Arc;
//! use svc::embed::{EmbeddedServer, StaticKeys};
//!
//! let server = EmbeddedServer::builder()
//!     .data_dir("/var/lib/my-app/svc")
//!     .host("0.0.0.0")
//!     .port(6781)
//!     // Without a key check the server runs in the open mode and binds only to loopback.
//!     .key_check(Arc::new(StaticKeys::new([("my-agent", "a long random secret")])))
//!     .build()
//!     .await?;
//! println!("MCP endpoint: {}/mcp", server.base_url);
//! server.run_until(std::future::pending()).await?;
//! # Ok(()) }
//! ```

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::Arc;

use sha2::{Digest, Sha256};
use svc_application::ports::RepositoryError;
use svc_application::ports::auth::{KeyOwner, KeyStore};

use crate::server::{Application, Embedding, StartError};
use crate::settings::{Settings, SettingsError};

/// The principal a [`StaticKeys`] key authenticates as (the local operator, like the keys file).
pub const EMBEDDED_OPERATOR: &str = crate::keys_file::LOCAL_OPERATOR;

/// Builds a server inside another program. Starts from `config/default.toml` (no file, no
/// environment, no flags); each method changes one setting.
pub struct EmbeddedServer {
    settings: Settings,
    key_check: Option<Arc<dyn KeyStore>>,
}

#[derive(Debug, thiserror::Error)]
pub enum EmbedError {
    #[error(transparent)]
    Settings(#[from] SettingsError),
    #[error(
        "an embedded server without a key check runs in the open mode (any bearer is accepted) and listens only on loopback; give it a key check to listen on {0}"
    )]
    OpenModeBeyondLoopback(String),
    #[error(transparent)]
    Start(#[from] StartError),
}

impl EmbeddedServer {
    pub fn builder() -> Self {
        // The host program's environment is its own: only the compiled-in defaults.
        Self::with_settings(Settings::load_from(None, std::iter::empty()).expect("the compiled-in defaults load"))
    }

    /// Starts from settings the program loaded itself (for example with [`Settings::load`]).
    pub fn with_settings(settings: Settings) -> Self {
        Self {
            settings,
            key_check: None,
        }
    }

    pub fn host(mut self, host: impl Into<String>) -> Self {
        self.settings.server.host = host.into();
        self
    }

    /// 0 picks a free port; read it back from [`Application::local_addr`].
    pub fn port(mut self, port: u16) -> Self {
        self.settings.server.port = port;
        self
    }

    pub fn data_dir(mut self, dir: impl Into<PathBuf>) -> Self {
        self.settings.server.data_dir = dir.into();
        self
    }

    /// `sqlite://...` or `postgres://...`; default SQLite in the data directory.
    pub fn database_url(mut self, url: impl Into<String>) -> Self {
        self.settings.server.database_url = url.into();
        self
    }

    pub fn public_base_url(mut self, url: impl Into<String>) -> Self {
        self.settings.server.public_base_url = url.into();
        self
    }

    /// The OAuth surface (Document 2: "the embedding option").
    pub fn oauth(mut self, enabled: bool) -> Self {
        self.settings.oauth.enabled = enabled;
        self
    }

    /// The MCP-Apps option (Document 2): on in the defaults; `enabled: false` turns it off. It
    /// needs the live channel (`live.enabled`), or `build` fails.
    pub fn mcp_apps(mut self, option: crate::settings::McpAppsSettings) -> Self {
        self.settings.mcp_apps = option;
        self
    }

    /// Any other setting.
    pub fn configure(mut self, change: impl FnOnce(&mut Settings)) -> Self {
        change(&mut self.settings);
        self
    }

    /// The bearer check of `/mcp` and `/ops`: with one the server is strict (only keys this
    /// check, the keys file or the connector keys know authenticate) and may listen anywhere.
    pub fn key_check(mut self, keys: Arc<dyn KeyStore>) -> Self {
        self.key_check = Some(keys);
        self
    }

    /// Binds the port and wires the server; run it with [`Application::run_until`].
    pub async fn build(mut self) -> Result<Application, EmbedError> {
        let open = self.key_check.is_none();
        if open && !crate::exposure::is_loopback(&self.settings.server.host) {
            return Err(EmbedError::OpenModeBeyondLoopback(self.settings.server.host.clone()));
        }
        self.settings.server.dev_allow_all = open;
        let embedding = Embedding {
            key_check: self.key_check,
        };
        Ok(Application::build_embedded(&self.settings, embedding).await?)
    }
}

/// A fixed set of bearer keys given by the embedding program, kept as SHA-256 digests.
pub struct StaticKeys {
    by_digest: HashMap<String, String>,
}

impl StaticKeys {
    /// `(name, secret)` pairs; the name is the key id the server logs and lists.
    pub fn new<N: Into<String>, S: AsRef<str>>(keys: impl IntoIterator<Item = (N, S)>) -> Self {
        let by_digest = keys
            .into_iter()
            .map(|(name, secret)| (hex::encode(Sha256::digest(secret.as_ref().as_bytes())), name.into()))
            .collect();
        Self { by_digest }
    }
}

#[async_trait::async_trait]
impl KeyStore for StaticKeys {
    async fn find(&self, bearer: &str) -> Result<Option<KeyOwner>, RepositoryError> {
        let digest = hex::encode(Sha256::digest(bearer.as_bytes()));
        Ok(self.by_digest.get(&digest).map(|name| KeyOwner {
            key_id: name.clone(),
            principal_id: EMBEDDED_OPERATOR.to_owned(),
            app_id: None,
        }))
    }

    /// The embedder's keys never change while the server runs.
    async fn is_live(&self, key_id: &str) -> Result<Option<bool>, RepositoryError> {
        Ok(self.by_digest.values().any(|name| name == key_id).then_some(true))
    }
}
