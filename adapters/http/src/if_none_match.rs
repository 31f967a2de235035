//! `If-None-Match` (RFC 9110 §13.1.2): whether a GET's validators name the representation it would
//! be answered with, so the answer is 304 instead of the body.

/// Whether an `If-None-Match` value (`*` or a list of entity tags) names `etag`. The comparison is
/// weak: `W/"x"` names `"x"`.
pub fn names(header: &str, etag: &str) -> bool {
    header
        .split(',')
        .map(str::trim)
        .any(|tag| tag == "*" || tag.strip_prefix("W/").unwrap_or(tag) == etag)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_list_or_a_wildcard_names_the_tag_weakly() {
        let etag = "\"abc\"";
        for header in ["\"abc\"", "W/\"abc\"", "\"x\", \"abc\"", "*", "\"x\",W/\"abc\""] {
            assert!(names(header, etag), "{header}");
        }
        for header in ["\"abcd\"", "abc", "\"x\"", "W/\"ab\"", ""] {
            assert!(!names(header, etag), "{header}");
        }
    }
}
