//! The default generator: offline and deterministic, it derives a working component from the
//! contract alone, so a fresh server renders without any model provider.

use svc_application::ports::generation::{GeneratedComponent, GenerationError, GenerationRequest, Generator};

use crate::component::component_source;

/// Slug reported for components this generator produced.
pub const BUILTIN_GENERATOR_SLUG: &str = "builtin";

#[derive(Debug, Clone, Copy, Default)]
pub struct BuiltinGenerator;

impl BuiltinGenerator {
    pub fn new() -> Self {
        Self
    }

    /// The component for a request, without the async port around it.
    pub fn generate_now(&self, request: &GenerationRequest) -> Result<GeneratedComponent, GenerationError> {
        Ok(GeneratedComponent {
            source: component_source(&request.intent, request.contract.as_map(), &request.variance),
            generator: BUILTIN_GENERATOR_SLUG.to_string(),
            model: None,
            validator_score: None,
            compiled: None,
        })
    }
}

#[async_trait::async_trait]
impl Generator for BuiltinGenerator {
    async fn generate(&self, request: &GenerationRequest) -> Result<GeneratedComponent, GenerationError> {
        self.generate_now(request)
    }
}
