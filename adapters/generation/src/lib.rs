//! Generators behind the `Generator` port. The built-in one turns any data contract into a React
//! component (TSX) that uses only `react` and the standard hooks of `@svc/gadgets`; [`llm`] asks a
//! language model (OpenAI-compatible, Anthropic, Gemini or Ollama) and checks what it wrote.

mod action_forms;
mod builtin_generator;
mod chart_views;
mod charts;
mod component;
mod context_slots;
mod controls;
mod helpers;
pub mod llm;
mod meaning;
mod needs;
mod prop_views;
mod row_actions;
mod schema_kind;
mod send_state;
mod stepper;
mod stream_views;
mod styles;
mod tsx_text;
mod variance;

pub use builtin_generator::{BUILTIN_GENERATOR_SLUG, BuiltinGenerator};

#[cfg(test)]
mod tests;
