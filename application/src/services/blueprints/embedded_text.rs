//! What an embedder is given: at most [`EMBEDDED_TEXT_MAX_CHARS`] of each text. A blueprint's
//! description, a persona or an operator's keywords can be megabytes; the builtin embedder makes
//! a feature per character n-gram of each word (a 4 MiB word was 8 million strings on an async
//! worker), a provider's model refuses long inputs, and the query cache is keyed by the text.
//! What a text means for matching is in its beginning.

use std::sync::Arc;

use crate::ports::blueprints::{EmbedError, Embedder};

/// Characters of a text that are embedded; the rest is ignored.
pub const EMBEDDED_TEXT_MAX_CHARS: usize = 4_096;

/// `text` up to [`EMBEDDED_TEXT_MAX_CHARS`] characters.
pub fn embedded_part(text: &str) -> &str {
    match text.char_indices().nth(EMBEDDED_TEXT_MAX_CHARS) {
        Some((end, _)) => &text[..end],
        None => text,
    }
}

/// An embedder that sees only [`embedded_part`] of each text.
pub struct BoundedEmbedder(pub Arc<dyn Embedder>);

#[async_trait::async_trait]
impl Embedder for BoundedEmbedder {
    fn model(&self) -> &str {
        self.0.model()
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        if texts.iter().all(|text| embedded_part(text).len() == text.len()) {
            return self.0.embed(texts).await;
        }
        let bounded: Vec<String> = texts.iter().map(|text| embedded_part(text).to_owned()).collect();
        self.0.embed(&bounded).await
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Answers each text's length in characters, so a test sees what the inner embedder got.
    struct Lengths;

    #[async_trait::async_trait]
    impl Embedder for Lengths {
        fn model(&self) -> &str {
            "lengths"
        }

        async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
            Ok(texts.iter().map(|t| vec![t.chars().count() as f32]).collect())
        }
    }

    #[tokio::test]
    async fn each_text_is_embedded_up_to_the_bound_in_characters() {
        let bounded = BoundedEmbedder(Arc::new(Lengths));
        let long = "é".repeat(EMBEDDED_TEXT_MAX_CHARS + 10);
        let vectors = bounded.embed(&["short".to_owned(), long.clone()]).await.unwrap();
        assert_eq!(vectors, [vec![5.0], vec![EMBEDDED_TEXT_MAX_CHARS as f32]]);
        assert_eq!(embedded_part(&long).chars().count(), EMBEDDED_TEXT_MAX_CHARS);
        assert_eq!(embedded_part("short"), "short");
        assert_eq!(bounded.model(), "lengths");
    }
}
