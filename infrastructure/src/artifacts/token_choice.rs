//! Which token a command sends (docs/registry-cli.md, "Credentials"): an explicit one (`--token`,
//! then `SVC_REGISTRY_TOKEN`), else the one `svc login` stored for that registry.
//!
//! An explicit token goes only to a registry the user named for this command (`--registry` or
//! `SVC_REGISTRY_URL`). A registry chosen by `svc.json#registry` is the project's choice: a cloned
//! third-party project would otherwise receive the token the user keeps for their own registry.
//! Nor does it go to the built-in default, which the user did not pick either. Stored tokens are
//! bound to their registry's URL already.

use super::credentials::{CredentialError, CredentialStore, REGISTRY_TOKEN_ENV};
use super::registry_url::REGISTRY_URL_ENV;

/// The flag that carries an explicit token.
pub const TOKEN_FLAG: &str = "--token";

/// A command's explicit tokens, each `None` when absent.
#[derive(Debug, Clone, Copy, Default)]
pub struct ExplicitToken<'a> {
    pub flag: Option<&'a str>,
    pub env: Option<&'a str>,
}

impl ExplicitToken<'_> {
    /// The token and where it came from: the flag first. An empty value counts as absent.
    pub fn first(&self) -> Option<(&'static str, String)> {
        let present = |v: Option<&str>| v.map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
        present(self.flag)
            .map(|token| (TOKEN_FLAG, token))
            .or_else(|| present(self.env).map(|token| (REGISTRY_TOKEN_ENV, token)))
    }
}

/// The token a command sends, and the explicit one it held back.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ChosenToken {
    pub token: Option<String>,
    /// Where the explicit token that was not sent came from (`--token` or `SVC_REGISTRY_TOKEN`).
    pub withheld: Option<&'static str>,
}

/// The token for `registry`: the explicit one when the user named `registry`, else the stored one.
pub fn resolve_token(
    explicit: ExplicitToken<'_>,
    store: &CredentialStore,
    registry: &str,
    named_by_user: bool,
) -> Result<ChosenToken, CredentialError> {
    match explicit.first() {
        Some((_, token)) if named_by_user => Ok(ChosenToken {
            token: Some(token),
            withheld: None,
        }),
        explicit => Ok(ChosenToken {
            token: store.get(registry)?.map(|stored| stored.token),
            withheld: explicit.map(|(source, _)| source),
        }),
    }
}

/// Why an explicit token from `source` was not sent to `registry`, and how to send it.
pub fn withheld_reason(source: &str, registry: &str) -> String {
    format!(
        "{source} is sent only to a registry named by --registry or {REGISTRY_URL_ENV}, not to {registry}, \
         which svc.json (or the default) chose; pass --registry {registry} to send it there"
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::artifacts::credentials::StoredToken;

    fn store_with(registry: &str, token: &str) -> (tempfile::TempDir, CredentialStore) {
        let dir = tempfile::tempdir().unwrap();
        let store = CredentialStore::at(dir.path().join("svc").join("credentials.json"));
        let stored = StoredToken {
            token: token.into(),
            publisher: "acme".into(),
        };
        store.put(registry, stored).unwrap();
        (dir, store)
    }

    fn chosen(token: Option<&str>, withheld: Option<&'static str>) -> ChosenToken {
        ChosenToken {
            token: token.map(str::to_owned),
            withheld,
        }
    }

    #[test]
    fn to_a_registry_the_user_named_the_flag_wins_over_the_environment_then_the_stored_token() {
        let (_dir, store) = store_with("https://reg.example", "stored");
        let r = "https://reg.example";
        let both = ExplicitToken {
            flag: Some("flag"),
            env: Some("env"),
        };
        assert_eq!(
            resolve_token(both, &store, r, true).unwrap(),
            chosen(Some("flag"), None)
        );
        let env = ExplicitToken {
            flag: None,
            env: Some("env"),
        };
        assert_eq!(resolve_token(env, &store, r, true).unwrap(), chosen(Some("env"), None));
        let empty = ExplicitToken {
            flag: Some(" "),
            env: Some(""),
        };
        assert_eq!(
            resolve_token(empty, &store, r, true).unwrap(),
            chosen(Some("stored"), None)
        );
        let none = ExplicitToken::default();
        assert_eq!(
            resolve_token(none, &store, "https://other", true).unwrap(),
            chosen(None, None)
        );
    }

    #[test]
    fn to_a_registry_svc_json_or_the_default_chose_only_its_stored_token_is_sent() {
        let (_dir, store) = store_with("https://theirs.example", "stored-for-theirs");
        let env = ExplicitToken {
            flag: None,
            env: Some("svcreg_mine"),
        };
        assert_eq!(
            resolve_token(env, &store, "https://evil.example", false).unwrap(),
            chosen(None, Some(REGISTRY_TOKEN_ENV))
        );
        let flag = ExplicitToken {
            flag: Some("svcreg_mine"),
            env: Some("svcreg_mine_too"),
        };
        assert_eq!(
            resolve_token(flag, &store, "https://evil.example", false).unwrap(),
            chosen(None, Some(TOKEN_FLAG))
        );
        // `svc login` there earlier bound a token to that registry: that one may go.
        assert_eq!(
            resolve_token(env, &store, "https://theirs.example", false).unwrap(),
            chosen(Some("stored-for-theirs"), Some(REGISTRY_TOKEN_ENV))
        );
    }

    #[test]
    fn the_reason_names_the_source_the_registry_and_the_remedy() {
        let reason = withheld_reason(REGISTRY_TOKEN_ENV, "https://evil.example");
        for part in [
            "SVC_REGISTRY_TOKEN",
            "SVC_REGISTRY_URL",
            "https://evil.example",
            "--registry https://evil.example",
        ] {
            assert!(reason.contains(part), "{reason}");
        }
    }
}
