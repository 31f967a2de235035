//! Redirect URIs a client may register (Document 2, `POST /oauth/register`): absolute, no
//! fragment, no wildcard host, and one of `https`, `http` on a loopback host, or a private-use
//! scheme (`app-name://...`, `com.example.app:/...`). Schemes a browser can execute are refused.
//! A registered URI is kept exactly as sent: authorize compares it byte for byte.

use url::Url;

/// Schemes a browser executes or reads locally instead of handing to an app.
const BROWSER_EXECUTABLE_SCHEMES: &[&str] = &[
    "javascript",
    "data",
    "blob",
    "file",
    "about",
    "vbscript",
    "filesystem",
    "view-source",
];

/// Standard schemes that are neither `http(s)` nor an app's own: no app can claim them.
const FOREIGN_STANDARD_SCHEMES: &[&str] = &["ftp", "ws", "wss", "mailto", "tel", "sms"];

/// Longest redirect URI a client may register, in bytes: registration is open, and each client
/// is kept, so its size is bounded; browsers and servers commonly cap a URL near this length.
pub const REDIRECT_URI_MAX_BYTES: usize = 2048;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RedirectUriError {
    #[error("must be at most {REDIRECT_URI_MAX_BYTES} bytes")]
    TooLong,
    #[error("must be an absolute URI without spaces or control characters")]
    NotAbsolute,
    #[error("must not contain a fragment")]
    Fragment,
    #[error("must not use a wildcard host")]
    WildcardHost,
    #[error("http is allowed only on a loopback host (127.0.0.1, [::1], localhost); use https")]
    InsecureHttp,
    #[error("the scheme `{}` can be executed by a browser", crate::text::excerpt(.0))]
    BrowserExecutable(String),
    #[error("the scheme `{}` is neither https, loopback http nor a private-use scheme", crate::text::excerpt(.0))]
    UnsupportedScheme(String),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RedirectUri(String);

impl RedirectUri {
    pub fn parse(raw: &str) -> Result<Self, RedirectUriError> {
        if raw.len() > REDIRECT_URI_MAX_BYTES {
            return Err(RedirectUriError::TooLong);
        }
        // The parser would quietly strip surrounding spaces and inner tabs or newlines; the
        // registered string must be the one that is matched later, so such input is refused.
        // Backslashes and `https:///host` are read as slashes and a host by the WHATWG parser.
        if raw.is_empty() || raw.chars().any(|c| c.is_whitespace() || c.is_control() || c == '\\') {
            return Err(RedirectUriError::NotAbsolute);
        }
        if raw.contains('#') {
            return Err(RedirectUriError::Fragment);
        }
        let url = Url::parse(raw).map_err(|_| RedirectUriError::NotAbsolute)?;
        let scheme = url.scheme();
        if BROWSER_EXECUTABLE_SCHEMES.contains(&scheme) {
            return Err(RedirectUriError::BrowserExecutable(scheme.to_owned()));
        }
        if FOREIGN_STANDARD_SCHEMES.contains(&scheme) {
            return Err(RedirectUriError::UnsupportedScheme(scheme.to_owned()));
        }
        if url
            .host_str()
            .is_some_and(|host| host.contains('*') || host.to_ascii_lowercase().contains("%2a"))
        {
            return Err(RedirectUriError::WildcardHost);
        }
        let authority = &raw[scheme.len()..];
        let web_authority = authority.starts_with("://") && !authority[3..].starts_with('/');
        match scheme {
            "http" | "https" if !web_authority => return Err(RedirectUriError::NotAbsolute),
            "https" if url.host().is_some() => {}
            "http" if super::is_loopback(&url) => {}
            "http" => return Err(RedirectUriError::InsecureHttp),
            "https" => return Err(RedirectUriError::NotAbsolute),
            // A private-use scheme needs something after `scheme:`.
            _ if raw.len() <= scheme.len() + 1 => return Err(RedirectUriError::NotAbsolute),
            _ => {}
        }
        Ok(Self(raw.to_owned()))
    }

    /// Rebuilds a URI read back from storage, where it was validated on the way in.
    pub fn from_stored(value: String) -> Self {
        Self(value)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Where the code will go, as a person should read it on the consent page: `host[:port]` for
    /// web URIs, `the app behind scheme:` links otherwise.
    pub fn destination(&self) -> String {
        match Url::parse(&self.0) {
            Ok(url) if matches!(url.scheme(), "http" | "https") => {
                let host = url.host_str().unwrap_or_default();
                match url.port() {
                    Some(port) => format!("{host}:{port}"),
                    None => host.to_owned(),
                }
            }
            Ok(url) => format!("the app that opens {}: links", url.scheme()),
            Err(_) => self.0.clone(),
        }
    }

    /// This URI with `params` appended to its query (an existing query is kept).
    pub fn with_params(&self, params: &[(&str, &str)]) -> String {
        match Url::parse(&self.0) {
            Ok(mut url) => {
                url.query_pairs_mut().extend_pairs(params);
                url.into()
            }
            Err(_) => self.0.clone(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn allowed_redirect_uris() {
        for raw in [
            "https://client.example.com/callback",
            "https://client.example.com:8443/cb?tenant=1",
            "http://127.0.0.1:33418/callback",
            "http://[::1]:8080/cb",
            "http://localhost/cb",
            "app-name://callback",
            "com.example.app:/oauth2redirect",
            "cursor://anysphere.cursor-retrieval/oauth/callback",
        ] {
            assert_eq!(
                RedirectUri::parse(raw).map(|u| u.as_str().to_owned()),
                Ok(raw.to_owned()),
                "{raw}"
            );
        }
    }

    #[test]
    fn refused_redirect_uris() {
        use RedirectUriError::*;
        let rows = [
            ("/callback", NotAbsolute),
            ("callback", NotAbsolute),
            ("", NotAbsolute),
            (" https://client.example.com/cb", NotAbsolute),
            ("https://client.example.com/c\tb", NotAbsolute),
            ("https:///cb", NotAbsolute),
            ("https:/client.example.com/cb", NotAbsolute),
            ("https:\\\\client.example.com\\cb", NotAbsolute),
            ("https://client.example.com/cb#frag", Fragment),
            ("https://*.example.com/cb", WildcardHost),
            ("myapp://*/cb", WildcardHost),
            ("http://client.example.com/cb", InsecureHttp),
            ("http://127.0.0.1.nip.io/cb", InsecureHttp),
            ("http://10.0.0.1/cb", InsecureHttp),
            ("javascript:alert(1)", BrowserExecutable("javascript".into())),
            ("JavaScript:alert(1)", BrowserExecutable("javascript".into())),
            ("data:text/html,hi", BrowserExecutable("data".into())),
            ("blob:https://x/y", BrowserExecutable("blob".into())),
            ("file:///etc/passwd", BrowserExecutable("file".into())),
            ("about:blank", BrowserExecutable("about".into())),
            ("vbscript:x", BrowserExecutable("vbscript".into())),
            ("wss://client.example.com/cb", UnsupportedScheme("wss".into())),
            ("myapp:", NotAbsolute),
        ];
        for (raw, error) in rows {
            assert_eq!(RedirectUri::parse(raw), Err(error), "{raw}");
        }
    }

    #[test]
    fn a_redirect_uri_is_at_most_2048_bytes() {
        let base = "https://client.example.com/cb?pad=";
        let at_most = format!("{base}{}", "p".repeat(REDIRECT_URI_MAX_BYTES - base.len()));
        assert!(RedirectUri::parse(&at_most).is_ok());
        let over = format!("{at_most}p");
        assert_eq!(RedirectUri::parse(&over), Err(RedirectUriError::TooLong));
    }

    #[test]
    fn the_destination_names_the_host_or_the_app_scheme() {
        let rows = [
            ("https://client.example.com/cb", "client.example.com"),
            ("http://127.0.0.1:33418/cb", "127.0.0.1:33418"),
            ("com.example.app:/cb", "the app that opens com.example.app: links"),
        ];
        for (raw, destination) in rows {
            assert_eq!(RedirectUri::parse(raw).unwrap().destination(), destination);
        }
    }

    #[test]
    fn params_are_appended_to_an_existing_query() {
        let uri = RedirectUri::parse("https://c.example.com/cb?tenant=1").unwrap();
        assert_eq!(
            uri.with_params(&[("code", "a b"), ("state", "x&y")]),
            "https://c.example.com/cb?tenant=1&code=a+b&state=x%26y"
        );
        let app = RedirectUri::parse("com.example.app:/cb").unwrap();
        assert_eq!(app.with_params(&[("code", "c")]), "com.example.app:/cb?code=c");
    }
}
