//! A provider's text parsed into a `Value`: its stream events, its error bodies and a model's
//! structured reply are written by a server (or a model) we do not control, so serde_json's
//! raw-value marker is refused first (`svc_domain::json_marker`: nested markers take a `Value`
//! parse past any stack).

use serde_json::Value;

/// `text` as a `Value`, or the error that refuses it (a marker, or not JSON).
pub(crate) fn parse(text: &str) -> Result<Value, serde_json::Error> {
    svc_domain::json_marker::refuse_raw_value_marker(text.as_bytes())?;
    serde_json::from_str(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_marker_in_a_providers_text_is_refused_and_json_is_read() {
        let marked = r#"{"choices":[{"delta":{"$serde_json::private::RawValue":"[[[[0]]]]"}}]}"#;
        let refused = parse(marked).unwrap_err().to_string();
        assert!(
            refused.starts_with(svc_domain::json_marker::RAW_VALUE_REFUSAL),
            "{refused}"
        );
        assert_eq!(parse(r#"{"a":[1]}"#).unwrap()["a"][0], 1);
    }
}
