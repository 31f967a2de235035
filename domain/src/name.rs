//! The one rule for names people give things (apps, orgs, keys): 1 to a maximum of characters once
//! surrounding whitespace is trimmed, and no control characters, which would corrupt a listing,
//! a log line or a terminal (U+0000 also cannot be stored by PostgreSQL).

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum NameError {
    #[error("must be 1 to {max} characters once trimmed, got {chars}")]
    Length { chars: usize, max: usize },
    #[error("must not contain control characters (U+{code:04X} at character {position})")]
    ControlCharacter { code: u32, position: usize },
}

/// The name to store: `raw` trimmed, or why it is refused.
pub fn parse_name(raw: &str, max: usize) -> Result<String, NameError> {
    let trimmed = raw.trim();
    if let Some((position, c)) = trimmed.chars().enumerate().find(|(_, c)| c.is_control()) {
        return Err(NameError::ControlCharacter {
            code: u32::from(c),
            position,
        });
    }
    let chars = trimmed.chars().count();
    if chars == 0 || chars > max {
        return Err(NameError::Length { chars, max });
    }
    Ok(trimmed.to_owned())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_trimmed_bounded_and_free_of_control_characters() {
        let rows: [(&str, Result<&str, NameError>); 9] = [
            ("  Sh  ", Ok("Sh")),
            ("ééé", Ok("ééé")),
            ("", Err(NameError::Length { chars: 0, max: 3 })),
            (" \t ", Err(NameError::Length { chars: 0, max: 3 })),
            ("abcd", Err(NameError::Length { chars: 4, max: 3 })),
            ("a\u{0}", Err(NameError::ControlCharacter { code: 0, position: 1 })),
            ("a\nb", Err(NameError::ControlCharacter { code: 10, position: 1 })),
            (
                "\u{7f}",
                Err(NameError::ControlCharacter {
                    code: 0x7f,
                    position: 0,
                }),
            ),
            (
                "\u{9b}",
                Err(NameError::ControlCharacter {
                    code: 0x9b,
                    position: 0,
                }),
            ),
        ];
        for (raw, expected) in rows {
            assert_eq!(parse_name(raw, 3).as_deref().map_err(|e| *e), expected, "{raw:?}");
        }
    }
}
