//! The flow a connected client went through, for the OAuth services' tests: a key typed on the
//! consent form, then the code the approval redirects with.

use chrono::{DateTime, Utc};

use crate::services::oauth::{AuthorizationRequest, ConsentCredential, OAuthService, RegisterClient};
use crate::services::operator::IssueConnectorKey;
use crate::testing::OAuthFakes;

/// RFC 7636 Appendix B.
pub const VERIFIER: &str = "dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk";
pub const CHALLENGE: &str = "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM";
pub const REDIRECT: &str = "http://127.0.0.1:47613/callback";

/// A registered client, approved with a fresh key of `ada` expiring at `expires_at`; answers
/// its id and the code.
pub async fn approved_code(
    fakes: &OAuthFakes,
    service: &OAuthService,
    expires_at: Option<DateTime<Utc>>,
) -> (String, String) {
    let typed = fakes
        .operator
        .connector_key_service()
        .issue(IssueConnectorKey {
            caller_user_id: "ada".into(),
            name: Some("laptop".into()),
            app_id: None,
            expires_at,
        })
        .await
        .unwrap();
    let client = service
        .register(RegisterClient {
            redirect_uris: vec![REDIRECT.into()],
            client_name: Some("Desktop host".into()),
        })
        .await
        .unwrap();
    let request = AuthorizationRequest {
        response_type: Some("code".into()),
        client_id: Some(client.client_id.clone()),
        redirect_uri: Some(REDIRECT.into()),
        code_challenge: Some(CHALLENGE.into()),
        code_challenge_method: Some("S256".into()),
        state: Some("s1".into()),
        scope: Some("mcp".into()),
        resource: None,
    };
    let credential = ConsentCredential::ApiKey(typed.plaintext_key.expose().to_owned());
    let location = service.approve(&request, credential).await.unwrap();
    let code = location
        .split(['?', '&'])
        .find_map(|pair| pair.strip_prefix("code="))
        .expect("a code in the Location")
        .to_owned();
    (client.client_id, code)
}
