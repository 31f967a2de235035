//! The page an authorization request is refused with once its client and redirect URI are
//! verified: what was wrong, which client asked and where its answer would go, and a link the
//! person may follow to take the error back to the client (`error`, `error_description`,
//! `state`, `iss`). Never an automatic redirect: registration is open and URL client ids are
//! accepted, so the redirect URI is whatever a stranger registered, and bouncing each broken
//! request to it would make this origin a redirector to any page (RFC 9700 section 4.11.2).

use poem::Response;
use poem::http::StatusCode;
use svc_application::services::oauth::{AuthorizationErrorCode, RejectedAuthorization};
use svc_domain::oauth::Issuer;

use super::consent_page::{client_provenance, escape, page};

/// The `id` of the link back to the client, for scripts and tests that follow it.
const BACK_TO_CLIENT_LINK_ID: &str = "back-to-client";

pub(super) fn rejected_page(issuer: &Issuer, rejected: &RejectedAuthorization) -> Response {
    let answer = &rejected.answer;
    let body = format!(
        "<h1>This authorization request cannot be completed</h1>\
         <p>{what}</p><p>Details: <code>{error}</code>: {description}.</p>\
         <p>The request names the application <strong>{client}</strong>{provenance}; its answer would go \
         to <strong>{destination}</strong>. Nothing has been sent there.</p>\
         <p>If you started this connection from that application, you can \
         <a id=\"{BACK_TO_CLIENT_LINK_ID}\" href=\"{href}\">return to it with this error</a>. \
         If you did not, close this page: a link that opens a broken request can be a way to send \
         you on to a page made to look trustworthy.</p>",
        what = in_plain_words(answer.error),
        error = answer.error.as_str(),
        description = escape(&answer.description),
        client = escape(rejected.client.label()),
        provenance = client_provenance(&rejected.client),
        destination = escape(&answer.redirect_uri.destination()),
        href = escape(&answer.location(issuer)),
    );
    page(StatusCode::BAD_REQUEST, "Authorization request refused", &body)
}

fn in_plain_words(error: AuthorizationErrorCode) -> &'static str {
    match error {
        AuthorizationErrorCode::InvalidRequest => {
            "The application's request is missing a part this server needs, or has one it does not accept."
        }
        AuthorizationErrorCode::UnsupportedResponseType => {
            "The application asked for a kind of answer this server does not give."
        }
        AuthorizationErrorCode::InvalidTarget => {
            "The application asked for access to something this server does not serve, or to more than one thing at once."
        }
        AuthorizationErrorCode::AccessDenied => "The request was declined.",
    }
}
