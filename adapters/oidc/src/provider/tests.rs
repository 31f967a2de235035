//! The ID-token check on a client built from metadata in memory (no provider to reach).

use chrono::{TimeDelta, Utc};
use openidconnect::core::{
    CoreClient, CoreHmacKey, CoreIdToken, CoreIdTokenClaims, CoreJwsSigningAlgorithm, CoreProviderMetadata,
    CoreResponseType, CoreSubjectIdentifierType,
};
use openidconnect::{
    Audience, AuthUrl, ClientId, ClientSecret, EmptyAdditionalClaims, EmptyAdditionalProviderMetadata, IssuerUrl,
    JsonWebKeySetUrl, Nonce, ResponseTypes, StandardClaims, SubjectIdentifier, TokenUrl,
};
use svc_application::ports::external_identity::ExternalSignInError;

use super::{DiscoveredClient, Verification, verify};

const ISSUER: &str = "https://id.example.org";
const CLIENT_ID: &str = "svc";
const CLIENT_SECRET: &str = "svc's client secret, known to the provider too";
const NONCE: &str = "the nonce sent";

/// svc's client of a provider whose metadata advertises `algorithms`.
fn client_of_provider_advertising(algorithms: Vec<CoreJwsSigningAlgorithm>) -> DiscoveredClient {
    let metadata = CoreProviderMetadata::new(
        IssuerUrl::new(ISSUER.into()).unwrap(),
        AuthUrl::new(format!("{ISSUER}/auth")).unwrap(),
        JsonWebKeySetUrl::new(format!("{ISSUER}/jwks")).unwrap(),
        vec![ResponseTypes::new(vec![CoreResponseType::Code])],
        vec![CoreSubjectIdentifierType::Public],
        algorithms,
        EmptyAdditionalProviderMetadata {},
    )
    .set_token_endpoint(Some(TokenUrl::new(format!("{ISSUER}/token")).unwrap()));
    CoreClient::from_provider_metadata(
        metadata,
        ClientId::new(CLIENT_ID.into()),
        Some(ClientSecret::new(CLIENT_SECRET.into())),
    )
}

/// An ID token right in every claim, MAC'd with svc's client secret.
fn token_macd_with_the_client_secret(alg: CoreJwsSigningAlgorithm) -> CoreIdToken {
    let now = Utc::now();
    let claims = CoreIdTokenClaims::new(
        IssuerUrl::new(ISSUER.into()).unwrap(),
        vec![Audience::new(CLIENT_ID.into())],
        now + TimeDelta::minutes(5),
        now,
        StandardClaims::new(SubjectIdentifier::new("anyone-they-like".into())),
        EmptyAdditionalClaims {},
    )
    .set_nonce(Some(Nonce::new(NONCE.into())));
    let token = CoreIdToken::new(claims, &CoreHmacKey::new(CLIENT_SECRET), alg, None, None).unwrap();
    // As a provider's answer carries it: the compact serialization, parsed back.
    serde_json::from_value(serde_json::to_value(&token).unwrap()).unwrap()
}

#[test]
fn an_id_token_macd_with_the_client_secret_is_refused_even_when_the_provider_advertises_hmac() {
    for alg in [
        CoreJwsSigningAlgorithm::HmacSha256,
        CoreJwsSigningAlgorithm::HmacSha384,
        CoreJwsSigningAlgorithm::HmacSha512,
    ] {
        let client = client_of_provider_advertising(vec![alg.clone(), CoreJwsSigningAlgorithm::RsaSsaPkcs1V15Sha256]);
        let token = token_macd_with_the_client_secret(alg.clone());
        // The crate's own verifier, which follows the metadata, takes it: a forgery that works.
        let nonce = Nonce::new(NONCE.into());
        assert!(token.claims(&client.id_token_verifier(), &nonce).is_ok(), "{alg:?}");
        match verify(&client, &token, NONCE) {
            Err(Verification::Failed(ExternalSignInError::TokenRejected(cause))) => {
                assert!(cause.contains("is not one of"), "{alg:?}: {cause}");
            }
            Err(Verification::Failed(other)) => panic!("{alg:?}: refused for another reason: {other:?}"),
            Err(Verification::UnknownKey) => panic!("{alg:?}: refused for want of a key, not for its algorithm"),
            Ok(identity) => panic!("{alg:?}: accepted as {identity:?}"),
        }
    }
}
