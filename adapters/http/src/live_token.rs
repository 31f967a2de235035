//! Live-channel credentials bound to one session and app, signed with HMAC-SHA256 under the server
//! secret (shared by replicas): the `wsToken` (180 s, from the `_meta` slice) and the session token
//! (4 hours, returned by the first `wsToken` subscribe, for reconnects). Form:
//! `base64url(kind US sessionId US appId US expiresUnix US keyId) "." base64url(hmac)` (US = 0x1f;
//! `keyId` is the bearer key the token was minted under, empty without one; tokens minted before
//! it was added have four fields). A token is honoured only while its key is live.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use chrono::{DateTime, TimeZone, Utc};
use hmac::{Hmac, Mac};
use sha2::Sha256;
use subtle::ConstantTimeEq;

/// Default lifetime of a `wsToken`, reusable within it.
pub const WS_TOKEN_TTL_SECONDS: i64 = 180;
/// Default lifetime of a session token.
pub const SESSION_TOKEN_TTL_SECONDS: i64 = 4 * 3600;

/// Joins the signed fields; ids never contain this control character.
const FIELD_SEPARATOR: &str = "\u{1f}";

/// Which credential a token is; one kind is never accepted as the other.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TokenKind {
    WsToken,
    SessionToken,
}

impl TokenKind {
    fn tag(self) -> &'static str {
        match self {
            Self::WsToken => "ws",
            Self::SessionToken => "st",
        }
    }

    fn ttl_seconds(self) -> i64 {
        match self {
            Self::WsToken => WS_TOKEN_TTL_SECONDS,
            Self::SessionToken => SESSION_TOKEN_TTL_SECONDS,
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum LiveTokenError {
    #[error("malformed token")]
    Malformed,
    #[error("bad signature")]
    BadSignature,
    #[error("token expired")]
    Expired,
}

/// The claims a valid token carries.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveClaims {
    pub session_id: String,
    pub app_id: String,
    pub expires_at: DateTime<Utc>,
    /// The key the token was minted under; revoking it ends the token.
    pub key_id: Option<String>,
}

#[derive(Clone)]
pub struct LiveTokens {
    /// The first signs; every one verifies, so a rotated-out secret keeps its tokens valid.
    /// Each is HMAC's state after the key (its inner and outer pads hashed once, here, rather
    /// than on every token: two of a short token's five SHA-256 blocks).
    keyed: Vec<Hmac<Sha256>>,
}

fn hmac_keyed_with(secret: &[u8]) -> Hmac<Sha256> {
    Hmac::<Sha256>::new_from_slice(secret).expect("HMAC takes any key length")
}

fn sign_with(keyed: &Hmac<Sha256>, payload: &[u8]) -> [u8; 32] {
    let mut mac = keyed.clone();
    mac.update(payload);
    mac.finalize().into_bytes().into()
}

impl LiveTokens {
    pub fn new(secret: Vec<u8>) -> Self {
        Self::rotating(secret, Vec::new())
    }

    /// Signs with `signing`, and also accepts tokens signed with any of `older` (rotation).
    pub fn rotating(signing: Vec<u8>, older: Vec<Vec<u8>>) -> Self {
        let keyed = std::iter::once(signing)
            .chain(older)
            .map(|secret| hmac_keyed_with(&secret))
            .collect();
        Self { keyed }
    }

    fn sign(&self, payload: &[u8]) -> [u8; 32] {
        sign_with(&self.keyed[0], payload)
    }

    fn signed_by_any(&self, payload: &[u8], signature: &[u8]) -> bool {
        // Every secret is tried, so the time taken does not tell which one matched.
        self.keyed.iter().fold(false, |matched, keyed| {
            matched | bool::from(sign_with(keyed, payload).ct_eq(signature))
        })
    }

    /// A `wsToken`.
    pub fn mint(
        &self,
        session_id: &str,
        app_id: &str,
        key_id: Option<&str>,
        now: DateTime<Utc>,
    ) -> (String, DateTime<Utc>) {
        self.mint_kind(TokenKind::WsToken, session_id, app_id, key_id, now)
    }

    pub fn mint_kind(
        &self,
        kind: TokenKind,
        session_id: &str,
        app_id: &str,
        key_id: Option<&str>,
        now: DateTime<Utc>,
    ) -> (String, DateTime<Utc>) {
        let expires_at = now + chrono::Duration::seconds(kind.ttl_seconds());
        let expires = expires_at.timestamp().to_string();
        let payload = [kind.tag(), session_id, app_id, &expires, key_id.unwrap_or_default()].join(FIELD_SEPARATOR);
        // Both halves encoded into one string (one is minted per card document read).
        let mut token = String::with_capacity(payload.len() * 4 / 3 + 48);
        URL_SAFE_NO_PAD.encode_string(&payload, &mut token);
        token.push('.');
        URL_SAFE_NO_PAD.encode_string(self.sign(payload.as_bytes()), &mut token);
        (token, expires_at)
    }

    /// Checks a `wsToken`.
    pub fn verify(&self, token: &str, now: DateTime<Utc>) -> Result<LiveClaims, LiveTokenError> {
        self.verify_kind(TokenKind::WsToken, token, now)
    }

    pub fn verify_kind(&self, kind: TokenKind, token: &str, now: DateTime<Utc>) -> Result<LiveClaims, LiveTokenError> {
        let (payload_b64, sig_b64) = token.split_once('.').ok_or(LiveTokenError::Malformed)?;
        let payload = URL_SAFE_NO_PAD
            .decode(payload_b64)
            .map_err(|_| LiveTokenError::Malformed)?;
        let signature = URL_SAFE_NO_PAD.decode(sig_b64).map_err(|_| LiveTokenError::Malformed)?;
        if !self.signed_by_any(&payload, &signature) {
            return Err(LiveTokenError::BadSignature);
        }
        let payload = String::from_utf8(payload).map_err(|_| LiveTokenError::Malformed)?;
        let fields: Vec<&str> = payload.split(FIELD_SEPARATOR).collect();
        let (tag, session_id, app_id, expires, key_id) = match fields[..] {
            [tag, session_id, app_id, expires] => (tag, session_id, app_id, expires, ""),
            [tag, session_id, app_id, expires, key_id] => (tag, session_id, app_id, expires, key_id),
            _ => return Err(LiveTokenError::Malformed),
        };
        if tag != kind.tag() {
            return Err(LiveTokenError::Malformed);
        }
        let expires = expires.parse::<i64>().map_err(|_| LiveTokenError::Malformed)?;
        let (session_id, app_id) = (session_id.to_owned(), app_id.to_owned());
        let expires_at = Utc
            .timestamp_opt(expires, 0)
            .single()
            .ok_or(LiveTokenError::Malformed)?;
        if now >= expires_at {
            return Err(LiveTokenError::Expired);
        }
        Ok(LiveClaims {
            session_id,
            app_id,
            expires_at,
            key_id: (!key_id.is_empty()).then(|| key_id.to_owned()),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_minted_token_verifies_until_it_expires() {
        let tokens = LiveTokens::new(b"secret".to_vec());
        let now = Utc::now();
        let (token, exp) = tokens.mint("s-1", "app.1", Some("k1"), now);
        let claims = tokens.verify(&token, now).unwrap();
        assert_eq!((claims.session_id.as_str(), claims.app_id.as_str()), ("s-1", "app.1"));
        assert_eq!(claims.key_id.as_deref(), Some("k1"));
        assert_eq!(tokens.verify(&token, exp), Err(LiveTokenError::Expired));
    }

    #[test]
    fn tampering_and_foreign_secrets_are_refused() {
        let tokens = LiveTokens::new(b"secret".to_vec());
        let (token, _) = tokens.mint("s-1", "a", None, Utc::now());
        let other = LiveTokens::new(b"other".to_vec());
        assert_eq!(other.verify(&token, Utc::now()), Err(LiveTokenError::BadSignature));
        let forged = format!(
            "{}.{}",
            URL_SAFE_NO_PAD.encode("ws\u{1f}s-2\u{1f}a\u{1f}9999999999"),
            token.split('.').nth(1).unwrap()
        );
        assert_eq!(tokens.verify(&forged, Utc::now()), Err(LiveTokenError::BadSignature));
        assert_eq!(tokens.verify("garbage", Utc::now()), Err(LiveTokenError::Malformed));
    }

    #[test]
    fn after_rotation_the_first_secret_signs_and_every_secret_verifies() {
        let now = Utc::now();
        let old = LiveTokens::new(b"old".to_vec());
        let (old_token, _) = old.mint("s-1", "a", None, now);
        let rotated = LiveTokens::rotating(b"new".to_vec(), vec![b"old".to_vec()]);
        assert!(
            rotated.verify(&old_token, now).is_ok(),
            "a token of the old secret still verifies"
        );
        let (new_token, _) = rotated.mint("s-1", "a", None, now);
        assert!(LiveTokens::new(b"new".to_vec()).verify(&new_token, now).is_ok());
        assert_eq!(old.verify(&new_token, now), Err(LiveTokenError::BadSignature));
    }

    #[test]
    fn kinds_are_not_interchangeable() {
        let tokens = LiveTokens::new(b"secret".to_vec());
        let now = Utc::now();
        let (session_token, exp) = tokens.mint_kind(TokenKind::SessionToken, "s", "a", None, now);
        assert_eq!(exp - now, chrono::Duration::hours(4));
        assert!(tokens.verify_kind(TokenKind::SessionToken, &session_token, now).is_ok());
        assert_eq!(tokens.verify(&session_token, now), Err(LiveTokenError::Malformed));
    }
}
