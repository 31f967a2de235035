//! Authorization codes: 5 minutes, single use, bound to the client, the redirect URI, the PKCE
//! challenge and the resource given at authorize.
//!
//! The access token is a bearer key minted at consent (Document 2: the pairing service or the
//! key check yields it there). The code row carries it to the token endpoint *sealed with the
//! code itself*: only the code's sha256 and the sealed token are stored, so a copy of the
//! database does not reveal a usable token, and only the holder of the code (and its verifier)
//! can open it. The seal is ChaCha20-Poly1305 under a key derived from the code with HKDF-SHA256:
//! a tampered row does not open. Each key seals one token (the code is 256 fresh random bits
//! used once), so a fixed nonce is safe and the domain needs no randomness.

use chacha20poly1305::aead::{Aead, Payload};
use chacha20poly1305::{ChaCha20Poly1305, KeyInit};
use chrono::{DateTime, TimeDelta, Utc};
use hkdf::Hkdf;
use sha2::{Digest, Sha256};

use super::issuer::Issuer;
use super::pkce::CodeChallenge;
use super::resource::resource_matches;

/// Document 2, Limits: an authorization code lives 5 minutes.
pub const CODE_LIFETIME_SECONDS: i64 = 300;

/// HKDF's info and the AEAD's associated data: a key derived here seals nothing else.
const SEAL_CONTEXT: &[u8] = b"svc oauth authorization code seal v2";

/// One key seals one token, so one nonce serves.
const SEAL_NONCE: [u8; 12] = [0; 12];

/// The stored form of a code: lowercase sha256 hex.
pub fn hash_code(code: &str) -> String {
    hex::encode(Sha256::digest(code.as_bytes()))
}

fn cipher(code: &str) -> ChaCha20Poly1305 {
    let mut key = [0u8; 32];
    Hkdf::<Sha256>::new(None, code.as_bytes())
        .expand(SEAL_CONTEXT, &mut key)
        .expect("32 bytes is a valid HKDF-SHA256 output length");
    ChaCha20Poly1305::new(&key.into())
}

fn seal(code: &str, token: &str) -> String {
    let payload = Payload {
        msg: token.as_bytes(),
        aad: SEAL_CONTEXT,
    };
    let sealed = cipher(code)
        .encrypt(&SEAL_NONCE.into(), payload)
        .expect("ChaCha20-Poly1305 seals any token length");
    hex::encode(sealed)
}

fn unseal(code: &str, sealed: &str) -> Option<String> {
    let bytes = hex::decode(sealed).ok()?;
    let payload = Payload {
        msg: &bytes,
        aad: SEAL_CONTEXT,
    };
    let opened = cipher(code).decrypt(&SEAL_NONCE.into(), payload).ok()?;
    String::from_utf8(opened).ok()
}

/// What authorize bound the code to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeBinding {
    pub client_id: String,
    pub redirect_uri: String,
    pub code_challenge: CodeChallenge,
    /// The `resource` given at authorize, verbatim; `None` for universal.
    pub resource: Option<String>,
}

/// The bearer key minted at consent: revoked if the code is replayed or burnt.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyGrant {
    pub key_id: String,
    pub owner_id: String,
}

/// A token request's fields, as sent.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeExchange<'a> {
    pub code: &'a str,
    pub client_id: &'a str,
    pub redirect_uri: &'a str,
    pub code_verifier: &'a str,
    pub resource: Option<&'a str>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    #[error("the authorization code was already used")]
    Replayed,
    #[error("the authorization code expired")]
    Expired,
    #[error("the authorization code was issued to another client")]
    ClientMismatch,
    #[error("redirect_uri does not match the authorization request")]
    RedirectUriMismatch,
    #[error("code_verifier does not match the code challenge")]
    VerifierMismatch,
    #[error("resource does not match the authorization request")]
    ResourceMismatch,
    #[error("the authorization code does not open its token")]
    Unsealable,
}

impl CodeError {
    /// The RFC 6749 / RFC 8707 error code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::ResourceMismatch => "invalid_target",
            _ => "invalid_grant",
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AuthorizationCode {
    pub code_hash: String,
    pub binding: CodeBinding,
    pub key: KeyGrant,
    pub sealed_token: String,
    pub issued_at: DateTime<Utc>,
    pub expires_at: DateTime<Utc>,
    pub consumed_at: Option<DateTime<Utc>>,
}

impl AuthorizationCode {
    /// (none) -> issued. `code` is the fresh random plaintext handed to the client once.
    pub fn issue(
        code: &str,
        binding: CodeBinding,
        key: KeyGrant,
        access_token: &str,
        now: DateTime<Utc>,
        lifetime: TimeDelta,
    ) -> Self {
        Self {
            code_hash: hash_code(code),
            binding,
            key,
            sealed_token: seal(code, access_token),
            issued_at: now,
            expires_at: now + lifetime,
            consumed_at: None,
        }
    }

    /// issued -> consumed; consumed -> `Replayed`. Every redemption attempt consumes the code,
    /// whatever its outcome, so a code is tried once.
    pub fn consume(&self, now: DateTime<Utc>) -> Result<AuthorizationCode, CodeError> {
        if self.consumed_at.is_some() {
            return Err(CodeError::Replayed);
        }
        Ok(Self {
            consumed_at: Some(now),
            ..self.clone()
        })
    }

