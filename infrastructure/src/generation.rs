//! Wiring of the generators: the model registry (built-in routes plus `[[generation.models]]`),
//! the providers of `[generation.providers.*]` with their keys, and the catalog of generator
//! slugs the agent plane uses (`docs/generation.md`).

use std::sync::Arc;
use std::time::Duration;

use svc_application::ports::generation::{Compiler, Generator};
use svc_application::services::cpu_gate::CpuGate;
use svc_application::services::generation::{ADVANCED_SLUG, BUILTIN_SLUG, GeneratorCatalog, STANDARD_SLUG};
use svc_domain::model_route::{ModelEntry, ModelRegistry, parse_route_syntax};
use svc_generation::BuiltinGenerator;
use svc_generation::llm::{Flavour, LlmGenerator, LlmSettings, ProviderConfig, RetryPolicy, Wire};
use svc_render_check::QuickJsRenderCheck;

use crate::settings::GenerationSettings;

/// The generator catalog and the registry `infra.model` is checked against.
pub struct Generators {
    pub catalog: GeneratorCatalog,
    pub registry: ModelRegistry,
}

pub fn generators(
    settings: &GenerationSettings,
    compiler: Arc<dyn Compiler>,
    cpu: CpuGate,
) -> Result<Generators, String> {
    let registry = registry_with_default_model(settings)?;
    let providers = providers(settings)?;
    log_summary(settings, &providers, &registry);
    // Every reply that compiles is rendered once headless before it is accepted.
    let llm = LlmGenerator::new(
        Flavour::Standard,
        providers,
        registry.clone(),
        compiler,
        llm_settings(settings)?,
    )
    .with_render_check(Arc::new(QuickJsRenderCheck::default()))
    .with_cpu_gate(cpu);
    let catalog = GeneratorCatalog::new(settings.default_generator.clone())
        .with(BUILTIN_SLUG, Arc::new(BuiltinGenerator::new()) as Arc<dyn Generator>)
        .with(STANDARD_SLUG, Arc::new(llm.clone()))
        .with(ADVANCED_SLUG, Arc::new(llm.with_flavour(Flavour::Advanced)));
    catalog.resolve(&settings.default_generator).map_err(|_| {
        format!(
            "generation.default_generator: unknown slug `{}`",
            settings.default_generator
        )
    })?;
    Ok(Generators { catalog, registry })
}

/// What generation can do with this configuration, for an operator reading the start-up log.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Summary {
    /// `name (key set)`, `name (no key)` or `name (no key needed)`: never the key.
    providers: Vec<String>,
    /// Registry routes whose provider is configured and has a key (or needs none).
    routable_models: Vec<String>,
    /// Providers that need a key and have none: their models fail with NO_CREDENTIALS.
    keyless: Vec<String>,
}

fn summary(providers: &[ProviderConfig], registry: &ModelRegistry) -> Summary {
    let usable = |name: &str| {
        providers
            .iter()
            .any(|p| p.name == name && (p.has_key() || !p.key_required))
    };
    let describe = |p: &ProviderConfig| match (p.has_key(), p.key_required) {
        (true, _) => format!("{} (key set)", p.name),
        (false, true) => format!("{} (no key)", p.name),
        (false, false) => format!("{} (no key needed)", p.name),
    };
    Summary {
        providers: providers.iter().map(describe).collect(),
        routable_models: registry
            .routes()
            .into_iter()
            .filter(|route| registry.lookup(route).is_ok_and(|entry| usable(&entry.route.provider)))
            .collect(),
        keyless: providers
            .iter()
            .filter(|p| p.key_required && !p.has_key())
            .map(|p| p.name.clone())
            .collect(),
    }
}

/// One start-up line: the default generator and model, every provider with whether it has a key,
/// and the models a render can be routed to. A bad key cannot be seen before it is used: the
/// first call it fails logs an error naming the provider (`svc_generation::llm`).
fn log_summary(settings: &GenerationSettings, providers: &[ProviderConfig], registry: &ModelRegistry) {
    let summary = summary(providers, registry);
    tracing::info!(
        target: "svc::startup",
        default_generator = %settings.default_generator,
        default_model = %settings.default_model,
        providers = %summary.providers.join(", "),
        routable_models = %summary.routable_models.join(", "),
        "generation"
    );
    if !summary.keyless.is_empty() {
        tracing::info!(
            target: "svc::startup",
            providers = %summary.keyless.join(", "),
            "these providers have no API key: renders routed to them fail with NO_CREDENTIALS"
        );
    }
}

/// The model registry, once `generation.default_model` is found in it: checked whichever
/// generator is the default (an agent may still ask for `standard`, and every such render would
/// fail naming a model the operator wrote).
pub fn registry_with_default_model(settings: &GenerationSettings) -> Result<ModelRegistry, String> {
    let registry = model_registry(settings)?;
    let default_model = settings.default_model.trim();
    if !default_model.is_empty() {
        registry
            .lookup(default_model)
            .map_err(|e| format!("generation.default_model: {e}"))?;
    }
    Ok(registry)
}

