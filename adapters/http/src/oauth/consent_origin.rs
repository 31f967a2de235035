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
//! answered as before.

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
        let header = |name: &str| req.headers().get(name).map(|value| value.to_str().unwrap_or_default());
        let sender = header("origin").or_else(|| header("referer"))?;
        let origin = url::Url::parse(sender)
            .map(|url| url.origin().ascii_serialization())
            .unwrap_or_else(|_| "null".to_owned());
        (!self.0.contains(&origin)).then_some(origin)
    }
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
