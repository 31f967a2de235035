//! Wiring of the blueprint catalog: settings (`[blueprints]`), the embedder they choose, the
//! manifest, the pool seeded at start-up, the index rebuilt from the database and its refresh.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;

use serde::Deserialize;
use svc_application::ports::Clock;
use svc_application::ports::blueprints::{BlueprintRepository, Embedder};
use svc_application::ports::generation::Compiler;
use svc_application::services::blueprints::{
    BUILTIN_SEARCH_FLOOR, BUILTIN_SEMANTIC_THRESHOLD, BlueprintCatalog, CatalogSettings, PoolFile,
};
use svc_embedding::{BuiltinEmbedder, OpenAiEmbedder, OpenAiEmbedderOptions};

use crate::manifest::{self, Manifest};

/// `[blueprints]` of the configuration (documented in config/default.toml).
#[derive(Clone, Deserialize, serde::Serialize, schemars::JsonSchema)]
#[serde(default)]
pub struct BlueprintSettings {
    /// `svc.json`; empty: `./svc.json` when it exists.
    pub manifest: String,
    /// A pool file to import at start-up; empty: none.
    pub seed_pool: String,
    /// `builtin` or `openai`.
    pub embedder: String,
    pub embedding_url: String,
    pub embedding_model: String,
    pub embedding_api_key: String,
    #[schemars(range(min = 1, max = 86_400))]
    pub embedding_timeout_seconds: u64,
    /// 0: the built-in embedder's threshold.
    pub semantic_threshold: f64,
    /// 0: the built-in embedder's floor.
    pub search_floor: f64,
    /// How often the index reads other replicas' writes; 0 turns the refresh off.
    pub index_refresh_seconds: u64,
}

impl Default for BlueprintSettings {
    fn default() -> Self {
        Self {
            manifest: String::new(),
            seed_pool: String::new(),
            embedder: "builtin".into(),
            embedding_url: "https://api.openai.com/v1".into(),
            embedding_model: "text-embedding-3-small".into(),
            embedding_api_key: String::new(),
            embedding_timeout_seconds: 30,
            semantic_threshold: 0.0,
            search_floor: 0.0,
            index_refresh_seconds: 10,
        }
    }
}

/// Everything but the API key.
impl std::fmt::Debug for BlueprintSettings {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("BlueprintSettings")
            .field("manifest", &self.manifest)
            .field("seed_pool", &self.seed_pool)
            .field("embedder", &self.embedder)
            .field("embedding_url", &self.embedding_url)
            .field("embedding_model", &self.embedding_model)
            .field("semantic_threshold", &self.semantic_threshold)
            .field("search_floor", &self.search_floor)
            .field("index_refresh_seconds", &self.index_refresh_seconds)
            .finish_non_exhaustive()
    }
}

/// The embedder `[blueprints] embedder` names.
pub fn embedder(settings: &BlueprintSettings) -> Result<Arc<dyn Embedder>, String> {
    match settings.embedder.as_str() {
        "builtin" => Ok(Arc::new(BuiltinEmbedder::new())),
        "openai" => {
            let api_key = if settings.embedding_api_key.is_empty() {
                std::env::var("OPENAI_API_KEY").unwrap_or_default()
            } else {
                settings.embedding_api_key.clone()
            };
            OpenAiEmbedder::new(OpenAiEmbedderOptions {
                base_url: settings.embedding_url.clone(),
                model: settings.embedding_model.clone(),
                api_key,
                timeout: Duration::from_secs(settings.embedding_timeout_seconds),
            })
            .map(|e| Arc::new(e) as Arc<dyn Embedder>)
            .map_err(|e| e.to_string())
        }
        other => Err(format!("blueprints.embedder must be builtin or openai, not `{other}`")),
    }
}

