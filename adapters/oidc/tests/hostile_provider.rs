//! Sign-in against a hostile provider on loopback: serde_json's raw-value marker nested in its
//! own string (each level read by a fresh reader, so the nesting is bounded by no recursion
//! limit) in the key set or in the ID token's `aud`, which `openidconnect` parses through
//! `serde_json::Value`, and an endless key set. Each sign-in fails with the port's error; none
//! overflows the stack (which aborts the whole process) or waits out the deadline.

use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use svc_application::ports::external_identity::{ExternalSignInError, IdentityProvider};
use svc_domain::json_marker::RAW_VALUE_REFUSAL;
use svc_oidc::{OidcProvider, OidcProviderSettings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// A key the provider may publish (never used to verify: the tests fail before).
const RSA_KEY: &str = r#"{"kty":"RSA","kid":"k1","use":"sig","alg":"RS256","n":"sXchDaQebHnPiGvyDOAT4saGEUetSyo9MKLOoWFsueri23bOdgWp4Dy1WlUzewbgBHod5pcM9H95GQRV3JDXboIRROSBigeC5yjU1hGzHHyXss8UDprecbAYxknTcQkhslANGRUZmdTOQ5qTRsLAt6BTYuyvVRdhS8exSZEy_c4gs_7svlJJQ4H9_NxsiIoLwAEk7-Q3UXERGYw_75IDrGA84-lA_-Ct4eTlXHBIY2EaV7t7LjJaynVJCpkv4LKjTTAumiGUIuQhrNhZLuF_RJLqHpM2kgWFLU7-VTdL1VbC2tejvcI2BlMkEpk1BzBZI0KQB0GaDWFLN-aEAw3vRw","e":"AQAB"}"#;

/// What the provider answers at `/jwks` and `/token`.
#[derive(Clone, Copy)]
enum Hostility {
    /// A key set whose key's `n` is the nested markers.
    MarkedKeySet,
    /// A sound key set; a token response whose ID token's `aud` is the nested markers.
    MarkedIdToken,
    /// A sound discovery; a key set that never ends.
    EndlessKeySet,
}

/// The provider on loopback; serves until the test ends.
async fn provider(hostility: Hostility) -> String {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let issuer = format!("http://{}", listener.local_addr().unwrap());
    let base = issuer.clone();
    tokio::spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            let base = base.clone();
            tokio::spawn(async move { answer(stream, hostility, &base).await });
        }
    });
    issuer
}

/// The request's path, its body read (a token request is a form).
async fn read_request(stream: &mut TcpStream) -> Option<String> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.ok()? == 0 {
            return None;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
    let length = head
        .lines()
        .find_map(|line| line.strip_prefix("content-length:"))
        .map_or(0, |n| n.trim().parse().unwrap_or(0));
    let mut body = vec![0u8; length];
    stream.read_exact(&mut body).await.ok()?;
    head.split_whitespace().nth(1).map(str::to_owned)
}

async fn answer(mut stream: TcpStream, hostility: Hostility, issuer: &str) {
    let Some(path) = read_request(&mut stream).await else {
        return;
    };
    let body = match (path.as_str(), hostility) {
        ("/.well-known/openid-configuration", _) => serde_json::json!({
            "issuer": issuer,
            "authorization_endpoint": format!("{issuer}/auth"),
            "token_endpoint": format!("{issuer}/token"),
            "jwks_uri": format!("{issuer}/jwks"),
            "response_types_supported": ["code"],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["RS256"],
        })
        .to_string(),
        ("/jwks", Hostility::MarkedKeySet) => format!(
            r#"{{"keys":[{{"kty":"RSA","kid":"k1","n":{},"e":"AQAB"}}]}}"#,
            svc_domain::json_marker::nested_raw_value_markers(10)
        ),
        ("/jwks", Hostility::EndlessKeySet) => {
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
                .await;
            let chunk = format!("{:x}\r\n{}\r\n", 16 * 1024, " ".repeat(16 * 1024));
            while stream.write_all(chunk.as_bytes()).await.is_ok() {}
            return;
        }
        ("/jwks", Hostility::MarkedIdToken) => format!(r#"{{"keys":[{RSA_KEY}]}}"#),
        ("/token", _) => {
            let header = URL_SAFE_NO_PAD.encode(r#"{"alg":"RS256","kid":"k1"}"#);
            let claims = format!(
                r#"{{"iss":"{issuer}","sub":"someone","aud":{},"exp":4102444800,"iat":1700000000,"nonce":"n"}}"#,
                svc_domain::json_marker::nested_raw_value_markers(10)
            );
            let id_token = format!("{header}.{}.c2lnbmF0dXJl", URL_SAFE_NO_PAD.encode(claims));
            serde_json::json!({ "access_token": "at", "token_type": "Bearer", "id_token": id_token }).to_string()
        }
        _ => {
            let _ = stream
                .write_all(b"HTTP/1.1 404 Not Found\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
            return;
        }
    };
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
}

fn svc_client_of(issuer: &str) -> OidcProvider {
    OidcProvider::new(OidcProviderSettings {
        issuer: issuer.to_owned(),
        client_id: "svc".into(),
        client_secret: "secret".into(),
        display_name: "Hostile ID".into(),
        redirect_uri: "http://127.0.0.1:1/oauth/oidc/callback".into(),
    })
    .unwrap()
}

#[tokio::test]
async fn a_key_set_of_nested_markers_makes_the_provider_unavailable() {
    let provider = svc_client_of(&provider(Hostility::MarkedKeySet).await);
    match provider.redirect().await {
        Err(ExternalSignInError::Unavailable(cause)) => {
            assert!(cause.starts_with("discovery: "), "{cause}");
            assert!(cause.contains(RAW_VALUE_REFUSAL), "{cause}");
        }
        Err(other) => panic!("another error: {other:?}"),
        Ok(redirect) => panic!("signed in through {}", redirect.url),
    }
}

#[tokio::test]
async fn an_id_token_of_nested_markers_is_an_exchange_refused() {
    let provider = svc_client_of(&provider(Hostility::MarkedIdToken).await);
    provider.redirect().await.expect("a sound discovery and key set");
    match provider
        .identity("code", "verifier-of-at-least-43-characters-0123456789", "n")
        .await
    {
        Err(ExternalSignInError::ExchangeRefused(cause)) => {
            assert!(cause.contains(RAW_VALUE_REFUSAL), "{cause}");
        }
        Err(other) => panic!("another error: {other:?}"),
        Ok(identity) => panic!("signed in as {identity:?}"),
    }
}

#[tokio::test]
async fn an_endless_key_set_stops_at_the_size_bound() {
    let provider = svc_client_of(&provider(Hostility::EndlessKeySet).await);
    let started = std::time::Instant::now();
    match provider.redirect().await {
        Err(ExternalSignInError::Unavailable(cause)) => {
            assert!(cause.contains("the answer is over 262144 bytes"), "{cause}");
        }
        Err(other) => panic!("another error: {other:?}"),
        Ok(redirect) => panic!("signed in through {}", redirect.url),
    }
    assert!(
        started.elapsed().as_secs() < 5,
        "stopped at the bound, not the deadline"
    );
}
