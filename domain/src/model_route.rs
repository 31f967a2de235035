//! `infra.model` routes: `provider:model` or `provider/model`, checked against the model registry.

/// Models the protocol knows. A deployment may add entries in configuration.
pub const KNOWN_MODEL_ROUTES: [&str; 9] = [
    "openai:gpt-4.1",
    "openai:gpt-4.1-mini",
    "openai:gpt-4o",
    "anthropic:claude-sonnet-4-5",
    "anthropic:claude-haiku-4-5",
    "anthropic:claude-opus-4-1",
    "google:gemini-2.5-pro",
    "google:gemini-2.5-flash",
    "mistral:mistral-large-latest",
];

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
    #[error("`{0}` is not in the model registry")]
    Unknown(String),
}

/// Parses a route and checks it against `registry` (canonical `provider:model` entries).
pub fn parse_model_route(raw: &str, registry: &[String]) -> Result<ModelRoute, ModelRouteError> {
    let (provider, model) = raw
        .split_once(':')
        .or_else(|| raw.split_once('/'))
        .ok_or(ModelRouteError::Malformed)?;
    let well_formed = |s: &str| !s.is_empty() && !s.chars().any(char::is_whitespace);
    if !well_formed(provider) || !well_formed(model) || !provider.chars().all(|c| c.is_ascii_alphanumeric() || c == '-')
    {
        return Err(ModelRouteError::Malformed);
    }
    let route = ModelRoute {
        provider: provider.to_owned(),
        model: model.to_owned(),
    };
    if registry.iter().any(|known| known == &route.canonical()) {
        Ok(route)
    } else {
        Err(ModelRouteError::Unknown(route.canonical()))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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
