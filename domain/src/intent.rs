//! The intent an agent names a card by (`svc_handshake`'s `intent`): the reuse key's first part.

/// Longest accepted intent, in characters.
pub const MAX_INTENT_CHARS: usize = 200;

/// An intent that is 1 to [`MAX_INTENT_CHARS`] characters once surrounding whitespace is trimmed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Intent(String);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("must be 1 to {MAX_INTENT_CHARS} characters")]
pub struct IntentLengthError {
    pub chars: usize,
}

impl Intent {
    pub fn parse(raw: &str) -> Result<Self, IntentLengthError> {
        let trimmed = raw.trim();
        let chars = trimmed.chars().count();
        if chars == 0 || chars > MAX_INTENT_CHARS {
            return Err(IntentLengthError { chars });
        }
        Ok(Self(trimmed.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn into_string(self) -> String {
        self.0
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_intent_is_trimmed_and_bounded_in_characters() {
        let longest = "é".repeat(MAX_INTENT_CHARS);
        let too_long = "é".repeat(MAX_INTENT_CHARS + 1);
        let rows: [(&str, Result<&str, usize>); 5] = [
            ("  order approval ", Ok("order approval")),
            (&longest, Ok(&longest)),
            ("", Err(0)),
            ("   ", Err(0)),
            (&too_long, Err(MAX_INTENT_CHARS + 1)),
        ];
        for (raw, expected) in rows {
            let parsed = Intent::parse(raw);
            assert_eq!(
                parsed.as_ref().map(Intent::as_str).map_err(|e| e.chars),
                expected,
                "{raw:?}"
            );
        }
        assert_eq!(
            Intent::parse("").unwrap_err().to_string(),
            "must be 1 to 200 characters"
        );
    }
}
