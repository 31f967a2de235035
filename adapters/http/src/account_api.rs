//! The account pages (`account_pages`) as poem-openapi operations: routed by poem-openapi and
//! described in `/openapi.json`, so the schemathesis run covers them. Each operation hands the
//! request to its handler unchanged and returns the handler's response unchanged (see
//! `crate::openapi` for why).
#![allow(dead_code)]

use std::sync::Arc;

use poem::web::Data;
use poem::{Body, Request};
use poem_openapi::payload::{Form, Html, Json};
use poem_openapi::{ApiResponse, Object, OpenApi};

use crate::account_pages;
use crate::openapi::{Described, QueryParam, RateLimited, RequestBody};
use crate::route_states::AccountRoutes;

pub(crate) struct AccountApi;

#[OpenApi]
impl AccountApi {
    /// The confirmation form (the link of the verification mail)
    ///
    /// Hosted mode only (404 otherwise). Changes nothing: a link opened by a mail scanner or a
    /// preview confirms no address. The form posts the token to `POST /account/verify`.
    #[oai(path = "/account/verify", method = "get")]
    async fn verify_page(
        &self,
        req: &Request,
        state: Data<&Arc<AccountRoutes>>,
        /// The link's token (43 base62 characters).
        #[oai(name = "token")]
        _token: QueryParam<String, false>,
    ) -> Described<PageAnswer> {
        Described::new(account_pages::verify_page(req, &state).await)
    }

    /// Confirms an account's email address with the mailed token
    ///
    /// Hosted mode only (404 otherwise). The token works once, for a day. Read as a form
    /// whatever its `Content-Type`.
    #[oai(path = "/account/verify", method = "post")]
    async fn verify(
        &self,
        body: RequestBody<Body, Form<VerifyForm>>,
        state: Data<&Arc<AccountRoutes>>,
    ) -> Described<LinkAnswer> {
        Described::new(account_pages::verify(body.0, &state).await)
    }

    /// The new-password form (the link of the password-reset mail)
    ///
    /// Hosted mode only (404 otherwise). The token is checked when the form is sent.
    #[oai(path = "/account/reset", method = "get")]
    async fn reset_page(
        &self,
        req: &Request,
        state: Data<&Arc<AccountRoutes>>,
        /// The link's token.
        #[oai(name = "token")]
        _token: QueryParam<String, false>,
    ) -> Described<PageAnswer> {
        Described::new(account_pages::reset_page(req, &state).await)
    }

    /// Sets a new password with a reset token
    ///
    /// The password rule is checked before the token is spent. Read as a form whatever its
    /// `Content-Type`.
    #[oai(path = "/account/reset", method = "post")]
    async fn reset(
        &self,
        body: RequestBody<Body, Form<ResetForm>>,
        state: Data<&Arc<AccountRoutes>>,
    ) -> Described<ResetAnswer> {
        Described::new(account_pages::reset(body.0, &state).await)
    }

    /// The password-reset request form
    #[oai(path = "/account/forgot", method = "get")]
    async fn forgot_page(&self, state: Data<&Arc<AccountRoutes>>) -> Described<PageAnswer> {
        Described::new(account_pages::forgot_page(&state).await)
    }

    /// Asks for a password-reset link
    ///
    /// The same answer whether or not the address has an account; a link is mailed only when it
    /// has one. Counted against the reset budgets (3 per account, 10 per address per 15 minutes;
    /// 429 when spent). Read as a form whatever its `Content-Type`.
    #[oai(path = "/account/forgot", method = "post")]
    async fn forgot(
        &self,
        req: &Request,
        body: RequestBody<Body, Form<ForgotForm>>,
        state: Data<&Arc<AccountRoutes>>,
    ) -> Described<ForgotAnswer> {
        Described::new(account_pages::forgot(req, body.0, &state).await)
    }
}

/// `POST /account/verify`.
#[derive(Object)]
struct VerifyForm {
    token: Option<String>,
}

/// `POST /account/reset`.
#[derive(Object)]
struct ResetForm {
    token: Option<String>,
    /// At least 12 and at most 256 characters.
    password: Option<String>,
}

/// `POST /account/forgot`.
#[derive(Object)]
struct ForgotForm {
    email: Option<String>,
}

/// A page that only shows (a form).
#[derive(ApiResponse)]
enum PageAnswer {
    #[oai(status = 200)]
    Page(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
    ),
    /// A URL holding `%00`.
    #[oai(status = 400)]
    Refused(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
    ),
    /// Not a hosted server.
    #[oai(status = 404)]
    NotFound,
}

/// `POST /account/verify`.
#[derive(ApiResponse)]
enum LinkAnswer {
    /// The address is confirmed.
    #[oai(status = 200)]
    Confirmed(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
    ),
    /// "This link does not work": unknown, used or expired; or a form that did not arrive whole.
    #[oai(status = 400)]
    Refused(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
    ),
    /// Not a hosted server.
    #[oai(status = 404)]
    NotFound,
    /// The form is over 16 KiB.
    #[oai(status = 413)]
    TooLarge(Html<String>, #[oai(header = "Cache-Control")] String),
    /// Storage failed.
    #[oai(status = 500)]
    Failed(Html<String>, #[oai(header = "Cache-Control")] String),
}

/// `POST /account/reset`.
#[derive(ApiResponse)]
enum ResetAnswer {
    /// The password is changed (and the address confirmed).
    #[oai(status = 200)]
    Changed(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
    ),
    /// The form again naming the password rule, or "This link does not work".
    #[oai(status = 400)]
    Refused(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
    ),
    /// Not a hosted server.
    #[oai(status = 404)]
    NotFound,
    /// The form is over 16 KiB.
    #[oai(status = 413)]
    TooLarge(Html<String>, #[oai(header = "Cache-Control")] String),
    /// Storage failed.
    #[oai(status = 500)]
    Failed(Html<String>, #[oai(header = "Cache-Control")] String),
    /// Every place to hash a password is taken: the link is not spent; send the form again
    /// after `Retry-After` seconds.
    #[oai(status = 503)]
    Busy(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "Retry-After")] u64,
    ),
}

/// `POST /account/forgot`.
#[derive(ApiResponse)]
enum ForgotAnswer {
    /// "Check your email", whether or not the address has an account.
    #[oai(status = 200)]
    Sent(
        Html<String>,
        #[oai(header = "Cache-Control")] String,
        #[oai(header = "X-Frame-Options")] String,
    ),
    /// Not a hosted server.
    #[oai(status = 404)]
    NotFound,
    /// The form is over 16 KiB.
    #[oai(status = 413)]
    TooLarge(Html<String>, #[oai(header = "Cache-Control")] String),
    /// The reset budget of the address or the account is spent (Document 2's shape).
    #[oai(status = 429)]
    RateLimited(Json<RateLimited>, #[oai(header = "Retry-After")] u64),
    /// Storage failed.
    #[oai(status = 500)]
    Failed(Html<String>, #[oai(header = "Cache-Control")] String),
}
