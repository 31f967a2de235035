//! Provider keys of a hosted deployment (Document 3, "Provider keys"): a user's or an org's own
//! API key for one of the four language-model providers of the model registry.
//!
//! A key is stored sealed: ChaCha20-Poly1305 under a key derived with HKDF-SHA256 from the
//! deployment's master key and a fresh per-seal salt, the same construction the OAuth codes use
//! (`crate::oauth::code`). One derived key seals one value, so a fixed nonce is safe and the
//! domain needs no randomness: the caller passes the salt in. The associated data binds the
//! ciphertext to its owner and provider, so a row copied onto another owner does not open. Every
//! sealed value names the master key that sealed it (`key_id`), so the master key can rotate:
//! the keyring opens with any of its keys and seals with the first.

use chacha20poly1305::aead::{Aead, Payload};
use chacha20poly1305::{ChaCha20Poly1305, KeyInit};
use hkdf::Hkdf;
use sha2::Sha256;

use crate::wallet::Principal;

/// The four providers of the built-in model registry (`crate::model_route::KNOWN_MODEL_ROUTES`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Provider {
    OpenAi,
    Anthropic,
    Google,
    Mistral,
}

impl Provider {
    pub const ALL: [Self; 4] = [Self::OpenAi, Self::Anthropic, Self::Google, Self::Mistral];

    /// The wire name, which is also the route prefix (`openai` in `openai:gpt-4o`).
    pub fn as_str(self) -> &'static str {
        match self {
            Self::OpenAi => "openai",
            Self::Anthropic => "anthropic",
            Self::Google => "google",
            Self::Mistral => "mistral",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|p| p.as_str() == value)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ProviderKeyError {
    #[error("plaintextKey must not be empty")]
    EmptyKey,
    #[error("label must be 1 to {LABEL_MAX_CHARS} characters")]
    InvalidLabel,
    #[error("no provider key is stored for this provider")]
    NotFound,
    #[error("the stored key was sealed under master key `{0}`, which the configured keyring does not hold")]
    UnknownMasterKey(String),
    #[error("the stored key does not open under its master key (tampered, or moved to another owner)")]
    Unsealable,
}

impl ProviderKeyError {
    pub fn code(&self) -> &'static str {
        match self {
            Self::EmptyKey => "invalid_provider_key",
            Self::InvalidLabel => "invalid_label",
            Self::NotFound => "provider_key_not_found",
            Self::UnknownMasterKey(_) | Self::Unsealable => "provider_key_unsealable",
        }
    }
}

pub const LABEL_MAX_CHARS: usize = 120;

/// A provider key as the caller gave it: at least one character once trimmed. Its `Debug` never
/// shows it.
#[derive(Clone, PartialEq, Eq)]
pub struct ProviderSecret(String);

impl ProviderSecret {
    pub fn parse(raw: &str) -> Result<Self, ProviderKeyError> {
        let trimmed = raw.trim();
        if trimmed.is_empty() {
            return Err(ProviderKeyError::EmptyKey);
        }
        Ok(Self(trimmed.to_owned()))
    }

    pub fn expose(&self) -> &str {
        &self.0
    }

    /// The last four characters, the only part ever shown back (fewer for a shorter key).
    pub fn last_four(&self) -> String {
        let chars: Vec<char> = self.0.chars().collect();
        chars[chars.len().saturating_sub(4)..].iter().collect()
    }
}

impl std::fmt::Debug for ProviderSecret {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("ProviderSecret(<redacted>)")
    }
}

/// An optional label: trimmed, 1 to 120 characters; blank means none.
pub fn checked_label(label: Option<&str>) -> Result<Option<String>, ProviderKeyError> {
    match label.map(str::trim) {
        None | Some("") => Ok(None),
        Some(l) if l.chars().count() <= LABEL_MAX_CHARS => Ok(Some(l.to_owned())),
        Some(_) => Err(ProviderKeyError::InvalidLabel),
    }
}

/// One master key: an id stored beside every ciphertext, and 32 bytes of key material.
#[derive(Clone)]
pub struct MasterKey {
    pub id: String,
    bytes: [u8; 32],
}

impl MasterKey {
    pub fn new(id: impl Into<String>, bytes: [u8; 32]) -> Self {
        Self { id: id.into(), bytes }
    }
}

