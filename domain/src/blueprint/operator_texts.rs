//! The free texts an operator writes about a blueprint (`persona`, `aesthetic`, `context` and
//! `seedPrompt` of `svc_ops_generate_blueprint` and `svc_ops_register_blueprint`) and how long
//! each may be. They are stored with the blueprint, held by every server's blueprint index and
//! quoted in a language model's prompt, so each is bounded where it arrives, in characters as
//! sent (like an app's `systemPrompt`). Rows stored before a cap keep what they hold.

/// Who the UI is for: a role or an audience in a few words, as long as an intent may be.
pub const PERSONA_MAX_CHARS: usize = 200;
/// Visual direction in a few words ("dense, monochrome, data-first").
pub const AESTHETIC_MAX_CHARS: usize = 200;
/// Background for the generator, and the blueprint's intent and description: what semantic search
/// embeds. The embedder reads 4,096 characters of a blueprint's text, so more would not be found.
pub const CONTEXT_MAX_CHARS: usize = 4_000;
/// The operator's own instructions to the generator: as long as an app's system prompt.
pub const SEED_PROMPT_MAX_CHARS: usize = 10_000;

/// One of the operator's texts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OperatorText {
    Persona,
    Aesthetic,
    Context,
    SeedPrompt,
}

impl OperatorText {
    pub const fn max_chars(self) -> usize {
        match self {
            Self::Persona => PERSONA_MAX_CHARS,
            Self::Aesthetic => AESTHETIC_MAX_CHARS,
            Self::Context => CONTEXT_MAX_CHARS,
            Self::SeedPrompt => SEED_PROMPT_MAX_CHARS,
        }
    }

    /// `text` when it is within this field's cap.
    pub fn check(self, text: &str) -> Result<(), OperatorTextTooLong> {
        let max = self.max_chars();
        // Counting stops past the cap: a refused text may be megabytes.
        if text.chars().nth(max).is_none() {
            return Ok(());
        }
        Err(OperatorTextTooLong {
            field: self,
            chars: text.chars().count(),
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("must be at most {} characters, got {chars}", .field.max_chars())]
pub struct OperatorTextTooLong {
    pub field: OperatorText,
    pub chars: usize,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_text_is_bounded_in_characters_as_sent() {
        use OperatorText::*;
        for (field, max) in [(Persona, 200), (Aesthetic, 200), (Context, 4_000), (SeedPrompt, 10_000)] {
            assert_eq!(field.max_chars(), max);
            // Characters, not bytes: a two-byte character counts once.
            assert_eq!(field.check(&"é".repeat(max)), Ok(()), "{field:?}");
            assert_eq!(field.check(""), Ok(()));
            let refused = field.check(&"é".repeat(max + 1)).unwrap_err();
            assert_eq!(refused, OperatorTextTooLong { field, chars: max + 1 });
            assert_eq!(
                refused.to_string(),
                format!("must be at most {max} characters, got {}", max + 1)
            );
            // Surrounding whitespace counts: the cap is on what arrives, as the schema's is.
            assert!(field.check(&format!(" {} ", "p".repeat(max - 1))).is_err(), "{field:?}");
        }
    }
}
