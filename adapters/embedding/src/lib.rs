//! Embedder adapters. [`BuiltinEmbedder`] works offline and deterministically (hashed word and
//! character n-grams); [`OpenAiEmbedder`] calls an OpenAI-compatible `/embeddings` endpoint.

mod builtin;
mod openai;

pub use builtin::{BUILTIN_DIMENSIONS, BUILTIN_MODEL, BuiltinEmbedder};
pub use openai::{OpenAiEmbedder, OpenAiEmbedderOptions};
