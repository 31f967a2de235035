//! Passwords: the length rule, and argon2id hashes in PHC string form.
//!
//! Parameters are OWASP's current first choice for argon2id (Password Storage Cheat Sheet):
//! 19 MiB of memory, 2 iterations, 1 lane. A stored hash carries its own parameters, so it
//! verifies after the parameters change; [`needs_rehash`] tells the sign-in to store a fresh hash
//! made with the current ones. The salt is an argument (16 random bytes from the caller), so
//! nothing here draws randomness.

use argon2::password_hash::{PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::{Algorithm, Argon2, Params, Version};

/// OWASP: argon2id, m = 19 MiB, t = 2, p = 1.
pub const MEMORY_KIB: u32 = 19 * 1024;
pub const ITERATIONS: u32 = 2;
pub const LANES: u32 = 1;
/// Bytes of salt the caller draws for each hash (at least 16, RFC 9106; at most 48).
pub const SALT_BYTES: usize = 22;

/// Shortest password accepted (OWASP ASVS 2.1.1: at least 12 characters).
pub const MIN_CHARS: usize = 12;
/// Longest password accepted: generous for passphrases, and bounds the work a request can ask for.
pub const MAX_CHARS: usize = 256;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum PasswordRuleError {
    #[error("a password must be at least {MIN_CHARS} characters")]
    TooShort,
    #[error("a password must be at most {MAX_CHARS} characters")]
    TooLong,
}

/// The length rule for a new password (counted in characters; any character is allowed).
pub fn check_new(password: &str) -> Result<(), PasswordRuleError> {
    let chars = password.chars().count();
    if chars < MIN_CHARS {
        Err(PasswordRuleError::TooShort)
    } else if chars > MAX_CHARS {
        Err(PasswordRuleError::TooLong)
    } else {
        Ok(())
    }
}

fn current() -> Argon2<'static> {
    let params = Params::new(MEMORY_KIB, ITERATIONS, LANES, None).expect("the OWASP parameters are valid");
    Argon2::new(Algorithm::Argon2id, Version::V0x13, params)
}

/// The argon2id hash of `password` with the current parameters, as a PHC string
/// (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`).
pub fn hash(password: &str, salt: &[u8; SALT_BYTES]) -> String {
    let salt = SaltString::encode_b64(salt).expect("22 bytes make a valid salt");
    current()
        .hash_password(password.as_bytes(), &salt)
        .expect("hashing with valid parameters cannot fail")
        .to_string()
}

/// Whether `password` matches `stored` (verified with the parameters written in `stored`).
/// A stored value that is not a PHC string matches nothing.
pub fn verify(password: &str, stored: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    // The hash's own parameters are used, whatever `current()` says.
    Argon2::default().verify_password(password.as_bytes(), &parsed).is_ok()
}

/// Whether `stored` was made with other than the current algorithm, version or parameters.
pub fn needs_rehash(stored: &str) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return true;
    };
    let Ok(params) = Params::try_from(&parsed) else {
        return true;
    };
    parsed.algorithm != Algorithm::Argon2id.ident()
        || parsed.version != Some(Version::V0x13.into())
        || params.m_cost() != MEMORY_KIB
        || params.t_cost() != ITERATIONS
        || params.p_cost() != LANES
}

#[cfg(test)]
mod tests {
    use super::*;

    const SALT: [u8; SALT_BYTES] = [7; SALT_BYTES];

    #[test]
    fn the_length_rule_counts_characters() {
        for (password, expected) in [
            ("", Err(PasswordRuleError::TooShort)),
            ("elevenchars", Err(PasswordRuleError::TooShort)),
            ("twelve chars", Ok(())),
            ("ééééééééééé", Err(PasswordRuleError::TooShort)), // 11 characters, 22 bytes
        ] {
            assert_eq!(check_new(password), expected, "{password:?}");
        }
        assert_eq!(check_new(&"x".repeat(MAX_CHARS)), Ok(()));
        assert_eq!(check_new(&"x".repeat(MAX_CHARS + 1)), Err(PasswordRuleError::TooLong));
    }

    #[test]
    fn a_hash_is_argon2id_with_the_owasp_parameters_and_verifies_only_its_password() {
        let stored = hash("correct horse battery", &SALT);
        assert!(stored.starts_with("$argon2id$v=19$m=19456,t=2,p=1$"), "{stored}");
        assert!(verify("correct horse battery", &stored));
        assert!(!verify("correct horse batterY", &stored));
        assert!(!needs_rehash(&stored));
        // Another salt, another hash.
        assert_ne!(stored, hash("correct horse battery", &[8; SALT_BYTES]));
    }

    #[test]
    fn a_hash_made_with_older_parameters_verifies_and_asks_for_a_rehash() {
        let weak = Argon2::new(
            Algorithm::Argon2id,
            Version::V0x13,
            Params::new(8 * 1024, 1, 1, None).unwrap(),
        );
        let salt = SaltString::encode_b64(&SALT).unwrap();
        let old = weak.hash_password(b"correct horse battery", &salt).unwrap().to_string();
        assert!(verify("correct horse battery", &old));
        assert!(needs_rehash(&old));
        let argon2i = Argon2::new(Algorithm::Argon2i, Version::V0x13, Params::default());
        let other = argon2i.hash_password(b"pw", &salt).unwrap().to_string();
        assert!(needs_rehash(&other));
    }

    #[test]
    fn a_stored_value_that_is_not_a_hash_matches_nothing() {
        for stored in ["", "plaintext", "$argon2id$garbage"] {
            assert!(!verify("plaintext", stored), "{stored}");
            assert!(needs_rehash(stored));
        }
    }
}
