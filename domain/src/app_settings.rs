//! The hosted settings of one app: its render rate, the adapters and capabilities it grants, its
//! default shell, and who may call its endpoint `/apps/<appId>/mcp` (native keys, federated
//! identities from one issuer, or both; subjects denied by name). Set by the operator with
//! `svc apps configure`; `svc_discover` reports them and the endpoint check reads them.

use url::Url;

/// The shells a card can be shown in (Document 1, `svc_discover.shellTypes`).
pub const SHELL_TYPES: [&str; 3] = ["chat", "fullscreen", "spatial"];
/// The device adapters an app may enable (Document 1, `svc_discover.adapterTypes`).
pub const ADAPTER_TYPES: [&str; 4] = ["voice", "camera", "location", "bluetooth"];
/// Longest federation subject kept in a deny list, and longest capability name.
const MAX_NAME_LEN: usize = 256;
/// A per-minute render rate above this is a typo, not a limit.
pub const MAX_RATE_PER_MINUTE: u32 = 1_000_000;

/// Who may call the app's endpoint.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// Bearer keys of the service only.
    Native,
    /// Tokens of the app's federation issuer only.
    Federated,
    Both,
}

impl AuthMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Native => "native",
            Self::Federated => "federated",
            Self::Both => "both",
        }
    }

    pub fn parse(raw: &str) -> Result<Self, AppSettingsError> {
        match raw {
            "native" => Ok(Self::Native),
            "federated" => Ok(Self::Federated),
            "both" => Ok(Self::Both),
            other => Err(AppSettingsError::AuthMode(other.to_owned())),
        }
    }

    pub fn admits_native(self) -> bool {
        matches!(self, Self::Native | Self::Both)
    }

    pub fn admits_federated(self) -> bool {
        matches!(self, Self::Federated | Self::Both)
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AppSettingsError {
    #[error("rate limit per minute must be between 1 and {MAX_RATE_PER_MINUTE}, not {0}")]
    RateLimit(u32),
    #[error("unknown adapter `{0}`: expected one of voice, camera, location, bluetooth")]
    Adapter(String),
    #[error("unknown shell type `{0}`: expected chat, fullscreen or spatial")]
    ShellType(String),
    #[error("unknown auth mode `{0}`: expected native, federated or both")]
    AuthMode(String),
    #[error("{field} must be an https URL (http only on a loopback host), not `{value}`")]
    Url { field: &'static str, value: String },
    #[error("{field} entries must be 1 to {MAX_NAME_LEN} printable characters")]
    Name { field: &'static str },
    #[error("auth mode `{0}` needs a federation issuer")]
    IssuerRequired(&'static str),
    #[error("a JWKS URL needs a federation issuer to check tokens against")]
    JwksWithoutIssuer,
}

/// The settings as stored; `None` is "not set" (the service's default applies).
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AppSettings {
    pub rate_limit_per_minute: Option<u32>,
    pub enabled_adapters: Option<Vec<String>>,
    pub granted_capabilities: Option<Vec<String>>,
    pub default_shell_type: Option<String>,
    pub auth_mode: Option<AuthMode>,
    /// The issuer federated tokens must name (`iss`), exactly as it appears there.
    pub federation_issuer: Option<String>,
    /// Where the issuer's keys are; `None`: found by OpenID Connect discovery on the issuer.
    pub jwks_url: Option<String>,
    pub denied_subjects: Vec<String>,
    /// The org the app belongs to: its renders are charged to the org's wallet.
    pub org_id: Option<String>,
}

/// One `svc apps configure` call: each field given replaces the stored one, the rest stay.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct AppSettingsChange {
    pub rate_limit_per_minute: Option<u32>,
    pub enabled_adapters: Option<Vec<String>>,
    pub granted_capabilities: Option<Vec<String>>,
    pub default_shell_type: Option<String>,
    pub auth_mode: Option<String>,
    pub federation_issuer: Option<String>,
    pub jwks_url: Option<String>,
    /// Added to the deny list (subjects already there stay).
    pub deny_subjects: Vec<String>,
    /// `Some(Some(org))` puts the app in an org, `Some(None)` takes it out, `None` leaves it.
    pub org_id: Option<Option<String>>,
}

impl AppSettings {
    /// The native mode unless set: an app without a federation issuer accepts its own keys only.
    pub fn effective_auth_mode(&self) -> AuthMode {
        self.auth_mode.unwrap_or(AuthMode::Native)
    }

    pub fn denies(&self, subject: &str) -> bool {
        self.denied_subjects.iter().any(|s| s == subject)
    }

    /// These settings with `change` applied, or the first rule the result breaks.
    pub fn apply(&self, change: AppSettingsChange) -> Result<Self, AppSettingsError> {
        let mut next = self.clone();
        if let Some(rate) = change.rate_limit_per_minute {
            if rate == 0 || rate > MAX_RATE_PER_MINUTE {
                return Err(AppSettingsError::RateLimit(rate));
            }
            next.rate_limit_per_minute = Some(rate);
        }
        if let Some(adapters) = change.enabled_adapters {
            next.enabled_adapters = Some(checked_adapters(adapters)?);
        }
        if let Some(capabilities) = change.granted_capabilities {
            next.granted_capabilities = Some(checked_names("granted capabilities", capabilities)?);
        }
        if let Some(shell) = change.default_shell_type {
            if !SHELL_TYPES.contains(&shell.as_str()) {
                return Err(AppSettingsError::ShellType(shell));
            }
            next.default_shell_type = Some(shell);
        }
        if let Some(mode) = change.auth_mode {
            next.auth_mode = Some(AuthMode::parse(&mode)?);
        }
        if let Some(issuer) = change.federation_issuer {
            next.federation_issuer = Some(checked_url("federation issuer", issuer)?);
        }
        if let Some(jwks) = change.jwks_url {
            next.jwks_url = Some(checked_url("JWKS URL", jwks)?);
        }
        if let Some(org) = change.org_id {
            next.org_id = match org {
                Some(id) => checked_names("org id", vec![id])?.pop(),
                None => None,
            };
        }
        for subject in checked_names("denied subjects", change.deny_subjects)? {
            if !next.denies(&subject) {
                next.denied_subjects.push(subject);
            }
        }
        if next.federation_issuer.is_none() {
            if next.jwks_url.is_some() {
                return Err(AppSettingsError::JwksWithoutIssuer);
            }
            if let Some(mode) = next.auth_mode.filter(|m| m.admits_federated()) {
                return Err(AppSettingsError::IssuerRequired(mode.as_str()));
            }
        }
        Ok(next)
    }
}

fn checked_adapters(adapters: Vec<String>) -> Result<Vec<String>, AppSettingsError> {
    let mut out: Vec<String> = Vec::new();
    for adapter in adapters {
        if !ADAPTER_TYPES.contains(&adapter.as_str()) {
            return Err(AppSettingsError::Adapter(adapter));
        }
        if !out.contains(&adapter) {
            out.push(adapter);
        }
    }
    Ok(out)
}

fn checked_names(field: &'static str, names: Vec<String>) -> Result<Vec<String>, AppSettingsError> {
    let mut out: Vec<String> = Vec::new();
    for name in names {
        let printable = !name.is_empty() && name.len() <= MAX_NAME_LEN && !name.chars().any(char::is_control);
        if !printable {
            return Err(AppSettingsError::Name { field });
        }
        if !out.contains(&name) {
            out.push(name);
        }
    }
    Ok(out)
}

/// An https URL, or http on a loopback host (a development issuer).
fn checked_url(field: &'static str, value: String) -> Result<String, AppSettingsError> {
    let bad = || AppSettingsError::Url {
        field,
        value: value.clone(),
    };
    let url = Url::parse(&value).map_err(|_| bad())?;
    let loopback = match url.host() {
        Some(url::Host::Ipv4(ip)) => ip.is_loopback(),
        Some(url::Host::Ipv6(ip)) => ip.is_loopback(),
        Some(url::Host::Domain(name)) => name == "localhost",
        None => return Err(bad()),
    };
    match url.scheme() {
        "https" => Ok(value),
        "http" if loopback => Ok(value),
        _ => Err(bad()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn an_app_is_put_in_an_org_kept_there_and_taken_out() {
        let org = |org_id: Option<Option<&str>>| AppSettingsChange {
            org_id: org_id.map(|o| o.map(str::to_owned)),
            ..Default::default()
        };
        let inside = AppSettings::default().apply(org(Some(Some("01ORG")))).unwrap();
        assert_eq!(inside.org_id.as_deref(), Some("01ORG"));
        let kept = inside.apply(org(None)).unwrap();
        assert_eq!(kept.org_id.as_deref(), Some("01ORG"), "not named: kept");
        assert_eq!(kept.apply(org(Some(None))).unwrap().org_id, None);
        assert_eq!(
            AppSettings::default().apply(org(Some(Some("")))),
            Err(AppSettingsError::Name { field: "org id" })
        );
    }

    #[test]
    fn a_change_replaces_the_fields_it_names_and_keeps_the_rest() {
        let first = AppSettings::default()
            .apply(AppSettingsChange {
                rate_limit_per_minute: Some(30),
                enabled_adapters: Some(names(&["voice", "camera", "voice"])),
                default_shell_type: Some("fullscreen".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(first.enabled_adapters, Some(names(&["voice", "camera"])));
        let second = first
            .apply(AppSettingsChange {
                granted_capabilities: Some(names(&["clipboard"])),
                deny_subjects: names(&["u1"]),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(second.rate_limit_per_minute, Some(30));
        assert_eq!(second.default_shell_type.as_deref(), Some("fullscreen"));
        assert_eq!(second.granted_capabilities, Some(names(&["clipboard"])));
        let third = second
            .apply(AppSettingsChange {
                deny_subjects: names(&["u2", "u1"]),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(third.denied_subjects, names(&["u1", "u2"]));
        assert!(third.denies("u2") && !third.denies("u3"));
    }

    #[test]
    fn each_bad_value_is_refused_with_its_own_error() {
        let cases: Vec<(AppSettingsChange, AppSettingsError)> = vec![
            (
                AppSettingsChange {
                    rate_limit_per_minute: Some(0),
                    ..Default::default()
                },
                AppSettingsError::RateLimit(0),
            ),
            (
                AppSettingsChange {
                    enabled_adapters: Some(names(&["voice", "telepathy"])),
                    ..Default::default()
                },
                AppSettingsError::Adapter("telepathy".into()),
            ),
            (
                AppSettingsChange {
                    default_shell_type: Some("window".into()),
                    ..Default::default()
                },
                AppSettingsError::ShellType("window".into()),
            ),
            (
                AppSettingsChange {
                    auth_mode: Some("open".into()),
                    ..Default::default()
                },
                AppSettingsError::AuthMode("open".into()),
            ),
            (
                AppSettingsChange {
                    federation_issuer: Some("http://issuer.example".into()),
                    ..Default::default()
                },
                AppSettingsError::Url {
                    field: "federation issuer",
                    value: "http://issuer.example".into(),
                },
            ),
            (
                AppSettingsChange {
                    auth_mode: Some("federated".into()),
                    ..Default::default()
                },
                AppSettingsError::IssuerRequired("federated"),
            ),
            (
                AppSettingsChange {
                    jwks_url: Some("https://issuer.example/jwks".into()),
                    ..Default::default()
                },
                AppSettingsError::JwksWithoutIssuer,
            ),
            (
                AppSettingsChange {
                    deny_subjects: names(&["ok", "bad\nline"]),
                    ..Default::default()
                },
                AppSettingsError::Name {
                    field: "denied subjects",
                },
            ),
        ];
        for (change, expected) in cases {
            assert_eq!(AppSettings::default().apply(change), Err(expected));
        }
    }

    #[test]
    fn a_loopback_issuer_may_use_http_and_an_app_is_native_until_told_otherwise() {
        let settings = AppSettings::default()
            .apply(AppSettingsChange {
                auth_mode: Some("both".into()),
                federation_issuer: Some("http://127.0.0.1:9000".into()),
                jwks_url: Some("http://localhost:9000/jwks".into()),
                ..Default::default()
            })
            .unwrap();
        assert_eq!(settings.effective_auth_mode(), AuthMode::Both);
        assert_eq!(AppSettings::default().effective_auth_mode(), AuthMode::Native);
        assert!(AuthMode::Both.admits_native() && AuthMode::Both.admits_federated());
        assert!(!AuthMode::Federated.admits_native() && !AuthMode::Native.admits_federated());
    }
}
