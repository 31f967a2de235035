//! The account pages of hosted mode (docs/hosted.md, "Accounts"): the targets of the links the
//! mail outbox sends, and the password-reset request form.
//!
//! - `GET /account/verify?token=`: asks the person to confirm; `POST /account/verify`: confirms
//!   the address (the token is spent). A GET changes nothing: mail scanners and link previews
//!   open links, and one that confirmed an address someone else signed up with would hand that
//!   account a verified address (pre-account takeover);
//! - `GET /account/reset?token=`: the new-password form; `POST /account/reset`: sets it;
//! - `GET /account/forgot`: the reset request form; `POST /account/forgot`: mails a link when the
//!   address has an account, answering the same either way;
//! - `/account/invite`: accepting an org invite (account_invite.rs).
//!
//! Absent (404) unless the server runs in hosted mode. poem-openapi routes them and describes
//! them in `/openapi.json` (`account_api`); the handlers read the request themselves.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::{Body, IntoResponse, Request, Response};
use svc_application::services::accounts::{AccountService, AccountServiceError, InviteSignup};
use svc_application::services::rate_limit::address_key;

use crate::body_limit::Unread;
use crate::client_address::client_ip;
use crate::oauth::{escape, html_page};
use crate::route_states::AccountRoutes;

/// The account pages' service, and how their rate limits read the client's address.
#[derive(Clone)]
pub struct AccountPages {
    pub accounts: AccountService,
    /// Accepting org invites through their mailed links (`/account/invite`).
    pub invites: InviteSignup,
    pub trust_proxy: bool,
}

/// Largest form read.
const MAX_FORM_BYTES: usize = 16 * 1024;

/// The first value of `name` in a query string or form body.
fn field(encoded: &[u8], name: &str) -> Option<String> {
    url::form_urlencoded::parse(encoded)
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.into_owned())
}

fn token_of(req: &Request) -> String {
    field(req.uri().query().unwrap_or_default().as_bytes(), "token").unwrap_or_default()
}

/// The form body, read whatever its `Content-Type`; the page to answer when it is too large or
/// did not arrive whole.
async fn form_body(body: Body) -> Result<Vec<u8>, Response> {
    match crate::body_limit::read_limited(body, MAX_FORM_BYTES).await {
        Ok(bytes) => Ok(bytes.to_vec()),
        Err(Unread::TooLarge) => Err(message(
            StatusCode::PAYLOAD_TOO_LARGE,
            "The form is too large",
            "Go back and try again.",
        )),
        Err(unread) => Err(message(
            unread.status(),
            "The form did not arrive whole",
            "Go back and try again.",
        )),
    }
}

fn pages(state: &AccountRoutes) -> Option<&AccountPages> {
    state.pages.as_ref()
}

pub(crate) fn message(status: StatusCode, title: &str, text: &str) -> Response {
    html_page(
        status,
        title,
        &format!("<h1>{}</h1><p>{}</p>", escape(title), escape(text)),
    )
}

fn link_refused() -> Response {
    message(
        StatusCode::BAD_REQUEST,
        "This link does not work",
        "It has expired or was already used. Ask for a new one.",
    )
}

pub(crate) fn failed(error: &AccountServiceError) -> Response {
    tracing::error!(error = ?error, "account page failed");
    message(
        StatusCode::INTERNAL_SERVER_ERROR,
        "Something went wrong",
        "The server could not complete the request. Try again later.",
    )
}

/// `GET /account/verify`: the confirmation form; nothing is spent or changed.
pub(crate) async fn verify_page(req: &Request, state: &Arc<AccountRoutes>) -> Response {
    if pages(state).is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let body = format!(
        "<h1>Confirm your email address</h1>\
         <p>Confirm only if you signed up for an account with this address. If you did not, close \
         this page: nothing changes, and the link expires within a day.</p>\
         <form method=\"post\" action=\"/account/verify\">\
         <input type=\"hidden\" name=\"token\" value=\"{}\">\
         <div class=\"actions\"><button type=\"submit\">Confirm my address</button></div></form>",
        escape(&token_of(req))
    );
    html_page(StatusCode::OK, "Confirm your email address", &body)
}

