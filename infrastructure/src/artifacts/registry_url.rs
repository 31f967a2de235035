//! Which registry a command talks to (Document 3): publish and search (and every other command
//! that needs a credential) take the flag, then the environment variable, then `svc.json#registry`,
//! else an error; install takes the flag, then `svc.json#registry`, then the environment variable,
//! then the built-in hosted default.
//!
//! Whether the user named the resolved registry (the flag or the environment variable) or the
//! project did (svc.json, or the default) decides whether an explicit token may go there
//! (`token_choice`).

/// The environment variable naming the registry.
pub const REGISTRY_URL_ENV: &str = "SVC_REGISTRY_URL";
/// The hosted registry install falls back to.
pub const HOSTED_REGISTRY: &str = "https://registry.svc.dev";

/// The order a command resolves the registry in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Resolution {
    /// publish, search, login, author-key register, conformance check.
    Publish,
    /// install.
    Install,
}

/// The candidates, each `None` when absent.
#[derive(Debug, Clone, Default)]
pub struct Candidates<'a> {
    pub flag: Option<&'a str>,
    pub env: Option<&'a str>,
    pub manifest: Option<&'a str>,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
#[error("no registry: pass --registry URL, set {REGISTRY_URL_ENV}, or add \"registry\" to svc.json")]
pub struct NoRegistry;

/// The registry URL, by the order of `resolution`. An empty value counts as absent.
pub fn resolve(resolution: Resolution, c: &Candidates<'_>) -> Result<String, NoRegistry> {
    let present = |v: Option<&str>| v.map(str::trim).filter(|v| !v.is_empty()).map(str::to_owned);
    let order = match resolution {
        Resolution::Publish => [c.flag, c.env, c.manifest],
        Resolution::Install => [c.flag, c.manifest, c.env],
    };
    match order.into_iter().find_map(present) {
        Some(url) => Ok(url),
        None if resolution == Resolution::Install => Ok(HOSTED_REGISTRY.to_owned()),
        None => Err(NoRegistry),
    }
}

/// Whether `url` is a registry the user named for this command (`--registry` or
/// `SVC_REGISTRY_URL`), rather than one svc.json or the default chose. svc.json naming the same
/// registry as the user does not take that away.
pub fn named_by_user(url: &str, c: &Candidates<'_>) -> bool {
    let url = normalized(url);
    [c.flag, c.env]
        .into_iter()
        .flatten()
        .filter(|named| !named.trim().is_empty())
        .any(|named| normalized(named) == url)
}

/// One spelling per registry: `https://Reg.example/` and `https://reg.example` are one.
pub fn normalized(registry: &str) -> String {
    match reqwest::Url::parse(registry.trim()) {
        Ok(url) => url.as_str().trim_end_matches('/').to_owned(),
        Err(_) => registry.trim().trim_end_matches('/').to_owned(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_registry_is_named_by_the_user_only_through_the_flag_or_the_environment() {
        let c = Candidates {
            flag: None,
            env: Some("https://Ours.example/"),
            manifest: Some("https://theirs.example"),
        };
        let install = resolve(Resolution::Install, &c).unwrap();
        assert_eq!(install, "https://theirs.example");
        assert!(!named_by_user(&install, &c), "svc.json chose it");
        assert!(named_by_user(&resolve(Resolution::Publish, &c).unwrap(), &c));
        assert!(
            named_by_user("https://ours.example", &c),
            "spelled differently, one registry"
        );

        // svc.json and the user agree: the user named it too.
        let agreed = Candidates {
            flag: None,
            env: Some("https://theirs.example/"),
            manifest: Some("https://theirs.example"),
        };
        assert!(named_by_user(&resolve(Resolution::Install, &agreed).unwrap(), &agreed));
        let flagged = Candidates {
            flag: Some("https://theirs.example"),
            ..Candidates::default()
        };
        assert!(named_by_user(
            &resolve(Resolution::Install, &flagged).unwrap(),
            &flagged
        ));

        // Nothing named: the hosted default is no one's choice but the program's.
        let nothing = Candidates {
            env: Some(" "),
            ..Candidates::default()
        };
        let default = resolve(Resolution::Install, &nothing).unwrap();
        assert_eq!(default, HOSTED_REGISTRY);
        assert!(!named_by_user(&default, &nothing));
    }

    fn all<'a>() -> Candidates<'a> {
        Candidates {
            flag: Some("https://flag"),
            env: Some("https://env"),
            manifest: Some("https://manifest"),
        }
    }

    #[test]
    fn publish_takes_the_flag_then_the_environment_then_svc_json_else_fails() {
        let mut c = all();
        assert_eq!(resolve(Resolution::Publish, &c).unwrap(), "https://flag");
        c.flag = None;
        assert_eq!(resolve(Resolution::Publish, &c).unwrap(), "https://env");
        c.env = Some("  ");
        assert_eq!(resolve(Resolution::Publish, &c).unwrap(), "https://manifest");
        c.manifest = None;
        assert_eq!(resolve(Resolution::Publish, &c), Err(NoRegistry));
    }

    #[test]
    fn install_takes_the_flag_then_svc_json_then_the_environment_then_the_hosted_default() {
        let mut c = all();
        assert_eq!(resolve(Resolution::Install, &c).unwrap(), "https://flag");
        c.flag = None;
        assert_eq!(resolve(Resolution::Install, &c).unwrap(), "https://manifest");
        c.manifest = None;
        assert_eq!(resolve(Resolution::Install, &c).unwrap(), "https://env");
        c.env = None;
        assert_eq!(resolve(Resolution::Install, &c).unwrap(), HOSTED_REGISTRY);
    }

    #[test]
    fn the_missing_registry_error_says_every_way_to_name_one() {
        let message = NoRegistry.to_string();
        for hint in ["--registry", REGISTRY_URL_ENV, "svc.json"] {
            assert!(message.contains(hint), "{message}");
        }
    }
}
