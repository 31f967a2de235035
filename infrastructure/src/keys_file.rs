//! The keys file (`<data_dir>/keys.json`): bearer keys minted locally by `svc keys mint`. Only a
//! sha256 hash and a short prefix are stored; the plaintext is printed once.

use std::path::{Path, PathBuf};

use base64::Engine;
use chrono::{DateTime, Utc};
use rand::RngCore;
use serde::{Deserialize, Serialize};
use svc_application::ports::RepositoryError;
use svc_application::ports::auth::{KeyOwner, KeyStore};
use svc_domain::contract::sha256_hex;

/// The principal that keys-file keys act for: the server's local operator.
pub const LOCAL_OPERATOR: &str = "owner";

/// Prefix of every minted secret.
pub const KEY_PREFIX: &str = "svc_user_";

/// Characters after the prefix: 32 random bytes in unpadded base64url.
pub const SECRET_CHARS: usize = 43;

/// Characters of the secret kept in the file to recognise a key.
const SHOWN_PREFIX_LEN: usize = 12;

#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
#[serde(rename_all = "camelCase")]
pub struct KeyEntry {
    pub id: String,
    pub name: Option<String>,
    pub api_key_prefix: String,
    pub sha256: String,
    pub created_at: DateTime<Utc>,
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct KeysDocument {
    keys: Vec<KeyEntry>,
}

#[derive(Debug, Clone)]
pub struct KeysFile {
    path: PathBuf,
}

impl KeysFile {
    pub fn in_data_dir(data_dir: &Path) -> Self {
        Self {
            path: data_dir.join("keys.json"),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> std::io::Result<KeysDocument> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(std::io::Error::other),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(KeysDocument::default()),
            Err(e) => Err(e),
        }
    }

    /// Mints a key, appends it atomically (write to a temp file, then rename) and returns the plaintext.
    pub fn mint(&self, name: Option<String>, now: DateTime<Utc>) -> std::io::Result<(KeyEntry, String)> {
        let mut secret = [0u8; 32];
        rand::rng().fill_bytes(&mut secret);
        let plaintext = format!(
            "{KEY_PREFIX}{}",
            base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(secret)
        );
        let entry = KeyEntry {
            id: uuid::Uuid::new_v4().to_string(),
            name,
            api_key_prefix: plaintext.chars().take(SHOWN_PREFIX_LEN).collect(),
            sha256: sha256_hex(plaintext.as_bytes()),
            created_at: now,
        };
        let mut doc = self.read()?;
        doc.keys.push(entry.clone());
        self.write(&doc)?;
        Ok((entry, plaintext))
    }

    /// Every key in the file, oldest first.
    pub fn list(&self) -> std::io::Result<Vec<KeyEntry>> {
        Ok(self.read()?.keys)
    }

    /// Removes the key whose id is `id_or_prefix`, or the one key whose shown prefix starts with
    /// it; answers the removed entry. A running server watches the file, so it stops at once.
    pub fn revoke(&self, id_or_prefix: &str) -> Result<KeyEntry, RevokeError> {
        let mut doc = self.read()?;
        let matches: Vec<usize> = (0..doc.keys.len())
            .filter(|&i| {
                let k = &doc.keys[i];
                k.id == id_or_prefix
                    || (id_or_prefix.len() >= KEY_PREFIX.len() + 2 && k.api_key_prefix.starts_with(id_or_prefix))
            })
            .collect();
        let index = match matches[..] {
            [one] => one,
            [] => return Err(RevokeError::NotFound),
            _ => return Err(RevokeError::Ambiguous),
        };
        let removed = doc.keys.remove(index);
        self.write(&doc)?;
        Ok(removed)
    }

    /// Replaces the file atomically (a temporary file, then a rename).
    fn write(&self, doc: &KeysDocument) -> std::io::Result<()> {
        if let Some(dir) = self.path.parent() {
            crate::private_files::create_private_dir(dir)?;
        }
        let tmp = self.path.with_extension("json.tmp");
        // 0600 before any byte is written: the file lists every key's hash.
        let bytes = serde_json::to_vec_pretty(doc).map_err(std::io::Error::other)?;
        crate::private_files::write_private(&tmp, &bytes)?;
        std::fs::rename(&tmp, &self.path)
    }
}

#[derive(Debug, thiserror::Error)]
pub enum RevokeError {
    #[error("no key has that id or prefix")]
    NotFound,
    #[error("more than one key has that prefix; give the id")]
    Ambiguous,
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

#[async_trait::async_trait]
impl KeyStore for KeysFile {
    /// Re-reads the file on each lookup so keys minted while the server runs work at once.
    async fn find(&self, bearer: &str) -> Result<Option<KeyOwner>, RepositoryError> {
        let hash = sha256_hex(bearer.as_bytes());
        let doc = self.read().map_err(|e| RepositoryError::Unavailable(e.into()))?;
        Ok(doc.keys.into_iter().find(|k| k.sha256 == hash).map(|k| KeyOwner {
            key_id: k.id,
            principal_id: LOCAL_OPERATOR.to_owned(),
            app_id: None,
        }))
    }

    /// A key stays live while its entry is in the file; removing the entry revokes it.
    async fn is_live(&self, key_id: &str) -> Result<Option<bool>, RepositoryError> {
        let doc = self.read().map_err(|e| RepositoryError::Unavailable(e.into()))?;
        Ok(doc.keys.iter().any(|k| k.id == key_id).then_some(true))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_minted_key_is_found_by_its_hash_and_the_file_holds_no_plaintext() {
        let dir = std::env::temp_dir().join(format!("svc-keys-{}", uuid::Uuid::new_v4()));
        let file = KeysFile::in_data_dir(&dir);
        let (entry, plaintext) = file.mint(Some("laptop".into()), Utc::now()).unwrap();
        assert!(plaintext.starts_with(KEY_PREFIX));
        assert_eq!(plaintext.len(), KEY_PREFIX.len() + SECRET_CHARS);
        let stored = std::fs::read_to_string(file.path()).unwrap();
        assert!(!stored.contains(&plaintext));
        let owner = file.find(&plaintext).await.unwrap().unwrap();
        assert_eq!(owner.key_id, entry.id);
        assert!(file.find("svc_user_wrong").await.unwrap().is_none());
        std::fs::remove_dir_all(dir).ok();
    }

    #[tokio::test]
    async fn a_revoked_key_is_gone_from_the_list_and_no_longer_found() {
        let dir = std::env::temp_dir().join(format!("svc-keys-{}", uuid::Uuid::new_v4()));
        let file = KeysFile::in_data_dir(&dir);
        let (first, first_plain) = file.mint(Some("a".into()), Utc::now()).unwrap();
        let (second, second_plain) = file.mint(Some("b".into()), Utc::now()).unwrap();
        assert_eq!(file.list().unwrap(), vec![first.clone(), second.clone()]);
        assert!(matches!(file.revoke("nope"), Err(RevokeError::NotFound)));
        assert!(
            matches!(file.revoke("svc_"), Err(RevokeError::NotFound)),
            "too short to be a prefix"
        );
        assert_eq!(file.revoke(&first.id).unwrap(), first);
        assert!(file.find(&first_plain).await.unwrap().is_none());
        assert_eq!(
            file.revoke(&second.api_key_prefix).unwrap(),
            second,
            "by its shown prefix"
        );
        assert!(file.find(&second_plain).await.unwrap().is_none());
        assert!(file.list().unwrap().is_empty());
        std::fs::remove_dir_all(dir).ok();
    }
}