    /// Checks a token request against what the code is bound to and opens the access token.
    pub fn exchange(
        &self,
        request: &CodeExchange<'_>,
        issuer: &Issuer,
        now: DateTime<Utc>,
    ) -> Result<String, CodeError> {
        if now >= self.expires_at {
            return Err(CodeError::Expired);
        }
        if request.client_id != self.binding.client_id {
            return Err(CodeError::ClientMismatch);
        }
        if request.redirect_uri != self.binding.redirect_uri {
            return Err(CodeError::RedirectUriMismatch);
        }
        if !self.binding.code_challenge.is_satisfied_by(request.code_verifier) {
            return Err(CodeError::VerifierMismatch);
        }
        if !resource_matches(issuer, self.binding.resource.as_deref(), request.resource) {
            return Err(CodeError::ResourceMismatch);
        }
        if hash_code(request.code) != self.code_hash {
            return Err(CodeError::Unsealable);
        }
        unseal(request.code, &self.sealed_token).ok_or(CodeError::Unsealable)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
    const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
    const CODE: &str = "c0d3c0d3c0d3c0d3c0d3c0d3c0d3c0d3c0d3c0d3c0d";
    const TOKEN: &str = "svc_user_0123456789abcdefghijABCDEFGHIJ0123456789";
    const MCP: &str = "http://127.0.0.1:6781/mcp";

    fn now() -> DateTime<Utc> {
        DateTime::parse_from_rfc3339("2026-11-25T10:00:00Z").unwrap().to_utc()
    }

    fn issued() -> AuthorizationCode {
        let binding = CodeBinding {
            client_id: "client-1".into(),
            redirect_uri: "http://127.0.0.1:5000/cb".into(),
            code_challenge: CodeChallenge::parse(Some(CHALLENGE), Some("S256")).unwrap(),
            resource: Some(MCP.into()),
        };
        let key = KeyGrant {
            key_id: "key-1".into(),
            owner_id: "owner".into(),
        };
        AuthorizationCode::issue(
            CODE,
            binding,
            key,
            TOKEN,
            now(),
            TimeDelta::seconds(CODE_LIFETIME_SECONDS),
        )
    }

    fn request() -> CodeExchange<'static> {
        CodeExchange {
            code: CODE,
            client_id: "client-1",
            redirect_uri: "http://127.0.0.1:5000/cb",
            code_verifier: VERIFIER,
            resource: Some(MCP),
        }
    }

    #[test]
    fn the_token_is_stored_sealed_and_opens_with_the_code() {
        let code = issued();
        assert_eq!(code.code_hash, hash_code(CODE));
        assert!(!code.sealed_token.contains(&hex::encode(TOKEN)));
        assert_eq!(code.expires_at, now() + TimeDelta::minutes(5));
        let issuer = Issuer::parse("http://127.0.0.1:6781").unwrap();
        assert_eq!(code.exchange(&request(), &issuer, now()), Ok(TOKEN.to_owned()));
    }

    #[test]
    fn a_tampered_seal_does_not_open() {
        let issuer = Issuer::parse("http://127.0.0.1:6781").unwrap();
        let mut code = issued();
        let mut bytes = hex::decode(&code.sealed_token).unwrap();
        // One flipped low bit in the first byte: a plain XOR seal would open to another token.
        bytes[0] ^= 0x01;
        code.sealed_token = hex::encode(bytes);
        assert_eq!(code.exchange(&request(), &issuer, now()), Err(CodeError::Unsealable));
    }

    #[test]
    fn a_code_is_consumed_once() {
        let consumed = issued().consume(now()).unwrap();
        assert_eq!(consumed.consumed_at, Some(now()));
        assert_eq!(consumed.consume(now()), Err(CodeError::Replayed));
    }

    #[test]
    fn exchange_checks_every_binding() {
        let issuer = Issuer::parse("http://127.0.0.1:6781").unwrap();
        let later = |s| now() + TimeDelta::seconds(s);
        let wrong_verifier = "x".repeat(43);
        let rows = [
            (request(), later(299), Ok(TOKEN.to_owned())),
            (request(), later(300), Err(CodeError::Expired)),
            (
                CodeExchange {
                    client_id: "client-2",
                    ..request()
                },
                now(),
                Err(CodeError::ClientMismatch),
            ),
            (
                CodeExchange {
                    redirect_uri: "http://127.0.0.1:5000/cb/",
                    ..request()
                },
                now(),
                Err(CodeError::RedirectUriMismatch),
            ),
            (
                CodeExchange {
                    code_verifier: "",
                    ..request()
                },
                now(),
                Err(CodeError::VerifierMismatch),
            ),
            (
                CodeExchange {
                    code_verifier: CHALLENGE,
                    ..request()
                },
                now(),
                Err(CodeError::VerifierMismatch),
            ),
            (
                CodeExchange {
                    code_verifier: &wrong_verifier,
                    ..request()
                },
                now(),
                Err(CodeError::VerifierMismatch),
            ),
            (
                CodeExchange {
                    resource: Some("http://127.0.0.1:6781/apps/A1"),
                    ..request()
                },
                now(),
                Err(CodeError::ResourceMismatch),
            ),
            (
                CodeExchange {
                    resource: None,
                    ..request()
                },
                now(),
                Ok(TOKEN.to_owned()),
            ),
            (
                CodeExchange {
                    code: "another-code",
                    ..request()
                },
                now(),
                Err(CodeError::Unsealable),
            ),
        ];
        for (request, at, expected) in rows {
            assert_eq!(issued().exchange(&request, &issuer, at), expected, "{request:?}");
        }
        assert_eq!(CodeError::ResourceMismatch.code(), "invalid_target");
        assert_eq!(CodeError::Replayed.code(), "invalid_grant");
    }
}
