//! Which pages may post the consent form: this server's own consent page and the configured
//! external one (`oauth.consent_url`). A form another site posts into a person's browser would
//! otherwise be answered like theirs: a valid `action=deny` (no secret needed) bounces the
//! browser to the client's redirect URI, so any page could use this origin as a redirector, and
//! an approval would act on the person's behalf.
//!
//! Browsers send `Origin` with every form `POST` (the consent page's referrer policy keeps it
//! the true origin rather than `null`), so `Origin` decides; a browser that sends none is judged
//! by the origin of its `Referer`. A request with neither came from no page at all (a script or
//! an SDK driving the flow itself), which no other site can make a browser send, so it is
//! answered as before; except `action=external`, which needs no secret from the person and so
//! must name a page of these origins ([`ConsentOrigins::posted_from`]).

use poem::http::StatusCode;
use poem::{Request, Response};

use super::consent_page::error_page;

/// The origins whose pages may post the consent form.
#[derive(Debug, Clone)]
pub(super) struct ConsentOrigins(Vec<String>);

impl ConsentOrigins {
    /// The issuer's origin, and the consent URL's when one is configured.
    pub(super) fn new(issuer_origin: String, consent_url: Option<&url::Url>) -> Self {
        let mut origins = vec![issuer_origin];
        origins.extend(consent_url.map(|url| url.origin().ascii_serialization()));
        Self(origins)
    }

    /// The origin `req` was posted from when it is not one of these (`null` for one the browser
    /// would not name); `None` when it may be answered.
    pub(super) fn foreign(&self, req: &Request) -> Option<String> {
        let origin = sender(req)?;
        (!self.0.contains(&origin)).then_some(origin)
    }

    /// Whether `req` was posted from one of these origins' pages: the stricter rule of a choice
    /// that needs no secret from the person (`action=external`). A request that names no page
    /// is not from one, unless the browser says it came from this server's own origin
    /// (`Sec-Fetch-Site: same-origin`, which no other site can make it send).
    pub(super) fn posted_from(&self, req: &Request) -> bool {
        match sender(req) {
            Some(origin) => self.0.contains(&origin),
            None => req
                .headers()
                .get("sec-fetch-site")
                .is_some_and(|value| value.as_bytes() == b"same-origin"),
        }
    }
}

/// The origin of the page `req` was posted from: its `Origin`, else its `Referer`'s (`null`
/// for one that is not a URL); `None` when it names neither.
fn sender(req: &Request) -> Option<String> {
    let header = |name: &str| req.headers().get(name).map(|value| value.to_str().unwrap_or_default());
    let sender = header("origin").or_else(|| header("referer"))?;
    Some(
        url::Url::parse(sender)
            .map(|url| url.origin().ascii_serialization())
            .unwrap_or_else(|_| "null".to_owned()),
    )
}

/// The answer to a consent form posted from `origin`: the error page, `403`, before the form is
/// read, so nothing is checked, spent or sent to the client.
pub(super) fn refused_from(origin: &str) -> Response {
    tracing::info!(origin, "a consent form posted from another site was refused");
    error_page(
        StatusCode::FORBIDDEN,
        "This form was not sent from this server's consent page, so nothing was done with it.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn origins() -> ConsentOrigins {
        let consent_url = url::Url::parse("https://consent.example.com/approve").unwrap();
        ConsentOrigins::new("https://svc.example.com".to_owned(), Some(&consent_url))
    }

    fn posted(headers: &[(&str, &str)]) -> Request {
        headers
            .iter()
            .fold(Request::builder(), |builder, (name, value)| {
                builder.header(*name, *value)
            })
            .finish()
    }

    #[test]
    fn a_page_of_the_issuer_or_the_consent_url_may_post_with_either_header() {
        for origin in ["https://svc.example.com", "https://consent.example.com"] {
            assert!(origins().posted_from(&posted(&[("origin", origin)])), "{origin}");
            let referer = format!("{origin}/some/page?x=1");
            assert!(origins().posted_from(&posted(&[("referer", &referer)])), "{referer}");
            assert_eq!(origins().foreign(&posted(&[("origin", origin)])), None);
        }
    }

    #[test]
    fn another_origin_null_or_a_referer_that_is_not_a_url_is_foreign_and_not_posted_from() {
        let cases: [(&str, &str, &str); 4] = [
            ("origin", "https://evil.example", "https://evil.example"),
            ("origin", "null", "null"),
            ("referer", "not a url", "null"),
            ("origin", "http://consent.example.com", "http://consent.example.com"),
        ];
        for (name, value, seen) in cases {
            let req = posted(&[(name, value), ("sec-fetch-site", "same-origin")]);
            assert_eq!(origins().foreign(&req).as_deref(), Some(seen), "{name}: {value}");
            assert!(!origins().posted_from(&req), "{name}: {value}");
        }
    }

    #[test]
    fn a_request_naming_no_page_is_answered_but_not_posted_from_a_consent_page() {
        assert_eq!(origins().foreign(&posted(&[])), None);
        assert!(!origins().posted_from(&posted(&[])));
        assert!(!origins().posted_from(&posted(&[("sec-fetch-site", "cross-site")])));
        assert!(origins().posted_from(&posted(&[("sec-fetch-site", "same-origin")])));
    }
}
