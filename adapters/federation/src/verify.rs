//! The verifier port over `jsonwebtoken`.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::jwk::{AlgorithmParameters, EllipticCurve, Jwk};
use jsonwebtoken::{Algorithm, DecodingKey, Validation};
use serde::Deserialize;
use svc_application::ports::federation::{FederatedIdentity, FederatedTokenVerifier, TokenRejection, UnverifiedToken};

use crate::keys::{JwksCache, KeyFetchSettings};

/// Clock skew tolerated on `exp` and `nbf`, in seconds.
const LEEWAY_SECONDS: u64 = 30;

pub struct JwtFederatedVerifier {
    keys: JwksCache,
}

impl JwtFederatedVerifier {
    pub fn new(settings: KeyFetchSettings) -> Self {
        Self {
            keys: JwksCache::new(settings),
        }
    }
}

/// `aud` is a string or an array of strings (RFC 7519, 4.1.3).
#[derive(Deserialize)]
#[serde(untagged)]
enum Audience {
    One(String),
    Many(Vec<String>),
}

#[derive(Deserialize)]
struct PeekedClaims {
    aud: Option<Audience>,
    iss: Option<String>,
}

#[derive(Deserialize)]
struct VerifiedClaims {
    iss: String,
    sub: String,
}

/// The one algorithm a key of this type verifies; `None` for key types we never accept
/// (symmetric keys, P-384, ...).
fn algorithm_of(jwk: &Jwk) -> Option<Algorithm> {
    match &jwk.algorithm {
        AlgorithmParameters::RSA(_) => Some(Algorithm::RS256),
        AlgorithmParameters::EllipticCurve(ec) if ec.curve == EllipticCurve::P256 => Some(Algorithm::ES256),
        AlgorithmParameters::OctetKeyPair(okp) if okp.curve == EllipticCurve::Ed25519 => Some(Algorithm::EdDSA),
        _ => None,
    }
}

/// A token part (header or claims), base64url-decoded, unless it is not JSON free of serde_json's
/// raw-value marker: `jsonwebtoken` keeps a header's unknown members as `Value`s
/// (`Header.extras`), which read the marker as nested JSON text past any stack
/// (`svc_domain::json_marker`). Every part is checked here before the crate decodes it.
fn part_json(part: &str) -> Option<Vec<u8>> {
    URL_SAFE_NO_PAD
        .decode(part)
        .ok()
        .filter(|bytes| svc_domain::json_marker::refuse_raw_value_marker(bytes).is_ok())
}

fn rejection(kind: &ErrorKind) -> TokenRejection {
    match kind {
        ErrorKind::InvalidSignature => TokenRejection::Signature,
        ErrorKind::ExpiredSignature | ErrorKind::ImmatureSignature => TokenRejection::Time,
        ErrorKind::InvalidAudience | ErrorKind::InvalidIssuer => TokenRejection::Binding,
        ErrorKind::InvalidAlgorithm | ErrorKind::MissingAlgorithm | ErrorKind::InvalidAlgorithmName => {
            TokenRejection::Algorithm
        }
        _ => TokenRejection::Malformed,
    }
}

#[async_trait::async_trait]
impl FederatedTokenVerifier for JwtFederatedVerifier {
    fn is_jwt(&self, bearer: &str) -> bool {
        let mut parts = bearer.split('.');
        let (Some(header), Some(_), Some(_), None) = (parts.next(), parts.next(), parts.next(), parts.next()) else {
            return false;
        };
        part_json(header)
            .and_then(|bytes| serde_json::from_slice::<serde_json::Value>(&bytes).ok())
            .is_some_and(|h| h.get("alg").is_some())
    }

    fn peek(&self, token: &str) -> Result<UnverifiedToken, TokenRejection> {
        let claims: PeekedClaims =
            jsonwebtoken::dangerous::insecure_decode_claims(token).map_err(|_| TokenRejection::Malformed)?;
        let audiences = match claims.aud {
            Some(Audience::One(aud)) => vec![aud],
            Some(Audience::Many(list)) => list,
            None => vec![],
        };
        Ok(UnverifiedToken {
            audiences,
            issuer: claims.iss,
        })
    }

