//! `infra.model` routes: `provider:model` or `provider/model`, checked against the model registry.
//!
//! The registry lists each known route with its provider, its context size and whether the
//! provider can constrain the reply to a JSON schema. The built-in entries are below; a
//! deployment adds or replaces entries in configuration (`[[generation.models]]`).

/// Models the protocol knows. A deployment may add entries in configuration.
pub const KNOWN_MODEL_ROUTES: [&str; 12] = [
    "openai:gpt-4.1",
    "openai:gpt-4.1-mini",
    "openai:gpt-4o",
    "openai:gpt-5",
    "openai:gpt-5-mini",
    "openai:o4-mini",
    "anthropic:claude-sonnet-4-5",
    "anthropic:claude-haiku-4-5",
    "anthropic:claude-opus-4-1",
    "google:gemini-2.5-pro",
    "google:gemini-2.5-flash",
    "mistral:mistral-large-latest",
];

/// Context window (tokens), structured-output support and reasoning kind of the built-in routes,
/// in the order of [`KNOWN_MODEL_ROUTES`].
const KNOWN_MODEL_TRAITS: [(u32, bool, bool); 12] = [
    (1_047_576, true, false),
    (1_047_576, true, false),
    (128_000, true, false),
    (400_000, true, true),
    (400_000, true, true),
    (200_000, true, true),
    (200_000, false, false),
    (200_000, false, false),
    (200_000, false, false),
    (1_048_576, true, false),
    (1_048_576, true, false),
    (131_072, true, false),
];

/// One route of the model registry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelEntry {
    pub route: ModelRoute,
    /// Tokens of prompt plus reply the model accepts.
    pub context_tokens: u32,
    /// Whether the provider can constrain the reply to a JSON schema.
    pub structured_output: bool,
    /// A reasoning model (OpenAI's o-series and gpt-5): it takes `max_completion_tokens` instead
    /// of `max_tokens` and refuses a `temperature`.
    pub reasoning: bool,
}

/// The routes `infra.model` accepts.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModelRegistry {
    entries: Vec<ModelEntry>,
}

impl ModelRegistry {
    /// The built-in routes.
    pub fn builtin() -> Self {
        let entries = KNOWN_MODEL_ROUTES
            .iter()
            .zip(KNOWN_MODEL_TRAITS)
            .map(|(route, (context_tokens, structured_output, reasoning))| {
                let (provider, model) = route.split_once(':').expect("built-in routes are canonical");
                ModelEntry {
                    route: ModelRoute {
                        provider: provider.to_owned(),
                        model: model.to_owned(),
                    },
                    context_tokens,
                    structured_output,
                    reasoning,
                }
            })
            .collect();
        Self { entries }
    }

    /// Adds `entry`, replacing an entry of the same route (a deployment's entry wins).
    pub fn with(mut self, entry: ModelEntry) -> Self {
        match self.entries.iter().position(|known| known.route == entry.route) {
            Some(index) => self.entries[index] = entry,
            None => self.entries.push(entry),
        }
        self
    }

    pub fn entries(&self) -> &[ModelEntry] {
        &self.entries
    }

    /// Canonical `provider:model` spellings of every entry.
    pub fn routes(&self) -> Vec<String> {
        self.entries.iter().map(|entry| entry.route.canonical()).collect()
    }

    pub fn get(&self, route: &ModelRoute) -> Option<&ModelEntry> {
        self.entries.iter().find(|entry| &entry.route == route)
    }

    /// Parses `raw` (either spelling) and finds its entry.
    pub fn lookup(&self, raw: &str) -> Result<&ModelEntry, ModelRouteError> {
        let route = parse_route_syntax(raw)?;
        self.get(&route)
            .ok_or_else(|| ModelRouteError::Unknown(route.canonical()))
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ModelRoute {
    pub provider: String,
    pub model: String,
}

impl ModelRoute {
    /// The canonical `provider:model` spelling.
    pub fn canonical(&self) -> String {
        format!("{}:{}", self.provider, self.model)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ModelRouteError {
    #[error("must be written `provider:model` or `provider/model` (a bare model id is not a route)")]
    Malformed,
    #[error("`{}` is not in the model registry", crate::text::excerpt(.0))]
    Unknown(String),
}

/// Parses a route and checks it against `registry` (canonical `provider:model` entries).
pub fn parse_model_route(raw: &str, registry: &[String]) -> Result<ModelRoute, ModelRouteError> {
    let route = parse_route_syntax(raw)?;
    if registry.iter().any(|known| known == &route.canonical()) {
        Ok(route)
    } else {
        Err(ModelRouteError::Unknown(route.canonical()))
    }
}

/// Parses either spelling without consulting a registry.
pub fn parse_route_syntax(raw: &str) -> Result<ModelRoute, ModelRouteError> {
    let (provider, model) = raw
        .split_once(':')
        .or_else(|| raw.split_once('/'))
        .ok_or(ModelRouteError::Malformed)?;
    let well_formed = |s: &str| !s.is_empty() && !s.chars().any(char::is_whitespace);
    if !well_formed(provider) || !well_formed(model) || !provider.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return Err(ModelRouteError::Malformed);
    }
    Ok(ModelRoute {
        provider: provider.to_owned(),
        model: model.to_owned(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_builtin_registry_lists_the_known_routes() {
        assert_eq!(ModelRegistry::builtin().routes(), registry());
        let entry = ModelRegistry::builtin()
            .lookup("anthropic/claude-sonnet-4-5")
            .unwrap()
            .clone();
        assert_eq!(entry.context_tokens, 200_000);
        assert!(!entry.structured_output);
        assert!(!entry.reasoning);
        assert!(ModelRegistry::builtin().lookup("openai:gpt-5").unwrap().reasoning);
    }

    #[test]
    fn a_deployment_entry_adds_a_route_or_replaces_one() {
        let local = ModelEntry {
            route: parse_route_syntax("ollama:llama3.1").unwrap(),
            context_tokens: 8192,
            structured_output: true,
            reasoning: false,
        };
        let registry = ModelRegistry::builtin().with(local.clone());
        assert_eq!(registry.lookup("ollama/llama3.1"), Ok(&local));
        assert_eq!(registry.routes().len(), KNOWN_MODEL_ROUTES.len() + 1);
        let smaller = ModelEntry {
            route: parse_route_syntax("openai:gpt-4o").unwrap(),
            context_tokens: 1000,
            structured_output: false,
            reasoning: false,
        };
        let registry = registry.with(smaller.clone());
        assert_eq!(registry.lookup("openai:gpt-4o"), Ok(&smaller));
        assert_eq!(registry.routes().len(), KNOWN_MODEL_ROUTES.len() + 1);
        assert_eq!(registry.lookup("gpt-4o"), Err(ModelRouteError::Malformed));
    }

    fn registry() -> Vec<String> {
        KNOWN_MODEL_ROUTES.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn both_spellings_parse_to_the_same_route() {
        let a = parse_model_route("openai:gpt-4o", &registry()).unwrap();
        let b = parse_model_route("openai/gpt-4o", &registry()).unwrap();
        assert_eq!(a, b);
        assert_eq!(a.canonical(), "openai:gpt-4o");
    }

    #[test]
    fn bare_ids_and_unknown_routes_fail() {
        assert_eq!(
            parse_model_route("gpt-4o", &registry()),
            Err(ModelRouteError::Malformed)
        );
        assert_eq!(parse_model_route(":gpt", &registry()), Err(ModelRouteError::Malformed));
        assert_eq!(
            parse_model_route("acme:nope", &registry()),
            Err(ModelRouteError::Unknown("acme:nope".into()))
        );
    }
}