impl std::fmt::Debug for MasterKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "MasterKey({})", self.id)
    }
}

/// The master keys of a deployment: the first seals, every one opens.
#[derive(Debug, Clone)]
pub struct Keyring {
    keys: Vec<MasterKey>,
}

/// A sealed provider key as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SealedSecret {
    pub key_id: String,
    /// The per-seal HKDF salt (hex in storage).
    pub salt: Vec<u8>,
    pub ciphertext: Vec<u8>,
}

const SEAL_CONTEXT: &[u8] = b"svc provider key seal v1";
/// One derived key seals one value, so one nonce serves.
const SEAL_NONCE: [u8; 12] = [0; 12];

impl Keyring {
    /// `None` when `keys` is empty or two keys share an id.
    pub fn new(keys: Vec<MasterKey>) -> Option<Self> {
        let mut ids: Vec<&str> = keys.iter().map(|k| k.id.as_str()).collect();
        ids.sort_unstable();
        ids.dedup();
        (!keys.is_empty() && ids.len() == keys.len()).then_some(Self { keys })
    }

    /// The id new seals are made under.
    pub fn current_id(&self) -> &str {
        &self.keys[0].id
    }

    /// Seals `secret` for `owner`'s `provider` key under the current master key; `salt` must be
    /// fresh for every seal (the caller draws it).
    pub fn seal(&self, owner: &Principal, provider: Provider, secret: &ProviderSecret, salt: &[u8]) -> SealedSecret {
        let key = &self.keys[0];
        let aad = associated_data(owner, provider);
        let sealed = cipher(key, salt)
            .encrypt(
                &SEAL_NONCE.into(),
                Payload {
                    msg: secret.expose().as_bytes(),
                    aad: &aad,
                },
            )
            .expect("ChaCha20-Poly1305 seals any key length");
        SealedSecret {
            key_id: key.id.clone(),
            salt: salt.to_vec(),
            ciphertext: sealed,
        }
    }

    /// Opens a sealed key of `owner`'s `provider`.
    pub fn open(
        &self,
        owner: &Principal,
        provider: Provider,
        sealed: &SealedSecret,
    ) -> Result<ProviderSecret, ProviderKeyError> {
        let key = self
            .keys
            .iter()
            .find(|k| k.id == sealed.key_id)
            .ok_or_else(|| ProviderKeyError::UnknownMasterKey(sealed.key_id.clone()))?;
        let aad = associated_data(owner, provider);
        let opened = cipher(key, &sealed.salt)
            .decrypt(
                &SEAL_NONCE.into(),
                Payload {
                    msg: &sealed.ciphertext,
                    aad: &aad,
                },
            )
            .map_err(|_| ProviderKeyError::Unsealable)?;
        let text = String::from_utf8(opened).map_err(|_| ProviderKeyError::Unsealable)?;
        ProviderSecret::parse(&text).map_err(|_| ProviderKeyError::Unsealable)
    }

    /// Whether `sealed` needs re-sealing under the current master key.
    pub fn is_stale(&self, sealed: &SealedSecret) -> bool {
        sealed.key_id != self.current_id()
    }
}

fn cipher(key: &MasterKey, salt: &[u8]) -> ChaCha20Poly1305 {
    let mut derived = [0u8; 32];
    Hkdf::<Sha256>::new(Some(salt), &key.bytes)
        .expand(SEAL_CONTEXT, &mut derived)
        .expect("32 bytes is a valid HKDF-SHA256 output length");
    ChaCha20Poly1305::new(&derived.into())
}

