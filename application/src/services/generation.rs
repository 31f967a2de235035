//! The generator catalog: which generator a slug names, and which one a request gets when it
//! names none. It is itself a [`Generator`], so the agent plane uses it as its only generator.
//!
//! Slugs (`docs/generation.md`): `builtin` (offline, deterministic), `standard` (a language
//! model, compile-checked, one repair round), `advanced` (as `standard`, plus a validator score).

use std::sync::Arc;

use crate::ports::generation::{
    GeneratedComponent, GenerationError, GenerationRequest, Generator, NoProgress, ProgressSink,
};

/// Slug of the offline generator.
pub const BUILTIN_SLUG: &str = "builtin";
/// Slug of the language-model generator.
pub const STANDARD_SLUG: &str = "standard";
/// Slug of the language-model generator with a validator score.
pub const ADVANCED_SLUG: &str = "advanced";

/// Generators by slug, and the rules choosing one for a request.
#[derive(Clone)]
pub struct GeneratorCatalog {
    generators: Vec<(String, Arc<dyn Generator>)>,
    default_slug: String,
    /// Slug used when a request names a model but no generator.
    model_slug: String,
}

impl GeneratorCatalog {
    /// A catalog whose default is `default_slug`; requests naming a model but no generator go to
    /// `standard` when it is registered.
    pub fn new(default_slug: impl Into<String>) -> Self {
        Self {
            generators: Vec::new(),
            default_slug: default_slug.into(),
            model_slug: STANDARD_SLUG.to_owned(),
        }
    }

    pub fn with(mut self, slug: impl Into<String>, generator: Arc<dyn Generator>) -> Self {
        self.generators.push((slug.into(), generator));
        self
    }

    /// Registered slugs, in registration order.
    pub fn slugs(&self) -> Vec<&str> {
        self.generators.iter().map(|(slug, _)| slug.as_str()).collect()
    }

    /// The generator a slug names; `GeneratorNotFound` (`generator_not_found`) otherwise.
    pub fn resolve(&self, slug: &str) -> Result<Arc<dyn Generator>, GenerationError> {
        self.generators
            .iter()
            .find(|(known, _)| known == slug)
            .map(|(_, generator)| generator.clone())
            .ok_or_else(|| GenerationError::GeneratorNotFound(slug.to_owned()))
    }

    /// The slug a request is served by ([`serving_slug`]).
    pub fn slug_for<'a>(&'a self, request: &'a GenerationRequest) -> &'a str {
        let model_slug = self
            .generators
            .iter()
            .any(|(s, _)| s == &self.model_slug)
            .then_some(self.model_slug.as_str());
        serving_slug(
            request.generator.as_deref(),
            request.model.is_some(),
            model_slug,
            &self.default_slug,
        )
    }
}

/// The generator a render is served by, and priced by: its own `generator`; else `model_slug`
/// (`standard`, when the deployment has it) when it names a model; else the deployment's default.
pub fn serving_slug<'a>(
    generator: Option<&'a str>,
    names_model: bool,
    model_slug: Option<&'a str>,
    default: &'a str,
) -> &'a str {
    match (generator, names_model, model_slug) {
        (Some(slug), _, _) => slug,
        (None, true, Some(model_slug)) => model_slug,
        _ => default,
    }
}

#[async_trait::async_trait]
impl Generator for GeneratorCatalog {
    async fn generate(&self, request: &GenerationRequest) -> Result<GeneratedComponent, GenerationError> {
        self.generate_with_progress(request, &NoProgress).await
    }

    async fn generate_with_progress(
        &self,
        request: &GenerationRequest,
        progress: &dyn ProgressSink,
    ) -> Result<GeneratedComponent, GenerationError> {
        let generator = self.resolve(self.slug_for(request))?;
        generator.generate_with_progress(request, progress).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    struct Named(&'static str);

    #[async_trait::async_trait]
    impl Generator for Named {
        async fn generate(&self, _: &GenerationRequest) -> Result<GeneratedComponent, GenerationError> {
            Ok(GeneratedComponent {
                source: String::new(),
                generator: self.0.to_owned(),
                model: None,
                validator_score: None,
                compiled: None,
            })
        }
    }

    fn catalog() -> GeneratorCatalog {
        GeneratorCatalog::new(BUILTIN_SLUG)
            .with(BUILTIN_SLUG, Arc::new(Named("builtin")))
            .with(STANDARD_SLUG, Arc::new(Named("standard")))
            .with(ADVANCED_SLUG, Arc::new(Named("advanced")))
    }

    async fn served_by(request: GenerationRequest) -> Result<String, GenerationError> {
        catalog().generate(&request).await.map(|g| g.generator)
    }

    #[tokio::test]
    async fn a_request_is_served_by_its_slug_then_its_model_then_the_default() {
        let plain = GenerationRequest::new("card", Default::default());
        assert_eq!(served_by(plain.clone()).await.unwrap(), "builtin");
        let with_model = GenerationRequest {
            model: Some("openai:gpt-4o".into()),
            ..plain.clone()
        };
        assert_eq!(served_by(with_model.clone()).await.unwrap(), "standard");
        let advanced = GenerationRequest {
            generator: Some("advanced".into()),
            ..with_model
        };
        assert_eq!(served_by(advanced).await.unwrap(), "advanced");
    }

    #[tokio::test]
    async fn an_unknown_slug_is_generator_not_found() {
        let request = GenerationRequest {
            generator: Some("deluxe".into()),
            ..GenerationRequest::new("card", Default::default())
        };
        assert_eq!(
            served_by(request).await,
            Err(GenerationError::GeneratorNotFound("deluxe".into()))
        );
        assert!(catalog().resolve("deluxe").is_err());
        assert_eq!(catalog().slugs(), vec!["builtin", "standard", "advanced"]);
    }

    #[test]
    fn persona_is_trimmed_and_lowercased() {
        let request = GenerationRequest::new("card", Default::default()).with_persona(Some("  Ops Lead "));
        assert_eq!(request.persona.as_deref(), Some("ops lead"));
        let blank = GenerationRequest::new("card", Default::default()).with_persona(Some("   "));
        assert_eq!(blank.persona, None);
    }
}
