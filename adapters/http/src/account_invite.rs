//! The page an org invite mail's one-time link opens (hosted mode, docs/hosted.md, "Joining an
//! org by invite"):
//!
//! - `GET /account/invite?token=`: the invite, with a form to create an account for the invited
//!   address (when `hosted.signup` is `invite` or `open`) and one to sign in to an account;
//! - `POST /account/invite` (`token`, `action=create|sign-in`, `password`, `email` for sign-in):
//!   accepts the invite with that account; the answer is the page saying so.
//!
//! Refusals: an unknown link 404, a revoked or expired invite 410, an accepted one (the link
//! used before) or a create for an address that has an account 409, create with sign-up closed
//! 403, a password under the rule 400, a wrong email or password 401, too many sign-ins 429.

use std::sync::Arc;

use poem::http::StatusCode;
use poem::web::{Data, Form, Query};
use poem::{IntoResponse, Request, Response, handler};
use serde::Deserialize;
use svc_application::services::accounts::{AccountServiceError, InviteAcceptError, InviteAccepted, OpenedInvite};
use svc_application::services::rate_limit::address_key;
use svc_domain::invite::InviteError;

use crate::account_pages::{failed, message};
use crate::client_address::client_ip;
use crate::oauth::{capitalised, escape, html_page};
use crate::route_states::AccountRoutes;

#[derive(Deserialize)]
pub(crate) struct TokenQuery {
    token: Option<String>,
}

#[derive(Deserialize)]
pub(crate) struct InviteForm {
    token: Option<String>,
    action: Option<String>,
    email: Option<String>,
    password: Option<String>,
}

fn notice_html(notice: Option<&str>) -> String {
    notice
        .map(|n| format!("<p class=\"notice\" role=\"alert\">{}</p>", escape(n)))
        .unwrap_or_default()
}

/// The invite and its forms; `notice` explains why it is shown again.
fn invite_page(status: StatusCode, token: &str, opened: &OpenedInvite, notice: Option<&str>) -> Response {
    let invite = &opened.invite;
    let token = escape(token);
    let email = escape(invite.email.as_str());
    let create = if opened.may_create && !opened.account_exists {
        format!(
            "<h2>Create an account</h2><form method=\"post\" action=\"/account/invite\">\
             <input type=\"hidden\" name=\"token\" value=\"{token}\">\
             <p>Email: <strong>{email}</strong></p>\
             <label for=\"new_password\">Password (at least 12 characters)</label>\
             <input id=\"new_password\" name=\"password\" type=\"password\" autocomplete=\"new-password\">\
             <div class=\"actions\"><button type=\"submit\" name=\"action\" value=\"create\">Create account and join</button></div></form>"
        )
    } else {
        String::new()
    };
    let body = format!(
        "<h1>Join organisation {org}</h1>{notice}\
         <p>{email} is invited to join organisation <strong>{org}</strong> as <strong>{role}</strong>.</p>\
         {create}\
         <h2>Sign in to your account</h2><form method=\"post\" action=\"/account/invite\">\
         <input type=\"hidden\" name=\"token\" value=\"{token}\">\
         <label for=\"email\">Email</label>\
         <input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"username\" value=\"{email}\">\
         <label for=\"password\">Password</label>\
         <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\">\
         <div class=\"actions\"><button type=\"submit\" name=\"action\" value=\"sign-in\">Sign in and join</button></div></form>",
        org = escape(&invite.org_id),
        role = invite.role.as_str(),
        notice = notice_html(notice),
    );
    html_page(status, "Join an organisation", &body)
}

fn joined(accepted: &InviteAccepted) -> Response {
    let how = if accepted.created {
        "Your account is created. "
    } else {
        ""
    };
    message(
        StatusCode::OK,
        "You joined the organisation",
        &format!(
            "{how}{} is now a {} of organisation {}. Sign in with this email from your application.",
            accepted.email,
            accepted.membership.role.as_str(),
            accepted.membership.org_id
        ),
    )
}