/// `POST /account/verify`: confirms the address the token was mailed to.
pub(crate) async fn verify(body: Body, state: &Arc<AccountRoutes>) -> Response {
    let Some(pages) = pages(state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let form = match form_body(body).await {
        Ok(form) => form,
        Err(page) => return page,
    };
    let token = field(&form, "token").unwrap_or_default();
    match pages.accounts.verify_email(&token).await {
        Ok(()) => message(
            StatusCode::OK,
            "Your email address is confirmed",
            "You can close this page.",
        ),
        Err(AccountServiceError::LinkInvalid) => link_refused(),
        Err(e) => failed(&e),
    }
}

fn reset_form(status: StatusCode, token: &str, notice: Option<&str>) -> Response {
    let notice = notice
        .map(|n| format!("<p class=\"notice\" role=\"alert\">{}</p>", escape(n)))
        .unwrap_or_default();
    let body = format!(
        "<h1>Choose a new password</h1>{notice}<form method=\"post\" action=\"/account/reset\">\
         <input type=\"hidden\" name=\"token\" value=\"{}\">\
         <label for=\"password\">New password (at least 12 characters)</label>\
         <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"new-password\">\
         <div class=\"actions\"><button type=\"submit\">Set password</button></div></form>",
        escape(token)
    );
    html_page(status, "Choose a new password", &body)
}

pub(crate) async fn reset_page(req: &Request, state: &Arc<AccountRoutes>) -> Response {
    if pages(state).is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    reset_form(StatusCode::OK, &token_of(req), None)
}

pub(crate) async fn reset(body: Body, state: &Arc<AccountRoutes>) -> Response {
    let Some(pages) = pages(state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let form = match form_body(body).await {
        Ok(form) => form,
        Err(page) => return page,
    };
    let token = field(&form, "token").unwrap_or_default();
    let password = field(&form, "password").unwrap_or_default();
    match pages.accounts.reset_password(&token, &password).await {
        Ok(()) => message(
            StatusCode::OK,
            "Your password is changed",
            "Sign in with the new password from your application.",
        ),
        Err(AccountServiceError::Rule(rule)) => reset_form(StatusCode::BAD_REQUEST, &token, Some(&rule.to_string())),
        Err(AccountServiceError::LinkInvalid) => link_refused(),
        // The link was not spent: the same form works again in a moment.
        Err(AccountServiceError::Busy(busy)) => crate::busy::busy_page(busy),
        Err(e) => failed(&e),
    }
}

pub(crate) async fn forgot_page(state: &Arc<AccountRoutes>) -> Response {
    if pages(state).is_none() {
        return StatusCode::NOT_FOUND.into_response();
    }
    let body = "<h1>Reset your password</h1><form method=\"post\" action=\"/account/forgot\">\
                <label for=\"email\">Email</label>\
                <input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"username\">\
                <div class=\"actions\"><button type=\"submit\">Send a reset link</button></div></form>";
    html_page(StatusCode::OK, "Reset your password", body)
}

pub(crate) async fn forgot(req: &Request, body: Body, state: &Arc<AccountRoutes>) -> Response {
    let Some(pages) = pages(state) else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let form = match form_body(body).await {
        Ok(form) => form,
        Err(page) => return page,
    };
    let email = field(&form, "email").unwrap_or_default();
    let ip = client_ip(req, pages.trust_proxy);
    let address = address_key(ip).to_string();
    match pages.accounts.request_password_reset(&email, Some(&address)).await {
        Ok(()) => message(
            StatusCode::OK,
            "Check your email",
            "If an account exists for that address, a link to reset its password is on its way. It works for an hour.",
        ),
        Err(AccountServiceError::RateLimited { retry_after, quota }) => {
            let seconds = u64::try_from(retry_after.num_milliseconds())
                .unwrap_or(0)
                .div_ceil(1000)
                .max(1);
            crate::rate_limited::rate_limited(quota, ip, "too many attempts", seconds)
        }
        Err(e) => failed(&e),
    }
}
