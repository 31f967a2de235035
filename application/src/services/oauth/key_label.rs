//! The name of the key consent mints: the client's label, shortened to fit a key name. A client
//! without a `client_name` is labelled with its `client_id`, and a metadata-document URL may be
//! longer than a key name may be; refusing the consent for that would leave the client unable
//! to connect at all.

use svc_domain::connector_key::KEY_NAME_MAX_CHARS;
use svc_domain::oauth::OAuthClient;

/// Marks a label that was cut short, so the key list does not show a truncated URL as whole.
const SHORTENED_MARK: char = '…';

/// The client's label, at most [`KEY_NAME_MAX_CHARS`] characters (cut on a character boundary).
pub(super) fn key_label(client: &OAuthClient) -> String {
    shortened(client.label().trim())
}

fn shortened(label: &str) -> String {
    if label.chars().count() <= KEY_NAME_MAX_CHARS {
        return label.to_owned();
    }
    let mut kept: String = label.chars().take(KEY_NAME_MAX_CHARS - 1).collect();
    kept.push(SHORTENED_MARK);
    kept
}

#[cfg(test)]
mod tests {
    use svc_domain::connector_key::KeyName;

    use super::*;

    #[test]
    fn labels_are_shortened_to_a_valid_key_name() {
        let long_url = format!("https://client.example.com/{}", "p".repeat(200));
        let long_accented = "é".repeat(KEY_NAME_MAX_CHARS + 5);
        let exact = "x".repeat(KEY_NAME_MAX_CHARS);
        let rows: [(&str, String); 4] = [
            ("Claude Desktop", "Claude Desktop".into()),
            (&exact, exact.clone()),
            (&long_url, format!("{}…", &long_url[..KEY_NAME_MAX_CHARS - 1])),
            (&long_accented, format!("{}…", "é".repeat(KEY_NAME_MAX_CHARS - 1))),
        ];
        for (label, expected) in rows {
            let name = shortened(label);
            assert_eq!(name, expected, "{label}");
            assert!(KeyName::parse(&name).is_ok(), "{name} is a valid key name");
        }
    }
}