/// The answer of a refusal that does not show the form again.
fn refused_page(error: &InviteAcceptError) -> Response {
    match error {
        InviteAcceptError::UnknownLink | InviteAcceptError::Invite(InviteError::NotFound) => message(
            StatusCode::NOT_FOUND,
            "This invite link is not known",
            "Check that the whole link was opened, or ask for a new invite.",
        ),
        InviteAcceptError::Invite(InviteError::Revoked) => message(
            StatusCode::GONE,
            "This invite was revoked",
            "Ask the organisation for a new invite.",
        ),
        InviteAcceptError::Invite(InviteError::Expired) => message(
            StatusCode::GONE,
            "This invite has expired",
            "Ask the organisation for a new invite.",
        ),
        InviteAcceptError::Invite(InviteError::AlreadyAccepted) => message(
            StatusCode::CONFLICT,
            "This invite was already accepted",
            "An invite link works once.",
        ),
        InviteAcceptError::Account(AccountServiceError::EmailTaken) => message(
            StatusCode::CONFLICT,
            "An account with this email exists",
            "Open the link again and sign in to it instead.",
        ),
        InviteAcceptError::Account(AccountServiceError::SignupClosed) => message(
            StatusCode::FORBIDDEN,
            "Sign-up is closed on this server",
            "Ask its operator for an account, then open the link again and sign in.",
        ),
        InviteAcceptError::Account(e) => failed(e),
        InviteAcceptError::Invite(e) => {
            tracing::error!(error = ?e, "accepting an invite failed");
            message(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Something went wrong",
                "The server could not complete the request. Try again later.",
            )
        }
    }
}

#[handler]
pub(crate) async fn invite_page_handler(Query(q): Query<TokenQuery>, state: Data<&Arc<AccountRoutes>>) -> Response {
    let Some(pages) = state.pages.as_ref() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let token = q.token.unwrap_or_default();
    match pages.invites.open(&token).await {
        Ok(opened) => invite_page(StatusCode::OK, &token, &opened, None),
        Err(e) => refused_page(&e),
    }
}

#[handler]
pub(crate) async fn accept(req: &Request, Form(form): Form<InviteForm>, state: Data<&Arc<AccountRoutes>>) -> Response {
    let Some(pages) = state.pages.as_ref() else {
        return StatusCode::NOT_FOUND.into_response();
    };
    let token = form.token.unwrap_or_default();
    let password = form.password.unwrap_or_default();
    let ip = client_ip(req, pages.trust_proxy);
    let result = match form.action.as_deref() {
        Some("create") => pages.invites.create(&token, &password).await,
        Some("sign-in") => {
            let address = address_key(ip).to_string();
            pages
                .invites
                .sign_in(&token, form.email.as_deref(), &password, Some(&address))
                .await
        }
        _ => {
            return message(
                StatusCode::BAD_REQUEST,
                "Choose how to join",
                "The form names no action: create or sign-in.",
            );
        }
    };
    let again = |status: StatusCode, notice: &str| {
        let (invites, token, notice) = (pages.invites.clone(), token.clone(), notice.to_owned());
        async move {
            match invites.open(&token).await {
                Ok(opened) => invite_page(status, &token, &opened, Some(&notice)),
                Err(e) => refused_page(&e),
            }
        }
    };
    match result {
        Ok(accepted) => joined(&accepted),
        Err(InviteAcceptError::Account(AccountServiceError::Rule(rule))) => {
            again(StatusCode::BAD_REQUEST, &format!("{}.", capitalised(&rule.to_string()))).await
        }
        Err(InviteAcceptError::Account(AccountServiceError::Refused)) => {
            again(StatusCode::UNAUTHORIZED, "The email or password is not right.").await
        }
        Err(InviteAcceptError::Account(AccountServiceError::Busy(busy))) => crate::busy::busy_page(busy),
        Err(InviteAcceptError::Account(AccountServiceError::RateLimited { retry_after, quota })) => {
            let seconds = u64::try_from(retry_after.num_milliseconds())
                .unwrap_or(0)
                .div_ceil(1000)
                .max(1);
            crate::rate_limited::rate_limited(quota, ip, "too many attempts", seconds)
        }
        Err(e) => refused_page(&e),
    }
}
