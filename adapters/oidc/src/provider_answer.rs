//! What of a provider's answer `openidconnect` may parse. The crate reads parts of the discovery
//! document, of the key set (a key's members) and of the ID token (its header's `alg`, its
//! claims' `aud`) through `serde_json::Value`, which in this build reads serde_json's raw-value
//! marker as nested JSON text: markers nested in each other's strings overflow the stack and
//! abort the server (`svc_domain::json_marker`). So every answer must be JSON without the marker,
//! and so must the header and claims of every ID token it carries, before the crate sees it.

use base64::Engine;
use base64::engine::GeneralPurpose;
use base64::engine::general_purpose::NO_PAD;
use serde::Deserialize;
use serde::de::{Deserializer, IgnoredAny, MapAccess, Visitor};
use svc_domain::json_marker::refuse_raw_value_marker;

/// The crate's own decoding of a token's parts: what it cannot decode, it refuses itself.
const TOKEN_PART: GeneralPurpose = GeneralPurpose::new(
    &base64::alphabet::URL_SAFE,
    NO_PAD.with_decode_allow_trailing_bits(true),
);

/// serde_json's error when `body`, or the header or claims of an `id_token` in it, is not one
/// JSON value free of the raw-value marker.
pub(crate) fn refuse_raw_value_markers(body: &[u8]) -> Result<(), serde_json::Error> {
    refuse_raw_value_marker(body)?;
    // JSON by now: an answer that is no object carries no ID token.
    let tokens = serde_json::from_slice(body).map_or_else(|_| Vec::new(), |IdTokens(tokens)| tokens);
    for token in tokens {
        // Header and claims; the signature is bytes.
        for part in token.split('.').take(2) {
            if let Ok(json) = TOKEN_PART.decode(part) {
                refuse_raw_value_marker(&json)?;
            }
        }
    }
    Ok(())
}

/// The string values of the top-level `id_token` members: each of them, a repeated member too
/// (which of the two a parser keeps is its own business).
struct IdTokens(Vec<String>);

/// A member's value: only strings matter.
#[derive(Deserialize)]
#[serde(untagged)]
enum Member {
    Text(String),
    Other(IgnoredAny),
}

impl<'de> Deserialize<'de> for IdTokens {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_map(IdTokensVisitor)
    }
}

struct IdTokensVisitor;

impl<'de> Visitor<'de> for IdTokensVisitor {
    type Value = IdTokens;

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("an object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<IdTokens, A::Error> {
        let mut tokens = Vec::new();
        while let Some(name) = map.next_key::<String>()? {
            if name != "id_token" {
                map.next_value::<IgnoredAny>()?;
            } else if let Member::Text(token) = map.next_value()? {
                tokens.push(token);
            }
        }
        Ok(IdTokens(tokens))
    }
}

#[cfg(test)]
mod tests;
