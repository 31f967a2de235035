//! Which content coding a client accepts for an answer we can send compressed (RFC 9110 §12.5.3,
//! `Accept-Encoding`). Only gzip is offered: browsers and most HTTP clients an MCP SDK runs on
//! ask for it (Node's fetch, httpx; reqwest with its `gzip` feature, curl `--compressed`), and it
//! is what our kept pieces are deflated for. A client that does not ask gets identity.

use poem::Request;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ContentCoding {
    Identity,
    Gzip,
}

impl ContentCoding {
    /// The coding to answer `req` with: gzip when its `Accept-Encoding` admits it. Several
    /// `Accept-Encoding` lines are one list (RFC 9110 §5.3): `gzip;q=0` on one line refuses gzip
    /// even when `*` arrives on another.
    pub fn accepted_by(req: &Request) -> Self {
        let mut lines = req
            .headers()
            .get_all(poem::http::header::ACCEPT_ENCODING)
            .iter()
            .filter_map(|value| value.to_str().ok());
        let admits_gzip = match (lines.next(), lines.next()) {
            (None, _) => false,
            (Some(only), None) => admits(only, "gzip"),
            (Some(first), Some(second)) => {
                let all: Vec<&str> = [first, second].into_iter().chain(lines).collect();
                admits(&all.join(","), "gzip")
            }
        };
        if admits_gzip { Self::Gzip } else { Self::Identity }
    }
}

/// Whether one `Accept-Encoding` value admits `coding`: named with a quality above zero, or
/// matched by `*` with one when it is not named at all (`x-gzip` is gzip's alias).
fn admits(header: &str, coding: &str) -> bool {
    let mut wildcard = None;
    for member in header.split(',') {
        let mut parts = member.split(';');
        let name = parts.next().unwrap_or_default().trim();
        let quality = parts
            .filter_map(|param| {
                param
                    .trim()
                    .strip_prefix("q=")
                    .or_else(|| param.trim().strip_prefix("Q="))
            })
            .find_map(|q| q.trim().parse::<f32>().ok())
            .unwrap_or(1.0);
        if names(name, coding) {
            return quality > 0.0;
        }
        if name == "*" {
            wildcard = Some(quality > 0.0);
        }
    }
    wildcard.unwrap_or(false)
}

/// Whether a member's name is `coding` or its `x-` alias, in any case (compared in place: this
/// runs on every request).
fn names(name: &str, coding: &str) -> bool {
    let name = name.as_bytes();
    let unaliased = match name.get(..2) {
        Some(prefix) if prefix.eq_ignore_ascii_case(b"x-") => &name[2..],
        _ => name,
    };
    unaliased.eq_ignore_ascii_case(coding.as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gzip_is_admitted_when_named_or_matched_by_a_wildcard() {
        for header in [
            "gzip",
            "gzip, deflate",
            "br;q=1.0, GZIP;q=0.5",
            "x-gzip",
            "X-GZip;q=0.2",
            "*",
            "deflate, *;q=0.1",
        ] {
            assert!(admits(header, "gzip"), "{header}");
        }
    }

    #[test]
    fn gzip_is_refused_when_absent_or_at_quality_zero() {
        for header in [
            "",
            "identity",
            "br, deflate",
            "gzip;q=0",
            "gzip;q=0.0, *",
            "*;q=0",
            "gzip2",
            "x-x-gzip",
            "xgzip",
            "x-",
            "x-gzip;q=0",
        ] {
            assert!(!admits(header, "gzip"), "{header}");
        }
    }

    #[test]
    fn every_accept_encoding_line_counts() {
        let req = Request::builder()
            .header("accept-encoding", "br")
            .header("accept-encoding", "gzip")
            .finish();
        assert_eq!(ContentCoding::accepted_by(&req), ContentCoding::Gzip);
        assert_eq!(
            ContentCoding::accepted_by(&Request::builder().finish()),
            ContentCoding::Identity
        );
    }

    #[test]
    fn a_refusal_on_one_line_outweighs_a_wildcard_on_another() {
        let req = Request::builder()
            .header("accept-encoding", "gzip;q=0")
            .header("accept-encoding", "*")
            .finish();
        assert_eq!(ContentCoding::accepted_by(&req), ContentCoding::Identity);
    }
}
