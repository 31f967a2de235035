//! Client ID Metadata Documents (MCP authorization 2025-11-25, draft-ietf-oauth-client-id-
//! metadata-document): a client names itself by an `https` URL, and the JSON document served
//! there is its registration. These are the rules for that URL and that document; fetching it
//! is an adapter's job.

use chrono::{DateTime, Utc};
use serde_json::Value;
use url::Url;

use super::client::{ClientRegistration, OAuthClient, RegistrationError};

/// Largest metadata document read, in bytes (the draft suggests 5 KB).
pub const CLIENT_DOCUMENT_MAX_BYTES: usize = 5 * 1024;

/// Whether `client_id` is meant as a metadata-document URL rather than a registered id (a
/// registered id is a UUID, never a URL).
pub fn is_client_id_url(client_id: &str) -> bool {
    let lower = client_id.get(..8).unwrap_or(client_id).to_ascii_lowercase();
    lower.starts_with("https://") || lower.starts_with("http://")
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientIdUrlError {
    #[error("the client_id URL is not a valid absolute URL in its normal form")]
    NotNormal,
    #[error("the client_id URL must use https")]
    NotHttps,
    #[error("the client_id URL must have a path")]
    NoPath,
    #[error("the client_id URL must not contain credentials or a fragment")]
    Forbidden,
}

/// A client id that is the URL of its metadata document: `https` with a host and a path, no
/// credentials or fragment, written exactly as the URL parser writes it: the document's
/// `client_id` must equal it byte for byte, so no two spellings may exist (and dot segments,
/// which the parser removes, cannot appear).
/// `http` on a loopback host is accepted only when `loopback_http` (dev mode).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct ClientIdUrl(String);

impl ClientIdUrl {
    pub fn parse(raw: &str, loopback_http: bool) -> Result<Self, ClientIdUrlError> {
        let url = Url::parse(raw).map_err(|_| ClientIdUrlError::NotNormal)?;
        if url.as_str() != raw {
            return Err(ClientIdUrlError::NotNormal);
        }
        match url.scheme() {
            "https" if url.host().is_some() => {}
            "http" if loopback_http && super::is_loopback(&url) => {}
            _ => return Err(ClientIdUrlError::NotHttps),
        }
        if !url.username().is_empty() || url.password().is_some() || url.fragment().is_some() {
            return Err(ClientIdUrlError::Forbidden);
        }
        if url.path() == "/" {
            return Err(ClientIdUrlError::NoPath);
        }
        Ok(Self(raw.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// The host a person should see on the consent page.
    pub fn host(&self) -> String {
        Url::parse(&self.0)
            .ok()
            .and_then(|url| url.host_str().map(str::to_owned))
            .unwrap_or_default()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ClientDocumentError {
    #[error("the metadata document is not a JSON object")]
    NotAnObject,
    #[error("the metadata document's client_id is not the URL it was fetched from")]
    ClientIdMismatch,
    #[error("the metadata document names a client secret; only public clients (none) are supported")]
    ConfidentialClient,
    #[error("the metadata document's {0}")]
    Registration(#[from] RegistrationError),
}

/// Validates the document fetched from `url` and reads it as a client, under the same rules as
/// open registration (`redirect_uris`, `client_name`). Its `client_id` must equal `url` exactly.
pub fn client_from_document(
    url: &ClientIdUrl,
    document: &[u8],
    now: DateTime<Utc>,
) -> Result<OAuthClient, ClientDocumentError> {
    // Fetched from an address the client chose: the raw-value marker is refused before a `Value`
    // parse (`crate::json_marker`).
    let parsed = crate::json_marker::refuse_raw_value_marker(document).and_then(|()| serde_json::from_slice(document));
    let Ok(Value::Object(fields)) = parsed else {
        return Err(ClientDocumentError::NotAnObject);
    };
    if fields.get("client_id").and_then(Value::as_str) != Some(url.as_str()) {
        return Err(ClientDocumentError::ClientIdMismatch);
    }
    let auth_method = fields.get("token_endpoint_auth_method");
    let public = auth_method.is_none_or(|method| method.as_str() == Some("none"));
    if !public || fields.contains_key("client_secret") || fields.contains_key("client_secret_expires_at") {
        return Err(ClientDocumentError::ConfidentialClient);
    }
    let redirect_uris = match fields.get("redirect_uris") {
        Some(Value::Array(list)) => list
            .iter()
            .map(|uri| uri.as_str().map(str::to_owned))
            .collect::<Option<Vec<_>>>()
            .ok_or(RegistrationError::RedirectUriCount(0))?,
        _ => Vec::new(),
    };
    let client_name = match fields.get("client_name") {
        None | Some(Value::Null) => None,
        Some(Value::String(name)) => Some(name.as_str()),
        Some(_) => return Err(RegistrationError::ClientName.into()),
    };
    let registration = ClientRegistration::parse(&redirect_uris, client_name)?;
    Ok(OAuthClient::register(url.as_str().to_owned(), registration, now))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn client_id_url_rules() {
        let rows: &[(&str, bool, Result<(), ClientIdUrlError>)] = &[
            ("https://app.example.com/client.json", false, Ok(())),
            ("https://app.example.com:8443/oauth/client?v=1", false, Ok(())),
            ("http://127.0.0.1:5000/client.json", true, Ok(())),
            ("http://localhost:5000/client.json", true, Ok(())),
            (
                "http://127.0.0.1:5000/client.json",
                false,
                Err(ClientIdUrlError::NotHttps),
            ),
            (
                "http://app.example.com/client.json",
                true,
                Err(ClientIdUrlError::NotHttps),
            ),
            ("https://app.example.com/", false, Err(ClientIdUrlError::NoPath)),
            ("https://app.example.com", false, Err(ClientIdUrlError::NotNormal)),
            ("HTTPS://app.example.com/c", false, Err(ClientIdUrlError::NotNormal)),
            ("https://App.example.com/c", false, Err(ClientIdUrlError::NotNormal)),
            (
                "https://app.example.com/a/../c",
                false,
                Err(ClientIdUrlError::NotNormal),
            ),
            (
                "https://app.example.com/a/%2e%2e/c",
                false,
                Err(ClientIdUrlError::NotNormal),
            ),
            ("https://u:p@app.example.com/c", false, Err(ClientIdUrlError::Forbidden)),
            ("https://app.example.com/c#x", false, Err(ClientIdUrlError::Forbidden)),
            ("ftp://app.example.com/c", false, Err(ClientIdUrlError::NotHttps)),
            ("not a url", false, Err(ClientIdUrlError::NotNormal)),
        ];
        for (raw, loopback, expected) in rows {
            assert_eq!(ClientIdUrl::parse(raw, *loopback).map(|_| ()), *expected, "{raw}");
        }
    }

    #[test]
    fn client_ids_that_mean_a_document() {
        assert!(is_client_id_url("https://a.example/c"));
        assert!(is_client_id_url("HTTP://127.0.0.1/c"));
        assert!(!is_client_id_url("0b6f3c1e-6a0e-4c8e-9f0e-5d2b7a1c9e42"));
        assert!(!is_client_id_url("http"));
    }

    fn url() -> ClientIdUrl {
        ClientIdUrl::parse("https://app.example.com/client.json", false).unwrap()
    }

    fn check(document: Value) -> Result<OAuthClient, ClientDocumentError> {
        client_from_document(&url(), document.to_string().as_bytes(), Utc::now())
    }

    #[test]
    fn a_document_naming_the_raw_value_marker_is_not_an_object_and_is_not_parsed() {
        let id = url().as_str().to_owned();
        let marked = format!(
            r#"{{"client_id":"{id}","redirect_uris":["https://app.example.com/cb"],"logo":{{"$serde_json::private::RawValue":"[[[0]]]"}}}}"#
        );
        assert_eq!(
            client_from_document(&url(), marked.as_bytes(), Utc::now()).unwrap_err(),
            ClientDocumentError::NotAnObject
        );
    }

    #[test]
    fn document_rules() {
        let id = url().as_str().to_owned();
        let cb = "https://app.example.com/cb";
        let client = check(json!({ "client_id": id, "client_name": "App", "redirect_uris": [cb] })).unwrap();
        assert_eq!(client.client_id, id);
        assert_eq!(client.label(), "App");
        assert!(client.registered_redirect_uri(cb).is_some());
        assert!(check(json!({ "client_id": id, "redirect_uris": [cb], "token_endpoint_auth_method": "none" })).is_ok());

        let rows = [
            (json!([1]), ClientDocumentError::NotAnObject),
            (
                json!({ "client_id": "https://evil.example/client.json", "redirect_uris": [cb] }),
                ClientDocumentError::ClientIdMismatch,
            ),
            (json!({ "redirect_uris": [cb] }), ClientDocumentError::ClientIdMismatch),
            (
                json!({ "client_id": id, "redirect_uris": [cb], "client_secret": "s" }),
                ClientDocumentError::ConfidentialClient,
            ),
            (
                json!({ "client_id": id, "redirect_uris": [cb], "token_endpoint_auth_method": "private_key_jwt" }),
                ClientDocumentError::ConfidentialClient,
            ),
            (
                json!({ "client_id": id }),
                RegistrationError::RedirectUriCount(0).into(),
            ),
            (
                json!({ "client_id": id, "redirect_uris": ["javascript:alert(1)"] }),
                ClientDocumentError::Registration(RegistrationError::RedirectUri {
                    index: 0,
                    reason: super::super::RedirectUriError::BrowserExecutable("javascript".into()),
                }),
            ),
            (
                json!({ "client_id": id, "redirect_uris": [cb], "client_name": 7 }),
                RegistrationError::ClientName.into(),
            ),
        ];
        for (document, expected) in rows {
            assert_eq!(check(document.clone()).unwrap_err(), expected, "{document}");
        }
        assert_eq!(
            client_from_document(&url(), b"not json", Utc::now()).unwrap_err(),
            ClientDocumentError::NotAnObject
        );
    }
}
