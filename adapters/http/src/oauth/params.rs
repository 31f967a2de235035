//! Query strings and form bodies (`application/x-www-form-urlencoded`). A parameter sent twice
//! makes the request invalid (RFC 6749 section 3.1), so duplicates are reported, not merged.

use svc_application::services::oauth::{AuthorizationRequest, TokenRequest};

/// Largest accepted form or registration body.
pub(super) const MAX_BODY_BYTES: usize = 64 * 1024;

pub(super) struct Params(Vec<(String, String)>);

impl Params {
    pub(super) fn parse(encoded: &[u8]) -> Self {
        Self(url::form_urlencoded::parse(encoded).into_owned().collect())
    }

    /// The first parameter that appears more than once.
    pub(super) fn duplicate(&self) -> Option<&str> {
        self.repeated().next()
    }

    /// The first parameter other than `allowed` that appears more than once.
    pub(super) fn duplicate_besides(&self, allowed: &str) -> Option<&str> {
        self.repeated().find(|name| *name != allowed)
    }

    /// Whether `name` appears more than once.
    pub(super) fn repeats(&self, name: &str) -> bool {
        self.repeated().any(|repeated| repeated == name)
    }

    /// Each later appearance of a parameter. One pass with a set: a form of tens of thousands of
    /// distinct names (64 KiB) must not cost their square in comparisons.
    fn repeated(&self) -> impl Iterator<Item = &str> {
        let mut seen = std::collections::HashSet::with_capacity(self.0.len());
        self.0
            .iter()
            .map(|(name, _)| name.as_str())
            .filter(move |name| !seen.insert(*name))
    }

    /// The first parameter whose name or value holds U+0000, which no store can hold
    /// (`svc_domain::text::NUL_RULE`).
    pub(super) fn with_nul(&self) -> Option<&str> {
        self.0
            .iter()
            .find(|(name, value)| name.contains('\0') || value.contains('\0'))
            .map(|(name, _)| name.as_str())
    }

    pub(super) fn get(&self, name: &str) -> Option<String> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, v)| v.clone())
    }

    /// The value when sent and not blank (empty form fields arrive as empty strings).
    pub(super) fn filled(&self, name: &str) -> Option<String> {
        self.get(name).filter(|v| !v.trim().is_empty())
    }

    pub(super) fn pairs(&self) -> &[(String, String)] {
        &self.0
    }

    pub(super) fn authorization_request(&self) -> AuthorizationRequest {
        AuthorizationRequest {
            response_type: self.get("response_type"),
            client_id: self.get("client_id"),
            redirect_uri: self.get("redirect_uri"),
            code_challenge: self.get("code_challenge"),
            code_challenge_method: self.get("code_challenge_method"),
            state: self.get("state"),
            scope: self.get("scope"),
            resource: self.get("resource"),
        }
    }

    pub(super) fn token_request(&self) -> TokenRequest {
        TokenRequest {
            grant_type: self.get("grant_type"),
            code: self.get("code"),
            redirect_uri: self.get("redirect_uri"),
            client_id: self.get("client_id"),
            code_verifier: self.get("code_verifier"),
            resource: self.get("resource"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn duplicates_are_found() {
        assert_eq!(Params::parse(b"a=1&b=2&a=3").duplicate(), Some("a"));
        assert_eq!(Params::parse(b"a=1&b=2").duplicate(), None);
        let two_resources = Params::parse(b"resource=x&a=1&resource=y&b=2");
        assert_eq!(two_resources.duplicate_besides("resource"), None);
        assert!(two_resources.repeats("resource"));
        assert!(!two_resources.repeats("a"));
        assert_eq!(
            Params::parse(b"resource=x&resource=y&a=1&a=2").duplicate_besides("resource"),
            Some("a")
        );
        assert_eq!(Params::parse(b"a=1&b=x%00").with_nul(), Some("b"));
        assert_eq!(Params::parse(b"a=1&b=2").with_nul(), None);
        let params = Params::parse(b"state=x%26y&code=+a");
        assert_eq!(params.get("state").as_deref(), Some("x&y"));
        assert_eq!(params.filled("code").as_deref(), Some(" a"));
        assert_eq!(Params::parse(b"code=+").filled("code"), None);
    }
}
