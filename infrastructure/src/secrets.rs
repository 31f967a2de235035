//! The wsToken signing secrets. Configured ones must be strong (at least 32 bytes, not a
//! placeholder from an example config). With none configured, one is generated once and kept: in
//! the database on PostgreSQL and MariaDB, so every replica signs alike; in `<data_dir>/ws_secret` (mode 0600)
//! on SQLite. Either way a restart keeps every live card's reconnect token valid.

use std::path::Path;

use rand::RngCore;
use sea_orm::{DatabaseConnection, DbBackend};

use crate::settings::Settings;

/// The shortest secret accepted: 256 bits.
pub const MIN_SECRET_BYTES: usize = 32;

/// Pieces of the example configs' placeholders and of the usual stand-ins for a real secret.
const PLACEHOLDER_MARKERS: &[&str] = &[
    "change-me",
    "changeme",
    "change_me",
    "set-with",
    "placeholder",
    "example",
    "replace-me",
    "your-secret",
];

/// A secret made of fewer distinct bytes than this is a stand-in (`aaaa…`, `0000…`).
const MIN_DISTINCT_BYTES: usize = 8;

/// The name of the generated secret, as a file in the data directory and a database row.
const KEPT_NAME: &str = "ws_secret";

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SecretError {
    #[error("{setting} is {len} bytes; use at least {MIN_SECRET_BYTES} random bytes (`openssl rand -hex 32`)")]
    TooShort { setting: String, len: usize },
    #[error("{setting} is a placeholder, not a secret; set your own (`openssl rand -hex 32`)")]
    Placeholder { setting: String },
    #[error("cannot keep the generated ws_secret in {place}: {reason}")]
    Keep { place: String, reason: String },
}

/// Refuses a short or placeholder secret; `setting` names it in the message.
pub fn check_secret(setting: &str, secret: &str) -> Result<(), SecretError> {
    if secret.len() < MIN_SECRET_BYTES {
        return Err(SecretError::TooShort {
            setting: setting.to_owned(),
            len: secret.len(),
        });
    }
    let lower = secret.to_lowercase();
    let distinct = secret.bytes().collect::<std::collections::BTreeSet<u8>>().len();
    if PLACEHOLDER_MARKERS.iter().any(|m| lower.contains(m)) || distinct < MIN_DISTINCT_BYTES {
        return Err(SecretError::Placeholder {
            setting: setting.to_owned(),
        });
    }
    Ok(())
}

/// The configured secrets, checked; empty when none is configured.
pub fn configured_ws_secrets(settings: &Settings) -> Result<Vec<Vec<u8>>, SecretError> {
    let secrets = settings.server.ws_secret.secrets();
    let many = secrets.len() > 1;
    secrets
        .iter()
        .enumerate()
        .map(|(i, secret)| {
            let setting = if many {
                format!("server.ws_secret[{i}]")
            } else {
                "server.ws_secret".to_owned()
            };
            check_secret(&setting, secret).map(|()| secret.as_bytes().to_vec())
        })
        .collect()
}

/// The signing secrets, first signs and all verify: the configured ones, else the kept one.
pub async fn ws_signing_secrets(settings: &Settings, db: &DatabaseConnection) -> Result<Vec<Vec<u8>>, SecretError> {
    let configured = configured_ws_secrets(settings)?;
    if !configured.is_empty() {
        return Ok(configured);
    }
    // A server database is shared by replicas; a SQLite file belongs to one server.
    let kept = if db.get_database_backend() != DbBackend::Sqlite {
        svc_sql::server_secrets::keep_first(db, KEPT_NAME, &fresh_secret(), chrono::Utc::now())
            .await
            .map_err(|e| SecretError::Keep {
                place: "the database".into(),
                reason: e.to_string(),
            })?
    } else {
        kept_in_file(&settings.server.data_dir.join(KEPT_NAME))?
    };
    Ok(vec![kept.into_bytes()])
}

/// 32 random bytes, hex.
fn fresh_secret() -> String {
    let mut bytes = [0u8; MIN_SECRET_BYTES];
    rand::rng().fill_bytes(&mut bytes);
    hex::encode(bytes)
}

/// Reads the secret kept at `path`, creating it (mode 0600, whole or not at all) on first use.
fn kept_in_file(path: &Path) -> Result<String, SecretError> {
    let failed = |e: std::io::Error| SecretError::Keep {
        place: path.display().to_string(),
        reason: e.to_string(),
    };
    let fresh = fresh_secret();
    if crate::private_files::publish_private_once(path, fresh.as_bytes()).map_err(failed)? {
        return Ok(fresh);
    }
    let secret = std::fs::read_to_string(path).map_err(failed)?.trim().to_owned();
    check_secret(&path.display().to_string(), &secret)?;
    Ok(secret)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn short_and_placeholder_secrets_are_refused() {
        let rows = [
            ("svc-tests-shared-secret", Err("is 23 bytes")),
            ("set-with-SVC_SERVER__WS_SECRET", Err("is 30 bytes")),
            ("change-me-to-64-random-hex-characters", Err("placeholder")),
            ("an-example-secret-that-is-long-enough-to-pass", Err("placeholder")),
            ("aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", Err("placeholder")),
            ("3f0c9a7d51be4e2a8c6d0b9f17e5a2c4d8b6f0e1", Ok(())),
        ];
        for (secret, expected) in rows {
            match (check_secret("server.ws_secret", secret), expected) {
                (Ok(()), Ok(())) => {}
                (Err(e), Err(part)) => assert!(e.to_string().contains(part), "{secret}: {e}"),
                (got, want) => panic!("{secret}: got {got:?}, want {want:?}"),
            }
        }
    }

    #[test]
    fn the_generated_secret_is_kept_in_a_private_file_and_read_back() {
        let dir = std::env::temp_dir().join(format!("svc-secret-{}", uuid::Uuid::new_v4().simple()));
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(KEPT_NAME);
        let first = kept_in_file(&path).unwrap();
        assert_eq!(first.len(), 64);
        assert_eq!(kept_in_file(&path).unwrap(), first, "a restart reads the same secret");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o600);
        }
        std::fs::remove_dir_all(dir).ok();
    }
}
