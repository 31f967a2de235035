//! Passwords: the length rule, and argon2id hashes in PHC string form.
//!
//! Parameters are OWASP's current first choice for argon2id (Password Storage Cheat Sheet):
//! 19 MiB of memory, 2 iterations, 1 lane. A stored hash carries its own parameters, so it
//! verifies after the parameters change; [`needs_rehash`] tells the sign-in to store a fresh hash
//! made with the current ones. The salt is an argument (16 random bytes from the caller), so
//! nothing here draws randomness.

use argon2::password_hash::{Output, ParamsString, PasswordHash, SaltString};
use argon2::{Algorithm, Argon2, Block, Params, Version};

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

fn current_params() -> Params {
    Params::new(MEMORY_KIB, ITERATIONS, LANES, None).expect("the OWASP parameters are valid")
}

/// argon2's working memory (19 MiB with the current parameters), handed to [`hash_in`] and
/// [`verify_in`] so a caller can keep it and use it again. Allocated afresh for every hash, it
/// leaves the allocator holding many of them after a burst of concurrent sign-ins (measured:
/// 48 at once grew a server by 550 MiB for good, two hashes at a time). Every block is written
/// before it is read, so nothing of one hash reaches the next.
pub struct HashMemory(Vec<Block>);

impl Default for HashMemory {
    fn default() -> Self {
        Self(vec![Block::default(); current_params().block_count()])
    }
}

/// The argon2id hash of `password` with the current parameters, as a PHC string
/// (`$argon2id$v=19$m=19456,t=2,p=1$<salt>$<hash>`).
pub fn hash(password: &str, salt: &[u8; SALT_BYTES]) -> String {
    hash_in(password, salt, &mut HashMemory::default())
}

/// [`hash`] in `memory`.
pub fn hash_in(password: &str, salt: &[u8; SALT_BYTES], memory: &mut HashMemory) -> String {
    let salt = SaltString::encode_b64(salt).expect("22 bytes make a valid salt");
    let params = current_params();
    let argon2 = Argon2::new(Algorithm::Argon2id, Version::V0x13, params.clone());
    let mut raw = [0u8; 64];
    let raw_salt = salt
        .as_salt()
        .decode_b64(&mut raw)
        .expect("a salt just encoded decodes");
    let output = output_in(&argon2, password, raw_salt, Params::DEFAULT_OUTPUT_LEN, memory)
        .expect("hashing with valid parameters cannot fail");
    PasswordHash {
        algorithm: Algorithm::Argon2id.ident(),
        version: Some(Version::V0x13.into()),
        params: ParamsString::try_from(&params).expect("the OWASP parameters are a valid PHC string"),
        salt: Some(salt.as_salt()),
        hash: Some(output),
    }
    .to_string()
}

/// Whether `password` matches `stored` (verified with the parameters written in `stored`).
/// A stored value that is not a PHC string matches nothing.
pub fn verify(password: &str, stored: &str) -> bool {
    verify_in(password, stored, &mut HashMemory::default())
}

/// [`verify`] in `memory`: the hash's own algorithm, version and parameters, whatever the
/// current ones are, and the outputs compared in constant time (`Output`'s equality).
pub fn verify_in(password: &str, stored: &str, memory: &mut HashMemory) -> bool {
    let Ok(parsed) = PasswordHash::new(stored) else {
        return false;
    };
    let (Some(salt), Some(expected)) = (parsed.salt, parsed.hash) else {
        return false;
    };
    let (Ok(algorithm), Ok(params)) = (Algorithm::try_from(parsed.algorithm), Params::try_from(&parsed)) else {
        return false;
    };
    let Ok(version) = parsed.version.map_or(Ok(Version::default()), Version::try_from) else {
        return false;
    };
    let mut raw = [0u8; 64];
    let Ok(raw_salt) = salt.decode_b64(&mut raw) else {
        return false;
    };
    let argon2 = Argon2::new(algorithm, version, params);
    output_in(&argon2, password, raw_salt, expected.len(), memory).is_ok_and(|computed| computed == expected)
}

/// `argon2`'s output of `len` bytes for `password` and `salt`, computed in `memory`.
fn output_in(
    argon2: &Argon2,
    password: &str,
    salt: &[u8],
    len: usize,
    memory: &mut HashMemory,
) -> argon2::password_hash::Result<Output> {
    let count = argon2.params().block_count();
    // A stored hash made with more memory than the current parameters (rare) gets its own,
    // dropped after: the kept memory stays the current parameters' size.
    let mut larger = Vec::new();
    let blocks = match memory.0.get_mut(..count) {
        Some(kept) => kept,
        None => {
            larger.resize(count, Block::default());
            &mut larger[..]
        }
    };
    Output::init_with(len, |out| {
        Ok(argon2.hash_password_into_with_memory(password.as_bytes(), salt, out, blocks)?)
    })
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
    use argon2::password_hash::{PasswordHasher, PasswordVerifier};

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
    fn hashing_in_kept_memory_gives_what_the_crate_gives_and_verifies_as_it_does() {
        let crate_own = |argon2: &Argon2, password: &str| {
            let salt = SaltString::encode_b64(&SALT).unwrap();
            argon2.hash_password(password.as_bytes(), &salt).unwrap().to_string()
        };
        let owasp = Argon2::new(Algorithm::Argon2id, Version::V0x13, current_params());
        let weak = Argon2::new(
            Algorithm::Argon2id,
            Version::V0x13,
            Params::new(8 * 1024, 1, 1, None).unwrap(),
        );
        let big = Argon2::new(
            Algorithm::Argon2d,
            Version::V0x10,
            Params::new(24 * 1024, 1, 2, None).unwrap(),
        );
        // One memory for every hash and check below: what one run left in it changes nothing.
        let mut memory = HashMemory::default();
        for password in ["correct horse battery", "another passphrase here"] {
            let mine = hash_in(password, &SALT, &mut memory);
            assert_eq!(mine, crate_own(&owasp, password));
            for argon2 in [&owasp, &weak, &big] {
                let stored = crate_own(argon2, password);
                let parsed = PasswordHash::new(&stored).unwrap();
                for attempt in [password, "not the password at all"] {
                    assert_eq!(
                        verify_in(attempt, &stored, &mut memory),
                        Argon2::default().verify_password(attempt.as_bytes(), &parsed).is_ok(),
                        "{attempt:?} against {stored}"
                    );
                }
                assert!(verify_in(password, &stored, &mut memory));
            }
        }
    }

    #[test]
    fn a_stored_value_that_is_not_a_hash_matches_nothing() {
        for stored in ["", "plaintext", "$argon2id$garbage"] {
            assert!(!verify("plaintext", stored), "{stored}");
            assert!(needs_rehash(stored));
        }
    }
}