fn associated_data(owner: &Principal, provider: Provider) -> Vec<u8> {
    format!(
        "{}|{}:{}|{}",
        String::from_utf8_lossy(SEAL_CONTEXT),
        owner.principal_type.as_str(),
        owner.principal_id,
        provider.as_str()
    )
    .into_bytes()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ring(ids: &[(&str, u8)]) -> Keyring {
        Keyring::new(ids.iter().map(|(id, b)| MasterKey::new(*id, [*b; 32])).collect()).unwrap()
    }

    fn secret(s: &str) -> ProviderSecret {
        ProviderSecret::parse(s).unwrap()
    }

    #[test]
    fn a_sealed_key_opens_for_its_owner_and_provider_only() {
        let keys = ring(&[("k1", 1)]);
        let alice = Principal::user("alice");
        let sealed = keys.seal(&alice, Provider::OpenAi, &secret("sk-abc123"), b"salt-1");
        assert_eq!(sealed.key_id, "k1");
        assert!(!sealed.ciphertext.windows(9).any(|w| w == b"sk-abc123"));
        assert_eq!(
            keys.open(&alice, Provider::OpenAi, &sealed).unwrap().expose(),
            "sk-abc123"
        );
        let rows = [
            (Principal::user("bob"), Provider::OpenAi),
            (Principal::org("alice"), Provider::OpenAi),
            (alice.clone(), Provider::Anthropic),
        ];
        for (owner, provider) in rows {
            assert_eq!(
                keys.open(&owner, provider, &sealed),
                Err(ProviderKeyError::Unsealable),
                "{owner:?} {provider:?}"
            );
        }
        let mut tampered = sealed.clone();
        tampered.ciphertext[0] ^= 1;
        assert_eq!(
            keys.open(&alice, Provider::OpenAi, &tampered),
            Err(ProviderKeyError::Unsealable)
        );
    }

    #[test]
    fn two_seals_of_one_key_differ_by_salt() {
        let keys = ring(&[("k1", 1)]);
        let owner = Principal::user("u");
        let a = keys.seal(&owner, Provider::Google, &secret("g-key"), b"salt-a");
        let b = keys.seal(&owner, Provider::Google, &secret("g-key"), b"salt-b");
        assert_ne!(a.ciphertext, b.ciphertext);
    }

    #[test]
    fn rotation_opens_old_seals_and_seals_under_the_new_key() {
        let old = ring(&[("k1", 1)]);
        let owner = Principal::user("u");
        let sealed = old.seal(&owner, Provider::Mistral, &secret("m-key"), b"s");
        let rotated = ring(&[("k2", 2), ("k1", 1)]);
        assert!(rotated.is_stale(&sealed));
        let opened = rotated.open(&owner, Provider::Mistral, &sealed).unwrap();
        let resealed = rotated.seal(&owner, Provider::Mistral, &opened, b"s2");
        assert_eq!(resealed.key_id, "k2");
        assert!(!rotated.is_stale(&resealed));
        let only_new = ring(&[("k2", 2)]);
        assert_eq!(
            only_new.open(&owner, Provider::Mistral, &sealed),
            Err(ProviderKeyError::UnknownMasterKey("k1".into()))
        );
        assert!(Keyring::new(vec![]).is_none());
        assert!(Keyring::new(vec![MasterKey::new("a", [0; 32]), MasterKey::new("a", [1; 32])]).is_none());
    }

    #[test]
    fn secrets_are_trimmed_summarised_by_last_four_and_never_debug_printed() {
        assert_eq!(ProviderSecret::parse("  "), Err(ProviderKeyError::EmptyKey));
        assert_eq!(ProviderSecret::parse(""), Err(ProviderKeyError::EmptyKey));
        assert_eq!(secret(" sk-1234wxyz ").last_four(), "wxyz");
        assert_eq!(secret("ab").last_four(), "ab");
        assert!(!format!("{:?}", secret("sk-hidden")).contains("hidden"));
        assert_eq!(checked_label(Some("  ")), Ok(None));
        assert_eq!(checked_label(Some(" work ")), Ok(Some("work".into())));
        assert_eq!(
            checked_label(Some(&"x".repeat(121))),
            Err(ProviderKeyError::InvalidLabel)
        );
    }

    #[test]
    fn provider_names_round_trip() {
        for p in Provider::ALL {
            assert_eq!(Provider::parse(p.as_str()), Some(p));
        }
        assert_eq!(Provider::parse("ollama"), None);
        let registry_providers: std::collections::BTreeSet<&str> = crate::model_route::KNOWN_MODEL_ROUTES
            .iter()
            .map(|r| r.split_once(':').unwrap().0)
            .collect();
        let ours: std::collections::BTreeSet<&str> = Provider::ALL.iter().map(|p| p.as_str()).collect();
        assert_eq!(registry_providers, ours, "the four providers of the model registry");
    }
}