/// The catalog over `repo` with the configured embedder (not yet indexed).
pub fn catalog(
    settings: &BlueprintSettings,
    repo: Arc<dyn BlueprintRepository>,
    clock: Arc<dyn Clock>,
) -> Result<BlueprintCatalog, String> {
    let or = |v: f64, default: f64| if v > 0.0 { v } else { default };
    let catalog_settings = CatalogSettings {
        semantic_threshold: or(settings.semantic_threshold, BUILTIN_SEMANTIC_THRESHOLD),
        search_floor: or(settings.search_floor, BUILTIN_SEARCH_FLOOR),
    };
    Ok(BlueprintCatalog::new(
        repo,
        embedder(settings)?,
        clock,
        catalog_settings,
    ))
}

/// The manifest the settings point at, loaded and checked; `None` without one.
pub fn load_manifest(settings: &BlueprintSettings) -> Result<Option<Manifest>, String> {
    let explicit = (!settings.manifest.is_empty()).then(|| PathBuf::from(&settings.manifest));
    let Some(file) = manifest::locate(explicit.as_deref()).map_err(|e| e.to_string())? else {
        return Ok(None);
    };
    manifest::load(&file).map(Some).map_err(|e| e.to_string())
}

/// Start-up work of the catalog: registers the manifest's UIs, imports the seed pool, starts
/// building the index in the background and then its refresh.
pub async fn start(
    catalog: &BlueprintCatalog,
    settings: &BlueprintSettings,
    manifest: Option<&Manifest>,
    compiler: &dyn Compiler,
) -> Result<(), String> {
    if let Some(m) = manifest
        && let Some(uis) = &m.uis
    {
        let count = catalog
            .register_manifest(uis.clone(), compiler)
            .await
            .map_err(|e| format!("{}: blueprints: {e}", m.file.display()))?;
        tracing::info!(manifest = %m.file.display(), count, "manifest UIs compiled");
    }
    if !settings.seed_pool.is_empty() {
        let pool = read_pool(Path::new(&settings.seed_pool))?;
        let report = catalog
            .import_pool(pool)
            .await
            .map_err(|e| format!("--seed-pool {}: {e}", settings.seed_pool))?;
        tracing::info!(imported = report.imported, kept = report.kept, "seed pool imported");
    }
    // Built in the background: /healthz answers at once, /readyz reports the build.
    let refresh = (settings.index_refresh_seconds > 0).then(|| Duration::from_secs(settings.index_refresh_seconds));
    catalog.spawn_build(refresh);
    Ok(())
}

pub fn read_pool(path: &Path) -> Result<PoolFile, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    serde_json::from_str(&text).map_err(|e| format!("{}: not a pool file: {e}", path.display()))
}

/// Writes every cached blueprint of the deployment to `out`; returns how many.
pub async fn export_pool(catalog: &BlueprintCatalog, out: &Path) -> Result<usize, String> {
    let pool = catalog.export_pool().await.map_err(|e| e.to_string())?;
    let count = pool.blueprints.len();
    let text = serde_json::to_string_pretty(&pool).map_err(|e| e.to_string())?;
    std::fs::write(out, text + "\n").map_err(|e| format!("cannot write {}: {e}", out.display()))?;
    Ok(count)
}

/// The catalog the server wires: built over `repo`, manifest UIs registered, seed pool imported,
/// index building in the background, then refreshing.
pub async fn wire(
    settings: &BlueprintSettings,
    manifest: Option<&Manifest>,
    repo: Arc<dyn BlueprintRepository>,
    clock: Arc<dyn Clock>,
    compiler: &dyn Compiler,
) -> Result<BlueprintCatalog, String> {
    let catalog = catalog(settings, repo, clock)?;
    start(&catalog, settings, manifest, compiler).await?;
    Ok(catalog)
}

/// `svc export-pool`: the catalog over the configured database, written to `out`.
pub async fn export_pool_from(
    settings: &crate::settings::Settings,
    db: &sea_orm::DatabaseConnection,
    out: &Path,
) -> Result<usize, String> {
    let repo = Arc::new(svc_sql::agent::SeaOrmBlueprintRepository::new(db.clone()));
    let catalog = catalog(&settings.blueprints, repo, Arc::new(crate::system::SystemClock))?;
    export_pool(&catalog, out).await
}
