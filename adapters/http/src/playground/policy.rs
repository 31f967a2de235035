//! The policy a strict MCP-Apps host builds from a resource's `_meta.ui.csp` and nothing else
//! (the same rule as the browser tests' `tests/browser/host-policy.js`): `resourceDomains` feed
//! script, style, image, font and media sources, `connectDomains` feed `connect-src`; inline
//! scripts and styles (the runtime and the component are inline), no `blob:`, no eval, no
//! workers, no nested frames. Only the playground page may frame the card, and the document is
//! sandboxed by its own policy (`sandbox allow-scripts allow-forms`, the playground frame's
//! attribute): opened as a tab of its own, component code still runs on an opaque origin, never
//! on the server's, where the console's cookie and CSRF token are.

use serde_json::Value;

/// What a card document may do beside running scripts: no `allow-same-origin`, ever.
pub const CARD_SANDBOX: &str = "allow-scripts allow-forms";

/// The `Content-Security-Policy` header value for a card document declaring `csp`.
pub fn from_declared(csp: &Value) -> String {
    let resources = origins(&csp["resourceDomains"]);
    let connects = origins(&csp["connectDomains"]);
    let connect = if connects.is_empty() {
        "'none'".to_owned()
    } else {
        connects
    };
    [
        "default-src 'none'".to_owned(),
        format!("script-src 'unsafe-inline' {resources}"),
        format!("style-src 'unsafe-inline' {resources}"),
        format!("img-src data: {resources}"),
        format!("font-src data: {resources}"),
        format!("media-src data: {resources}"),
        format!("connect-src {connect}"),
        "frame-src 'none'".to_owned(),
        "object-src 'none'".to_owned(),
        "base-uri 'none'".to_owned(),
        "worker-src 'none'".to_owned(),
        "frame-ancestors 'self'".to_owned(),
        format!("sandbox {CARD_SANDBOX}"),
    ]
    .iter()
    .map(|directive| directive.trim())
    .collect::<Vec<_>>()
    .join("; ")
}

/// The list's origins joined by spaces; anything not shaped like `scheme://host[:port]` (a
/// quote, a semicolon, a space could smuggle a directive in) is dropped.
fn origins(list: &Value) -> String {
    list.as_array()
        .into_iter()
        .flatten()
        .filter_map(Value::as_str)
        .filter(|origin| is_origin(origin))
        .collect::<Vec<_>>()
        .join(" ")
}

fn is_origin(text: &str) -> bool {
    let Some((scheme, rest)) = text.split_once("://") else {
        return false;
    };
    let scheme_ok = scheme.chars().next().is_some_and(|c| c.is_ascii_alphabetic())
        && scheme
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '+' | '.' | '-'));
    let rest_ok = !rest.is_empty()
        && rest
            .chars()
            .all(|c| !c.is_whitespace() && !c.is_control() && !matches!(c, ';' | '\'' | '"' | ','));
    scheme_ok && rest_ok
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn declared_domains_feed_their_directives() {
        let policy = from_declared(&json!({
            "connectDomains": ["ws://127.0.0.1:6781", "http://127.0.0.1:6781"],
            "resourceDomains": ["https://cdn.example"],
        }));
        assert!(
            policy.contains("connect-src ws://127.0.0.1:6781 http://127.0.0.1:6781;"),
            "{policy}"
        );
        assert!(
            policy.contains("script-src 'unsafe-inline' https://cdn.example;"),
            "{policy}"
        );
        assert!(policy.contains("frame-ancestors 'self'"), "{policy}");
        assert!(policy.ends_with("; sandbox allow-scripts allow-forms"), "{policy}");
        assert!(!policy.contains("allow-same-origin"), "{policy}");
    }

    #[test]
    fn nothing_declared_connects_nowhere() {
        let policy = from_declared(&json!({}));
        assert!(policy.contains("connect-src 'none';"), "{policy}");
        assert!(policy.contains("script-src 'unsafe-inline';"), "{policy}");
    }

    #[test]
    fn an_entry_that_could_add_a_directive_is_dropped() {
        let policy = from_declared(&json!({
            "connectDomains": ["https://a.example; script-src *", "'self'", "https://b.example"],
        }));
        assert!(policy.contains("connect-src https://b.example;"), "{policy}");
        assert!(!policy.contains("script-src *"), "{policy}");
    }
}
