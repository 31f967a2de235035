//! The issuer identifier. Clients compare it as a string (RFC 8414 section 3.3, RFC 9207), and
//! some render a bare origin with a trailing `/` while others do not, so one canonical form is
//! chosen here and used everywhere: the URL as WHATWG serialises it (lower-case scheme and host,
//! default port dropped) **without** a trailing slash, e.g. `http://127.0.0.1:6781` or
//! `https://svc.example.com/base`. The MCP SDKs tested compare a root issuer with and without its
//! trailing slash as equal; the slash-less form is also what RFC 8414 derives from the metadata URL.

use url::Url;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum IssuerError {
    #[error("the issuer must be an absolute http(s) URL with a host, got {0:?}")]
    NotAUrl(String),
    #[error("the issuer must use https, or http on a loopback host, got {0:?}")]
    Insecure(String),
    #[error("the issuer must not carry credentials, a query or a fragment, got {0:?}")]
    Decorated(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Issuer(String);

impl Issuer {
    pub fn parse(raw: &str) -> Result<Self, IssuerError> {
        let url = Url::parse(raw.trim()).map_err(|_| IssuerError::NotAUrl(raw.to_owned()))?;
        if url.host().is_none() {
            return Err(IssuerError::NotAUrl(raw.to_owned()));
        }
        match url.scheme() {
            "https" => {}
            "http" if super::is_loopback(&url) => {}
            "http" => return Err(IssuerError::Insecure(raw.to_owned())),
            _ => return Err(IssuerError::NotAUrl(raw.to_owned())),
        }
        if url.query().is_some() || url.fragment().is_some() || !url.username().is_empty() || url.password().is_some() {
            return Err(IssuerError::Decorated(raw.to_owned()));
        }
        Ok(Self(url.as_str().trim_end_matches('/').to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// `path` (starting with `/`) under the issuer: `{issuer}/oauth/token`.
    pub fn url(&self, path: &str) -> String {
        format!("{}{path}", self.0)
    }

    /// `scheme://host[:port]`, where a consent page posts back to.
    pub fn origin(&self) -> String {
        Url::parse(&self.0)
            .map(|url| url.origin().ascii_serialization())
            .unwrap_or_else(|_| self.0.clone())
    }
}

impl std::fmt::Display for Issuer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_canonical_form_has_no_trailing_slash() {
        let rows = [
            ("http://127.0.0.1:6781", "http://127.0.0.1:6781"),
            ("http://127.0.0.1:6781/", "http://127.0.0.1:6781"),
            ("HTTPS://SVC.Example.com:443/", "https://svc.example.com"),
            ("https://svc.example.com/base/", "https://svc.example.com/base"),
            ("http://localhost:80", "http://localhost"),
            ("http://[::1]:9/", "http://[::1]:9"),
        ];
        for (raw, canonical) in rows {
            assert_eq!(Issuer::parse(raw).unwrap().as_str(), canonical, "{raw}");
        }
    }

    #[test]
    fn insecure_or_decorated_issuers_are_refused() {
        let rows = [
            (
                "http://svc.example.com",
                IssuerError::Insecure("http://svc.example.com".into()),
            ),
            (
                "ftp://svc.example.com",
                IssuerError::NotAUrl("ftp://svc.example.com".into()),
            ),
            ("/relative", IssuerError::NotAUrl("/relative".into())),
            (
                "https://svc.example.com/?a=1",
                IssuerError::Decorated("https://svc.example.com/?a=1".into()),
            ),
            (
                "https://svc.example.com/#f",
                IssuerError::Decorated("https://svc.example.com/#f".into()),
            ),
            (
                "https://u:p@svc.example.com",
                IssuerError::Decorated("https://u:p@svc.example.com".into()),
            ),
        ];
        for (raw, error) in rows {
            assert_eq!(Issuer::parse(raw).unwrap_err(), error, "{raw}");
        }
    }

    #[test]
    fn urls_and_origin_derive_from_the_issuer() {
        let issuer = Issuer::parse("https://svc.example.com/base").unwrap();
        assert_eq!(issuer.url("/oauth/token"), "https://svc.example.com/base/oauth/token");
        assert_eq!(issuer.origin(), "https://svc.example.com");
    }
}
