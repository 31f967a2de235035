//! Publisher tokens and author keys.

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use svc_domain::artifact::{ArtifactScope, token_sha256};

use super::{RegistryError, RegistryService};
use crate::ports::registry::{AuthorKey, KeyRegistration, Publisher};

/// Plaintext registry tokens: this prefix and 40 base62 characters.
pub const TOKEN_PREFIX: &str = "svcreg_";

impl RegistryService {
    /// `None` without a bearer; an unknown token is `Unauthorized`, never anonymous.
    pub async fn authenticate(&self, bearer: Option<&str>) -> Result<Option<Publisher>, RegistryError> {
        let Some(token) = bearer else { return Ok(None) };
        match self.ports.tokens.find(&token_sha256(token)).await? {
            Some(publisher) => Ok(Some(publisher)),
            None => Err(RegistryError::Unauthorized),
        }
    }

    /// Mints a token on the registry host; the plaintext is returned once and never stored.
    pub async fn mint_token(&self, publisher: &str, admin: bool) -> Result<String, RegistryError> {
        ArtifactScope::of_publisher(publisher).map_err(|_| {
            RegistryError::InvalidRequest(format!(
                "invalid publisher name {publisher:?}: 1-64 of a-z 0-9 - _ . starting with a letter or digit"
            ))
        })?;
        let token = format!("{TOKEN_PREFIX}{}", self.ports.ids.base62(40));
        let publisher = Publisher {
            name: publisher.to_owned(),
            admin,
        };
        self.ports
            .tokens
            .insert(&token_sha256(&token), &publisher, self.ports.clock.now())
            .await?;
        Ok(token)
    }

    /// `(key, created)`; the same key registered again by its publisher is not created twice.
    pub async fn register_author_key(
        &self,
        publisher: &Publisher,
        public_key_base64: &str,
    ) -> Result<(AuthorKey, bool), RegistryError> {
        let public_key = decode_public_key(public_key_base64)?;
        let key = AuthorKey {
            public_key_id: self.ports.ed25519.public_key_id(&public_key),
            public_key: STANDARD.encode(public_key),
            publisher: publisher.name.clone(),
            created_at: self.ports.clock.now(),
        };
        match self.ports.author_keys.register(&key).await? {
            KeyRegistration::Created(key) => Ok((key, true)),
            KeyRegistration::Existing(key) => Ok((key, false)),
            KeyRegistration::OwnedByAnother => Err(RegistryError::KeyExists),
        }
    }

    pub async fn author_key(&self, public_key_id: &str) -> Result<AuthorKey, RegistryError> {
        self.ports
            .author_keys
            .get(public_key_id)
            .await?
            .ok_or_else(|| RegistryError::NotFound(format!("no author key {public_key_id:?}")))
    }
}

/// A raw 32-byte Ed25519 public key in standard base64.
pub(super) fn decode_public_key(encoded: &str) -> Result<[u8; 32], RegistryError> {
    STANDARD
        .decode(encoded)
        .ok()
        .and_then(|bytes| <[u8; 32]>::try_from(bytes).ok())
        .ok_or_else(|| {
            RegistryError::InvalidRequest("`publicKey` must be the base64 of a raw 32-byte Ed25519 public key".into())
        })
}

/// Publishing into a scope needs its owner or an admin.
pub(super) fn require_owner(publisher: &Publisher, scope: &ArtifactScope) -> Result<(), RegistryError> {
    if publisher.admin || publisher.name == scope.publisher() {
        Ok(())
    } else {
        Err(RegistryError::Forbidden(format!(
            "publisher `{}` does not own the scope `{}`",
            publisher.name,
            scope.as_str()
        )))
    }
}
