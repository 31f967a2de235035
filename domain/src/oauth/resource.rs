//! Resource indicators (RFC 8707): the issuer itself, the issuer plus `/mcp`, or plus `/ops` (the
//! operator route, which takes the same keys) is universal (the whole app surface of the user); the issuer plus `/apps/<appId>` or the app's endpoint
//! `/apps/<appId>/mcp` (the `resource` of its protected-resource metadata) is one app. Anything
//! else is unknown and refused at authorize, before the consent step.

use url::Url;

use super::issuer::Issuer;

/// Longest app id in a per-app resource; app ids are base62 (the server mints 16 characters).
pub const APP_ID_MAX_CHARS: usize = 64;

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ResourceIndicator {
    Universal,
    App(String),
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("unknown resource")]
pub struct UnknownResource;

impl ResourceIndicator {
    /// Classifies `raw` (absent: universal). Scheme and host compare case-insensitively and a
    /// default port may be spelt out; the path must be exactly one of the known forms (a trailing
    /// slash is tolerated).
    pub fn classify(issuer: &Issuer, raw: Option<&str>) -> Result<Self, UnknownResource> {
        let Some(raw) = raw else {
            return Ok(Self::Universal);
        };
        let url = Url::parse(raw).map_err(|_| UnknownResource)?;
        if url.query().is_some() || url.fragment().is_some() {
            return Err(UnknownResource);
        }
        let canonical = url.as_str().trim_end_matches('/');
        let rest = canonical.strip_prefix(issuer.as_str()).ok_or(UnknownResource)?;
        match rest {
            "" | "/mcp" | "/ops" => Ok(Self::Universal),
            _ => {
                let app = rest.strip_prefix("/apps/").ok_or(UnknownResource)?;
                let app_id = app.strip_suffix("/mcp").unwrap_or(app);
                let well_formed = !app_id.is_empty()
                    && app_id.len() <= APP_ID_MAX_CHARS
                    && app_id.chars().all(|c| c.is_ascii_alphanumeric());
                if well_formed {
                    Ok(Self::App(app_id.to_owned()))
                } else {
                    Err(UnknownResource)
                }
            }
        }
    }

    pub fn app_id(&self) -> Option<&str> {
        match self {
            Self::Universal => None,
            Self::App(app_id) => Some(app_id),
        }
    }
}

/// Token-time check (Document 2): a `resource` sent to the token endpoint must match the one
/// given at authorize; omitting it is tolerated. When authorize had none (universal), only a
/// universal indicator matches.
pub fn resource_matches(issuer: &Issuer, authorized: Option<&str>, presented: Option<&str>) -> bool {
    match (authorized, presented) {
        (_, None) => true,
        (Some(authorized), Some(presented)) => authorized == presented,
        (None, Some(presented)) => {
            ResourceIndicator::classify(issuer, Some(presented)) == Ok(ResourceIndicator::Universal)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn issuer() -> Issuer {
        Issuer::parse("http://127.0.0.1:6781").unwrap()
    }

    #[test]
    fn resources_are_classified() {
        let app = |id: &str| Ok(ResourceIndicator::App(id.to_owned()));
        let rows = [
            (None, Ok(ResourceIndicator::Universal)),
            (Some("http://127.0.0.1:6781"), Ok(ResourceIndicator::Universal)),
            (Some("http://127.0.0.1:6781/"), Ok(ResourceIndicator::Universal)),
            (Some("http://127.0.0.1:6781/mcp"), Ok(ResourceIndicator::Universal)),
            (Some("HTTP://127.0.0.1:6781/mcp/"), Ok(ResourceIndicator::Universal)),
            (Some("http://127.0.0.1:6781/ops"), Ok(ResourceIndicator::Universal)),
            (Some("http://127.0.0.1:6781/ops/x"), Err(UnknownResource)),
            (
                Some("http://127.0.0.1:6781/apps/Ab12Cd34Ef56Gh78"),
                app("Ab12Cd34Ef56Gh78"),
            ),
            (Some("http://127.0.0.1:6781/apps/"), Err(UnknownResource)),
            (Some("http://127.0.0.1:6781/apps/a-b"), Err(UnknownResource)),
            (Some("http://127.0.0.1:6781/apps/a/mcp"), app("a")),
            (Some("http://127.0.0.1:6781/apps/a/mcp/"), app("a")),
            (Some("http://127.0.0.1:6781/apps//mcp"), Err(UnknownResource)),
            (Some("http://127.0.0.1:6781/apps/a/mcp/x"), Err(UnknownResource)),
            (Some("http://127.0.0.1:6781/apps/a/other"), Err(UnknownResource)),
            (Some("http://127.0.0.1:6781/other"), Err(UnknownResource)),
            (Some("http://127.0.0.1:6781/mcpx"), Err(UnknownResource)),
            (Some("http://127.0.0.1:67811/mcp"), Err(UnknownResource)),
            (Some("http://127.0.0.1:6782/mcp"), Err(UnknownResource)),
            (Some("https://evil.example/mcp"), Err(UnknownResource)),
            (Some("http://127.0.0.1:6781/mcp?x=1"), Err(UnknownResource)),
            (Some("http://127.0.0.1:6781/mcp#f"), Err(UnknownResource)),
            (Some("not a url"), Err(UnknownResource)),
        ];
        for (raw, expected) in rows {
            assert_eq!(ResourceIndicator::classify(&issuer(), raw), expected, "{raw:?}");
        }
    }

    #[test]
    fn token_time_resources_must_match_authorize() {
        let mcp = "http://127.0.0.1:6781/mcp";
        let app = "http://127.0.0.1:6781/apps/A1";
        let rows = [
            (Some(mcp), None, true),
            (Some(mcp), Some(mcp), true),
            (Some(mcp), Some(app), false),
            (Some(app), Some(mcp), false),
            (Some(mcp), Some("http://127.0.0.1:6781"), false),
            (None, None, true),
            (None, Some(mcp), true),
            (None, Some(app), false),
        ];
        for (authorized, presented, expected) in rows {
            assert_eq!(
                resource_matches(&issuer(), authorized, presented),
                expected,
                "{authorized:?} {presented:?}"
            );
        }
    }
}
