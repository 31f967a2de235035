//! Which registry a command talks to (Document 3): publish and search (and every other command
//! that needs a credential) take the flag, then the environment variable, then `svc.json#registry`,
//! else an error; install takes the flag, then `svc.json#registry`, then the environment variable,
//! then the built-in hosted default.

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

#[cfg(test)]
mod tests {
    use super::*;

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
