//! Registered clients (RFC 7591 open registration with Document 2's rules). A client is public:
//! no secret is ever issued, PKCE is its only authentication.

use chrono::{DateTime, Utc};

use super::redirect_uri::{RedirectUri, RedirectUriError};

/// Redirect URIs one registration may list.
pub const MAX_REDIRECT_URIS: usize = 10;
/// Longest `client_name`, in characters.
pub const CLIENT_NAME_MAX_CHARS: usize = 100;

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum RegistrationError {
    #[error("redirect_uris must list 1 to {MAX_REDIRECT_URIS} URIs, got {0}")]
    RedirectUriCount(usize),
    #[error("redirect_uris[{index}] {reason}")]
    RedirectUri { index: usize, reason: RedirectUriError },
    #[error("client_name must be 1 to {CLIENT_NAME_MAX_CHARS} printable characters")]
    ClientName,
}

impl RegistrationError {
    /// The RFC 7591 error code.
    pub fn code(&self) -> &'static str {
        match self {
            Self::RedirectUriCount(_) | Self::RedirectUri { .. } => "invalid_redirect_uri",
            Self::ClientName => "invalid_client_metadata",
        }
    }
}

/// A display name shown on the consent page and in the key list: 1 to 100 printable characters.
/// Control characters and invisible formatting characters (bidirectional overrides, zero-width
/// characters) are refused, so the name a person reads is the name that was registered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientName(String);

impl ClientName {
    pub fn parse(raw: &str) -> Result<Self, RegistrationError> {
        let chars = raw.chars().count();
        let printable = raw.chars().all(|c| !c.is_control() && !is_invisible_format(c));
        if raw.trim().is_empty() || chars > CLIENT_NAME_MAX_CHARS || !printable {
            return Err(RegistrationError::ClientName);
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn from_stored(value: String) -> Self {
        Self(value)
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// Unicode format characters that change how text reads without being seen.
fn is_invisible_format(c: char) -> bool {
    matches!(c, '\u{00AD}' | '\u{061C}' | '\u{180E}' | '\u{200B}'..='\u{200F}' | '\u{202A}'..='\u{202E}'
        | '\u{2060}'..='\u{206F}' | '\u{FEFF}' | '\u{FFF9}'..='\u{FFFB}')
}

/// A validated registration request. One bad redirect URI refuses the whole registration.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ClientRegistration {
    pub redirect_uris: Vec<RedirectUri>,
    pub client_name: Option<ClientName>,
}

impl ClientRegistration {
    pub fn parse(redirect_uris: &[String], client_name: Option<&str>) -> Result<Self, RegistrationError> {
        if redirect_uris.is_empty() || redirect_uris.len() > MAX_REDIRECT_URIS {
            return Err(RegistrationError::RedirectUriCount(redirect_uris.len()));
        }
        let redirect_uris = redirect_uris
            .iter()
            .enumerate()
            .map(|(index, raw)| {
                RedirectUri::parse(raw).map_err(|reason| RegistrationError::RedirectUri { index, reason })
            })
            .collect::<Result<Vec<_>, _>>()?;
        let client_name = client_name.map(ClientName::parse).transpose()?;
        Ok(Self {
            redirect_uris,
            client_name,
        })
    }
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthClient {
    pub client_id: String,
    pub client_name: Option<ClientName>,
    pub redirect_uris: Vec<RedirectUri>,
    pub created_at: DateTime<Utc>,
    /// The resource indicator of the client's last completed authorization (`None`: universal,
    /// or not connected yet), so an operator can label the connection.
    pub last_resource: Option<String>,
}

impl OAuthClient {
    /// (none) -> registered.
    pub fn register(client_id: String, registration: ClientRegistration, now: DateTime<Utc>) -> Self {
        Self {
            client_id,
            client_name: registration.client_name,
            redirect_uris: registration.redirect_uris,
            created_at: now,
            last_resource: None,
        }
    }

    /// The registered URI that `presented` equals byte for byte: no normalisation, so a trailing
    /// slash, another port or an extra query parameter is a different URI.
    pub fn registered_redirect_uri(&self, presented: &str) -> Option<&RedirectUri> {
        self.redirect_uris.iter().find(|uri| uri.as_str() == presented)
    }

    /// What the key list and the consent page call this client: its name, else its id.
    pub fn label(&self) -> &str {
        self.client_name.as_ref().map_or(&self.client_id, ClientName::as_str)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn uris(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn registration_rules() {
        let ok = "https://c.example.com/cb";
        let eleven = vec![ok; 11];
        let ten = vec![ok; 10];
        let long_name = "n".repeat(101);
        let longest_name = "é".repeat(100);
        type Row<'a> = (Vec<String>, Option<&'a str>, Result<(), RegistrationError>);
        let rows: Vec<Row> = vec![
            (uris(&[ok]), None, Ok(())),
            (uris(&ten), Some("Claude"), Ok(())),
            (uris(&[ok]), Some(&longest_name), Ok(())),
            (uris(&[]), None, Err(RegistrationError::RedirectUriCount(0))),
            (uris(&eleven), None, Err(RegistrationError::RedirectUriCount(11))),
            (
                uris(&[ok, "javascript:alert(1)"]),
                None,
                Err(RegistrationError::RedirectUri {
                    index: 1,
                    reason: RedirectUriError::BrowserExecutable("javascript".into()),
                }),
            ),
            (uris(&[ok]), Some(&long_name), Err(RegistrationError::ClientName)),
            (uris(&[ok]), Some(""), Err(RegistrationError::ClientName)),
            (uris(&[ok]), Some("   "), Err(RegistrationError::ClientName)),
            (uris(&[ok]), Some("bad\nname"), Err(RegistrationError::ClientName)),
            (
                uris(&[ok]),
                Some("evil\u{202E}gnp.exe"),
                Err(RegistrationError::ClientName),
            ),
            (
                uris(&[ok]),
                Some("zero\u{200B}width"),
                Err(RegistrationError::ClientName),
            ),
        ];
        for (redirect_uris, name, expected) in rows {
            let got = ClientRegistration::parse(&redirect_uris, name).map(|_| ());
            assert_eq!(got, expected, "{redirect_uris:?} {name:?}");
        }
    }

    #[test]
    fn error_codes_follow_rfc_7591() {
        assert_eq!(RegistrationError::RedirectUriCount(0).code(), "invalid_redirect_uri");
        assert_eq!(RegistrationError::ClientName.code(), "invalid_client_metadata");
    }

    #[test]
    fn redirect_uris_match_exactly() {
        let registration = ClientRegistration::parse(&uris(&["http://127.0.0.1:5000/cb"]), None).unwrap();
        let client = OAuthClient::register("c1".into(), registration, Utc::now());
        assert!(client.registered_redirect_uri("http://127.0.0.1:5000/cb").is_some());
        for near_miss in [
            "http://127.0.0.1:5000/cb/",
            "http://127.0.0.1:5001/cb",
            "http://127.0.0.1:5000/cb?x=1",
            "http://localhost:5000/cb",
            "HTTP://127.0.0.1:5000/cb",
        ] {
            assert!(client.registered_redirect_uri(near_miss).is_none(), "{near_miss}");
        }
        assert_eq!(client.label(), "c1");
    }
}