    async fn verify(
        &self,
        token: &str,
        issuer: &str,
        jwks_url: Option<&str>,
        audience: &str,
    ) -> Result<FederatedIdentity, TokenRejection> {
        if !token.split('.').take(2).all(|part| part_json(part).is_some()) {
            return Err(TokenRejection::Malformed);
        }
        // `alg: none` and unknown algorithms fail here, before any key is fetched.
        let header = jsonwebtoken::decode_header(token).map_err(|e| match e.kind() {
            ErrorKind::InvalidAlgorithmName | ErrorKind::UnsupportedAlgorithm => TokenRejection::Algorithm,
            _ => TokenRejection::Malformed,
        })?;
        if !matches!(header.alg, Algorithm::RS256 | Algorithm::ES256 | Algorithm::EdDSA) {
            return Err(TokenRejection::Algorithm);
        }
        let url = self
            .keys
            .jwks_url(issuer, jwks_url)
            .await
            .map_err(TokenRejection::KeysUnavailable)?;
        let keys = self
            .keys
            .keys(&url, header.kid.as_deref())
            .await
            .map_err(TokenRejection::KeysUnavailable)?;
        let jwk = match header.kid.as_deref() {
            Some(kid) => keys.find(kid),
            // No kid: only an issuer with a single key can be meant.
            None if keys.keys.len() == 1 => keys.keys.first(),
            None => None,
        }
        .ok_or(TokenRejection::UnknownKey)?;
        let allowed = algorithm_of(jwk).ok_or(TokenRejection::Algorithm)?;
        if header.alg != allowed {
            return Err(TokenRejection::Algorithm);
        }
        let key = DecodingKey::from_jwk(jwk).map_err(|_| TokenRejection::UnknownKey)?;
        let mut validation = Validation::new(allowed);
        validation.set_audience(&[audience]);
        validation.set_issuer(&[issuer]);
        validation.set_required_spec_claims(&["exp", "aud", "iss", "sub"]);
        validation.validate_nbf = true;
        validation.leeway = LEEWAY_SECONDS;
        let data = jsonwebtoken::decode::<VerifiedClaims>(token, &key, &validation).map_err(|e| rejection(e.kind()))?;
        Ok(FederatedIdentity {
            issuer: data.claims.iss,
            subject: data.claims.sub,
        })
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn part(value: serde_json::Value) -> String {
        URL_SAFE_NO_PAD.encode(value.to_string())
    }

    fn verifier() -> JwtFederatedVerifier {
        JwtFederatedVerifier::new(KeyFetchSettings::default())
    }

    #[test]
    fn only_three_parts_with_a_json_header_naming_alg_look_like_a_jwt() {
        let v = verifier();
        let header = part(json!({ "alg": "ES256" }));
        assert!(v.is_jwt(&format!("{header}.{}.sig", part(json!({})))));
        assert!(v.is_jwt(&format!("{}.e30.", part(json!({ "alg": "none" })))));
        for native in [
            "svc_user_AbCdEf0123456789",
            "svc_user_abc.def.ghi",
            &format!("{header}.e30"),
            &format!("{header}.e30.sig.extra"),
            &format!("{}.e30.sig", part(json!({ "typ": "JWT" }))),
        ] {
            assert!(!v.is_jwt(native), "{native}");
        }
    }

    #[tokio::test]
    async fn verify_refuses_the_raw_value_marker_in_the_header_or_the_claims_before_any_key_fetch() {
        let v = verifier();
        let marked: serde_json::Value = json!({ "$serde_json::private::RawValue": "[0]" });
        let header = part(json!({ "alg": "ES256" }));
        let claims = part(json!({ "iss": "http://127.0.0.1:1", "sub": "s", "aud": "app1", "exp": 4102444800u64 }));
        let nested = URL_SAFE_NO_PAD.encode(format!(
            r#"{{"alg":"ES256","x":{}}}"#,
            svc_domain::json_marker::nested_raw_value_markers(10)
        ));
        for token in [
            // A header's unknown member is a `Value` in `jsonwebtoken` (`Header.extras`).
            format!("{}.{claims}.sig", part(json!({ "alg": "ES256", "x": marked }))),
            format!("{nested}.{claims}.sig"),
            format!("{header}.{}.sig", part(json!({ "sub": "s", "x": marked }))),
        ] {
            // Nothing listens at the issuer: a token that got past the check would be refused
            // for want of keys.
            let refused = v.verify(&token, "http://127.0.0.1:1", None, "app1").await;
            assert_eq!(refused, Err(TokenRejection::Malformed), "{token}");
        }
        let sound = v
            .verify(&format!("{header}.{claims}.sig"), "http://127.0.0.1:1", None, "app1")
            .await;
        assert!(matches!(sound, Err(TokenRejection::KeysUnavailable(_))), "{sound:?}");
    }

    #[test]
    fn peek_reads_one_or_many_audiences_and_the_issuer() {
        let v = verifier();
        let header = part(json!({ "alg": "ES256" }));
        let one = format!("{header}.{}.sig", part(json!({ "aud": "app1", "iss": "https://i" })));
        assert_eq!(
            v.peek(&one),
            Ok(UnverifiedToken {
                audiences: vec!["app1".into()],
                issuer: Some("https://i".into()),
            })
        );
        let many = format!("{header}.{}.sig", part(json!({ "aud": ["a", "b"] })));
        assert_eq!(v.peek(&many).unwrap().audiences, ["a", "b"]);
        assert_eq!(
            v.peek(&format!("{header}.not-json.sig")),
            Err(TokenRejection::Malformed)
        );
    }
}
