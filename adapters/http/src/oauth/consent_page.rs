//! The built-in consent form and the error page: unbranded HTML, every dynamic value escaped,
//! never framed (clickjacking), never cached.

use poem::http::StatusCode;
use poem::web::Html;
use poem::{IntoResponse, Response};
use svc_application::services::oauth::{AuthorizationRequest, ValidatedAuthorization};
use svc_domain::account::SignupMode;
use svc_domain::oauth::{ClientIdUrl, Issuer, OAuthClient, ResourceIndicator};

/// HTML-escapes text for element content and quoted attribute values.
pub(crate) fn escape(text: &str) -> String {
    let mut escaped = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => escaped.push_str("&amp;"),
            '<' => escaped.push_str("&lt;"),
            '>' => escaped.push_str("&gt;"),
            '"' => escaped.push_str("&quot;"),
            '\'' => escaped.push_str("&#39;"),
            c => escaped.push(c),
        }
    }
    escaped
}

const STYLE: &str = "body{font-family:system-ui,sans-serif;max-width:34rem;margin:3rem auto;padding:0 1rem;\
line-height:1.5;color:#1f2328}label{display:block;margin:1rem 0 .25rem}input{width:100%;padding:.5rem;\
font:inherit;box-sizing:border-box}.notice{padding:.5rem .75rem;background:#fff4e5;border-left:4px solid #d97706}\
.actions{margin-top:1.5rem;display:flex;gap:.75rem}button{padding:.5rem 1.25rem;font:inherit}code{word-break:break-all}";

/// `same-origin`: no referrer (which would carry the OAuth request's query) to any other site,
/// while a form posted back here still carries its true `Origin` (under `no-referrer` browsers
/// send `Origin: null`), which the provider sign-in checks.
const REFERRER_POLICY: &str = "same-origin";

pub(crate) fn page(status: StatusCode, title: &str, body: &str) -> Response {
    let html = format!(
        "<!doctype html><html lang=\"en\"><head><meta charset=\"utf-8\">\
         <meta name=\"viewport\" content=\"width=device-width,initial-scale=1\">\
         <meta name=\"referrer\" content=\"{REFERRER_POLICY}\"><title>{}</title><style>{STYLE}</style></head>\
         <body><main>{body}</main></body></html>",
        escape(title)
    );
    let mut response = (status, Html(html)).into_response();
    let headers = response.headers_mut();
    for (name, value) in [
        ("cache-control", "no-store"),
        ("x-frame-options", "DENY"),
        (
            "content-security-policy",
            // No `form-action`: Chromium holds the consent form's redirect to the client's
            // redirect URI to it too, which would stop every approval.
            "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'; base-uri 'none'",
        ),
        ("referrer-policy", REFERRER_POLICY),
    ] {
        headers.insert(name, value.parse().expect("static header"));
    }
    response
}

/// A request that cannot be answered to its client at all (a parameter sent twice, an unknown
/// client or redirect URI): shown here, with no way back to the client.
pub(super) fn error_page(status: StatusCode, message: &str) -> Response {
    let body = format!(
        "<h1>This authorization request cannot be completed</h1><p>{}</p>\
         <p>Nothing was sent to the application. Start the connection again from the application.</p>",
        escape(message)
    );
    page(status, "Authorization request refused", &body)
}

/// What to add after a client's [`OAuthClient::label`] so the person knows what it is: for a
/// client named by its metadata document's URL, whose site vouches for it; for one registered
/// without a name, that the label is its id. HTML, escaped.
pub(super) fn client_provenance(client: &OAuthClient) -> String {
    match ClientIdUrl::parse(&client.client_id, true) {
        Ok(url) => format!(" (described by a document on <code>{}</code>)", escape(&url.host())),
        Err(_) if client.client_name.is_none() => " (it registered without a name; this is its client id)".into(),
        Err(_) => String::new(),
    }
}

/// What the form needs besides the checked request.
pub(super) struct ConsentForm<'a> {
    pub issuer: &'a Issuer,
    pub validated: &'a ValidatedAuthorization,
    /// The request's parameters, echoed as hidden inputs.
    pub request: &'a AuthorizationRequest,
    /// Whether a pair code can be used (strict mode).
    pub pairing: bool,
    /// Hosted accounts: sign in with email and password (and sign up when it is open).
    pub accounts: Option<SignupMode>,
    /// The external identity provider's display name, when sign-in with it is configured.
    pub external: Option<&'a str>,
    pub notice: Option<&'a str>,
}

