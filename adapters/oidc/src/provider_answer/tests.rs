use base64::Engine;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use svc_domain::json_marker::RAW_VALUE_REFUSAL;

use super::refuse_raw_value_markers;

const MARKED: &str = r#"{"$serde_json::private::RawValue":"[0]"}"#;

fn id_token(header: &str, claims: &str) -> String {
    format!(
        "{}.{}.c2ln",
        URL_SAFE_NO_PAD.encode(header),
        URL_SAFE_NO_PAD.encode(claims)
    )
}

fn token_response(id_tokens: &[String]) -> String {
    let members: Vec<String> = id_tokens.iter().map(|t| format!(r#""id_token":"{t}""#)).collect();
    format!(r#"{{"access_token":"at","token_type":"Bearer",{}}}"#, members.join(","))
}

#[test]
fn the_marker_is_refused_in_the_answer_and_in_each_id_tokens_header_and_claims() {
    let header = r#"{"alg":"RS256"}"#;
    let claims = r#"{"iss":"https://id.example.org","aud":"svc"}"#;
    let marked_claims = format!(r#"{{"iss":"https://id.example.org","aud":{MARKED}}}"#);
    let marked_header = format!(r#"{{"alg":{MARKED}}}"#);
    for refused in [
        format!(r#"{{"keys":[{{"kty":"RSA","n":{MARKED}}}]}}"#),
        token_response(&[id_token(header, &marked_claims)]),
        token_response(&[id_token(&marked_header, claims)]),
        // A repeated member: whichever one a parser keeps.
        token_response(&[id_token(header, claims), id_token(header, &marked_claims)]),
    ] {
        let message = refuse_raw_value_markers(refused.as_bytes()).unwrap_err().to_string();
        assert!(message.starts_with(RAW_VALUE_REFUSAL), "{refused}: {message}");
    }
    for fine in [
        token_response(&[id_token(header, claims)]),
        // What is no base64 is the crate's to refuse.
        token_response(&["no base64!.at all?.sig".into()]),
        r#"{"id_token":7}"#.into(),
        r#"["id_token"]"#.into(),
    ] {
        assert!(refuse_raw_value_markers(fine.as_bytes()).is_ok(), "{fine}");
    }
}

#[test]
fn an_answer_that_is_not_json_is_refused_with_serde_jsons_error() {
    for (body, error) in [
        ("<html>502</html>", "expected value at line 1 column 1"),
        ("", "EOF while parsing a value at line 1 column 0"),
    ] {
        assert_eq!(
            refuse_raw_value_markers(body.as_bytes()).unwrap_err().to_string(),
            error
        );
    }
}
