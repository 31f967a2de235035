//! PKCE (RFC 7636), `S256` only: `plain` and a missing method are refused at authorize, so a
//! code can never be redeemed without a verifier whose SHA-256 matches the challenge.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use sha2::{Digest, Sha256};
use subtle::ConstantTimeEq;

/// The only code challenge method.
pub const S256: &str = "S256";
/// base64url of a SHA-256 digest, without padding.
const CHALLENGE_CHARS: usize = 43;
const VERIFIER_MIN_CHARS: usize = 43;
const VERIFIER_MAX_CHARS: usize = 128;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PkceError {
    #[error("code_challenge is required")]
    MissingChallenge,
    #[error("code_challenge_method must be S256")]
    UnsupportedMethod,
    #[error("code_challenge must be 43 base64url characters (S256)")]
    MalformedChallenge,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeChallenge(String);

impl CodeChallenge {
    pub fn parse(challenge: Option<&str>, method: Option<&str>) -> Result<Self, PkceError> {
        let challenge = challenge.filter(|c| !c.is_empty()).ok_or(PkceError::MissingChallenge)?;
        if method != Some(S256) {
            return Err(PkceError::UnsupportedMethod);
        }
        let base64url = |c: char| c.is_ascii_alphanumeric() || c == '-' || c == '_';
        if challenge.len() != CHALLENGE_CHARS || !challenge.chars().all(base64url) {
            return Err(PkceError::MalformedChallenge);
        }
        Ok(Self(challenge.to_owned()))
    }

    pub fn from_stored(value: String) -> Self {
        Self(value)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// True when `verifier` is a well-formed verifier whose `S256` transform is this challenge.
    /// The comparison takes the same time wherever the two differ.
    pub fn is_satisfied_by(&self, verifier: &str) -> bool {
        let unreserved = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '.' | '_' | '~');
        let well_formed =
            (VERIFIER_MIN_CHARS..=VERIFIER_MAX_CHARS).contains(&verifier.len()) && verifier.chars().all(unreserved);
        let transformed = URL_SAFE_NO_PAD.encode(Sha256::digest(verifier.as_bytes()));
        let matches: bool = transformed.as_bytes().ct_eq(self.0.as_bytes()).into();
        well_formed & matches
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    // RFC 7636 Appendix B.
    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";

    #[test]
    fn the_rfc_7636_example_verifies() {
        let challenge = CodeChallenge::parse(Some(CHALLENGE), Some("S256")).unwrap();
        assert!(challenge.is_satisfied_by(VERIFIER));
    }

    #[test]
    fn wrong_or_malformed_verifiers_fail() {
        let challenge = CodeChallenge::parse(Some(CHALLENGE), Some("S256")).unwrap();
        for verifier in [
            "",
            CHALLENGE,
            &VERIFIER[..42],
            &format!("{VERIFIER}x"),
            &format!("{} ", &VERIFIER[..43]),
        ] {
            assert!(!challenge.is_satisfied_by(verifier), "{verifier:?}");
        }
        // A verifier equal to the challenge is what `plain` would accept: refused.
        let plain = CodeChallenge::from_stored(VERIFIER.to_owned());
        assert!(!plain.is_satisfied_by(VERIFIER));
    }

    #[test]
    fn only_s256_challenges_are_accepted() {
        let rows = [
            (None, Some("S256"), Err(PkceError::MissingChallenge)),
            (Some(""), Some("S256"), Err(PkceError::MissingChallenge)),
            (Some(CHALLENGE), None, Err(PkceError::UnsupportedMethod)),
            (Some(CHALLENGE), Some("plain"), Err(PkceError::UnsupportedMethod)),
            (Some(CHALLENGE), Some("s256"), Err(PkceError::UnsupportedMethod)),
            (Some("short"), Some("S256"), Err(PkceError::MalformedChallenge)),
            (Some(&"+".repeat(43)), Some("S256"), Err(PkceError::MalformedChallenge)),
            (Some(CHALLENGE), Some("S256"), Ok(CodeChallenge(CHALLENGE.to_owned()))),
        ];
        for (challenge, method, expected) in rows {
            assert_eq!(
                CodeChallenge::parse(challenge, method),
                expected,
                "{challenge:?} {method:?}"
            );
        }
    }
}