impl ConsentForm<'_> {
    pub(super) fn render(&self, status: StatusCode) -> Response {
        let client = &self.validated.client;
        let name = escape(client.label());
        let unnamed = client_provenance(client);
        let scope = match &self.validated.resource {
            ResourceIndicator::Universal => "the MCP tools of this server".to_owned(),
            ResourceIndicator::App(app_id) => format!(
                "the MCP tools of this server for the app <code>{}</code>",
                escape(app_id)
            ),
        };
        let destination = escape(&self.validated.redirect_uri.destination());
        let notice = self
            .notice
            .map(|n| format!("<p class=\"notice\" role=\"alert\">{}</p>", escape(n)))
            .unwrap_or_default();
        let pair_code = if self.pairing {
            "<label for=\"pair_code\">Pair code (6 digits, printed when the server started)</label>\
             <input id=\"pair_code\" name=\"pair_code\" inputmode=\"numeric\" autocomplete=\"one-time-code\" maxlength=\"16\">\
             <p>or</p>"
        } else {
            ""
        };
        let account = match self.accounts {
            None => String::new(),
            Some(mode) => {
                let sign_up = if mode.allows_self_signup() {
                    "<p>New here? Enter your email and a password of at least 12 characters and choose \
                     <em>Create account and allow</em>.</p>"
                } else {
                    ""
                };
                format!(
                    "<label for=\"email\">Email</label>\
                     <input id=\"email\" name=\"email\" type=\"email\" autocomplete=\"username\">\
                     <label for=\"password\">Password</label>\
                     <input id=\"password\" name=\"password\" type=\"password\" autocomplete=\"current-password\">\
                     {sign_up}<p>or</p>"
                )
            }
        };
        let sign_up_button = if self.accounts.is_some_and(SignupMode::allows_self_signup) {
            "<button type=\"submit\" name=\"action\" value=\"signup\">Create account and allow</button>"
        } else {
            ""
        };
        let external = self
            .external
            .map(|provider| {
                format!(
                    "<p>or</p><div class=\"actions\"><button type=\"submit\" name=\"action\" value=\"external\">Sign in with {} and allow</button></div>",
                    escape(provider)
                )
            })
            .unwrap_or_default();
        let body = format!(
            "<h1>Connect <q>{name}</q>?</h1>\
             <p><strong>{name}</strong>{unnamed} asks to use {scope}.</p>\
             <p>If you allow it, the authorization code goes to <strong>{destination}</strong>. \
             Allow only if you started this connection from that application.</p>{notice}\
             <form method=\"post\" action=\"{action}\">{hidden}{account}{pair_code}\
             <label for=\"api_key\">Key</label>\
             <input id=\"api_key\" name=\"api_key\" type=\"password\" autocomplete=\"off\" spellcheck=\"false\">\
             <div class=\"actions\"><button type=\"submit\" name=\"action\" value=\"allow\">Allow</button>\
             {sign_up_button}<button type=\"submit\" name=\"action\" value=\"deny\">Deny</button></div>{external}</form>",
            action = escape(&self.issuer.url("/oauth/authorize")),
            hidden = self.hidden_inputs(),
        );
        page(status, &format!("Connect {}?", client.label()), &body)
    }

    fn hidden_inputs(&self) -> String {
        let r = self.request;
        [
            ("response_type", &r.response_type),
            ("client_id", &r.client_id),
            ("redirect_uri", &r.redirect_uri),
            ("code_challenge", &r.code_challenge),
            ("code_challenge_method", &r.code_challenge_method),
            ("state", &r.state),
            ("scope", &r.scope),
            ("resource", &r.resource),
        ]
        .into_iter()
        .filter_map(|(name, value)| {
            value
                .as_ref()
                .map(|v| format!("<input type=\"hidden\" name=\"{name}\" value=\"{}\">", escape(v)))
        })
        .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::escape;

    #[test]
    fn markup_is_escaped() {
        assert_eq!(
            escape(r#"<script>alert("x")</script> & 'y'"#),
            "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; &#39;y&#39;"
        );
    }
}