fn model_registry(settings: &GenerationSettings) -> Result<ModelRegistry, String> {
    settings
        .models
        .iter()
        .try_fold(ModelRegistry::builtin(), |registry, model| {
            let route =
                parse_route_syntax(&model.route).map_err(|e| format!("generation.models: `{}` {e}", model.route))?;
            if !settings.providers.contains_key(&route.provider) {
                return Err(format!(
                    "generation.models: `{}` names provider `{}`, which has no [generation.providers.{}]",
                    model.route, route.provider, route.provider
                ));
            }
            Ok(registry.with(ModelEntry {
                route,
                context_tokens: model.context_tokens,
                structured_output: model.structured_output,
                reasoning: model.reasoning,
            }))
        })
}

fn providers(settings: &GenerationSettings) -> Result<Vec<ProviderConfig>, String> {
    settings
        .providers
        .iter()
        .map(|(name, provider)| {
            let wire = Wire::parse(&provider.wire).ok_or_else(|| {
                format!(
                    "generation.providers.{name}.wire: `{}` is not one of openai, anthropic, gemini, ollama",
                    provider.wire
                )
            })?;
            let mut config = ProviderConfig::new(name, wire, &provider.base_url, provider.key());
            if let Some(required) = provider.key_required {
                config.key_required = required;
            }
            Ok(config)
        })
        .collect()
}

fn llm_settings(settings: &GenerationSettings) -> Result<LlmSettings, String> {
    if settings.max_attempts == 0 {
        return Err("generation.max_attempts must be at least 1".into());
    }
    Ok(LlmSettings {
        default_model: Some(settings.default_model.trim().to_owned()).filter(|m| !m.is_empty()),
        max_output_tokens: settings.max_output_tokens,
        temperature: settings.temperature,
        attempt_timeout: Duration::from_secs(settings.attempt_timeout_seconds.max(1)),
        idle_timeout: Duration::from_secs(settings.idle_timeout_seconds.max(1)),
        retry: RetryPolicy {
            max_attempts: settings.max_attempts,
            max_wait: Duration::from_secs(settings.max_retry_wait_seconds),
            ..RetryPolicy::default()
        },
        structured_output: settings.structured_output,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Settings;

    #[test]
    fn the_default_configuration_wires_every_slug_and_provider() {
        let settings = Settings::load(None).unwrap();
        let generators = generators(&settings.generation, Arc::new(NoCompiler), CpuGate::unbounded()).unwrap();
        assert_eq!(generators.catalog.slugs(), vec!["builtin", "standard", "advanced"]);
        assert_eq!(generators.registry, ModelRegistry::builtin());
        let names: Vec<String> = providers(&settings.generation)
            .unwrap()
            .into_iter()
            .map(|p| p.name)
            .collect();
        assert_eq!(names, vec!["anthropic", "google", "mistral", "ollama", "openai"]);
    }

    #[test]
    fn configured_models_extend_the_registry_and_bad_entries_are_named() {
        let mut settings = Settings::load(None).unwrap().generation;
        settings.models.push(crate::settings::ModelSettings {
            route: "ollama/llama3.1".into(),
            context_tokens: 131_072,
            structured_output: true,
            reasoning: true,
        });
        let registry = model_registry(&settings).unwrap();
        assert!(registry.routes().contains(&"ollama:llama3.1".to_owned()));
        assert!(
            registry.lookup("ollama:llama3.1").unwrap().reasoning,
            "the entry's reasoning flag is kept"
        );
        settings.models[0].route = "acme:model".into();
        assert!(model_registry(&settings).unwrap_err().contains("acme"));
        settings.models.clear();
        settings.providers.get_mut("openai").unwrap().wire = "grpc".into();
        assert!(
            providers(&settings)
                .unwrap_err()
                .contains("generation.providers.openai.wire")
        );
    }

    #[test]
    fn the_summary_names_keys_without_showing_them_and_lists_routable_models() {
        let registry = ModelRegistry::builtin();
        let providers = vec![
            ProviderConfig::new(
                "openai",
                Wire::OpenAi,
                "https://api.openai.com/v1",
                Some("sk-secret".into()),
            ),
            ProviderConfig::new("anthropic", Wire::Anthropic, "https://api.anthropic.com", None),
            ProviderConfig::new("ollama", Wire::Ollama, "http://127.0.0.1:11434", None),
        ];
        let summary = summary(&providers, &registry);
        assert_eq!(
            summary.providers,
            vec!["openai (key set)", "anthropic (no key)", "ollama (no key needed)"]
        );
        assert_eq!(summary.keyless, vec!["anthropic"]);
        assert!(format!("{summary:?}").contains("openai") && !format!("{summary:?}").contains("sk-secret"));
        assert!(summary.routable_models.iter().any(|m| m.starts_with("openai:")));
        assert!(summary.routable_models.iter().all(|m| !m.starts_with("anthropic:")));
    }

    struct NoCompiler;

    impl Compiler for NoCompiler {
        fn compile(
            &self,
            _: &str,
            _: &[String],
        ) -> Result<
            svc_application::ports::generation::CompiledModule,
            svc_application::ports::generation::CompileFailure,
        > {
            unreachable!()
        }
    }
}
