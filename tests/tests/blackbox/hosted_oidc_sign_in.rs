//! Signing in at the hosted consent page with an external OpenID Connect provider: a real,
//! certified provider on loopback (npm `oidc-provider`, `tests/peers/oidc-sign-in-issuer.mjs`),
//! svc as its client. The full round trip (consent page, provider, callback, the MCP client's
//! code and token), the account rules (open sign-up creates, a verified email links an
//! operator-made account whose address is verified, closed sign-up refuses an unknown identity,
//! an unverified email never takes over nor makes an account, nor does a verified one take an
//! account whose own address was never verified), and the refusals: a made-up state, a replayed callback, a replayed
//! provider code, a return in another browser, a person declining at the provider. Also
//! `svc users create` queueing its verification mail.

use crate::hosted_deployment_support::peers_installed;
use crate::hosted_oidc_support::{Browser, Page, Provider, configure, free_port};
use crate::hosted_support::accounts::{create_user, create_user_with};
use crate::hosted_support::{master_key, postgres_available, scalar_text};
use crate::oauth::support::{OAuthApp, REDIRECT, STATE};

use std::time::Duration;

use reqwest::StatusCode;
use svc_tests::smtp_sink::SmtpSink;
use svc_tests::{Auth, Backend};

const CALLBACK: &str = "/oauth/oidc/callback";

/// A hosted server on a fresh PostgreSQL database with `[hosted.oidc]` pointing at a fresh
/// provider, and `configure` on top.
async fn hosted_with_provider(
    test: &str,
    configure_more: impl FnOnce(&mut svc::Settings),
) -> Option<(OAuthApp, Provider)> {
    if !postgres_available(test) || !peers_installed(test) {
        return None;
    }
    let port = free_port();
    let provider = Provider::start(&format!("http://127.0.0.1:{port}{CALLBACK}")).await;
    let app = OAuthApp::spawn(test, Backend::Postgres, Auth::Strict, |s| {
        s.server.port = port;
        s.hosted.enabled = true;
        s.hosted.master_keys = svc::settings::SecretList::Many(vec![master_key("k1", 1)]);
        configure(s, &provider);
        configure_more(s);
    })
    .await?;
    Some((app, provider))
}

/// The consent form's `action=external` for `params`, in `browser`: the redirect to the provider.
async fn leave_for_provider(app: &OAuthApp, browser: &mut Browser, params: &[(String, String)]) -> Page {
    let mut form = params.to_vec();
    form.push(("action".into(), "external".into()));
    let page = browser.post_form(&app.url("/oauth/authorize"), &form).await;
    assert_eq!(page.status, StatusCode::FOUND, "{}", page.body);
    page
}

/// Consent page -> provider -> the callback URL svc is sent back to (not yet followed).
async fn to_callback(app: &OAuthApp, browser: &mut Browser, params: &[(String, String)]) -> String {
    let left = leave_for_provider(app, browser, params).await;
    browser.follow_until(left, &app.url(CALLBACK)).await.to_string()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn signing_in_with_the_provider_creates_the_account_and_completes_the_clients_oauth() {
    let Some((app, provider)) = hosted_with_provider("oidc_round_trip", |s| s.hosted.signup = "open".into()).await
    else {
        return;
    };
    let db = app.app.settings.database_url();
    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);
    let page = app.authorize(&params).await;
    assert_eq!(page.status, StatusCode::OK);
    assert!(page.body.contains("Sign in with Loopback ID"), "{}", page.body);

    provider.next_login("ada-sub", "ada@example.org", true).await;
    let mut browser = Browser::new();
    let left = leave_for_provider(&app, &mut browser, &params).await;
    let to_provider = left.location.clone().unwrap();
    assert!(to_provider.as_str().starts_with(&provider.issuer), "{to_provider}");
    for needed in ["state", "nonce", "code_challenge"] {
        assert!(
            left.param(needed).is_some(),
            "the provider is sent {needed}: {to_provider}"
        );
    }
    assert_eq!(left.param("code_challenge_method").as_deref(), Some("S256"));
    assert!(
        left.set_cookies
            .iter()
            .any(|c| c.starts_with("svc_oidc_browser=") && c.contains("HttpOnly")),
        "{:?}",
        left.set_cookies
    );
    let callback = browser.follow_until(left, &app.url(CALLBACK)).await.to_string();
    let back = browser.get(&callback).await;
    assert_eq!(back.status, StatusCode::FOUND, "{}", back.body);
    let location = back.location.clone().unwrap();
    assert!(location.as_str().starts_with(REDIRECT), "{location}");
    assert_eq!(back.param("state").as_deref(), Some(STATE));
    assert_eq!(back.param("iss").as_deref(), Some(app.issuer()));
    let code = back.param("code").expect("the client's code");

    let (status, _, token) = app.token(&app.token_form(&client, &code)).await;
    assert_eq!(status, StatusCode::OK, "{token}");
    let access = token["access_token"].as_str().unwrap();
    assert_eq!(app.mcp_status(access).await, StatusCode::OK);

    // One account, its address confirmed by the provider, the identity linked to it.
    assert_eq!(scalar_text(&db, "SELECT count(*)::text FROM accounts").await, "1");
    assert_eq!(scalar_text(&db, "SELECT email FROM accounts").await, "ada@example.org");
    assert_eq!(
        scalar_text(
            &db,
            "SELECT CASE WHEN email_verified_at IS NULL THEN 'no' ELSE 'yes' END FROM accounts"
        )
        .await,
        "yes"
    );
    assert_eq!(
        scalar_text(
            &db,
            "SELECT a.user_id || ' ' || i.subject FROM account_identities i JOIN accounts a USING (user_id)"
        )
        .await,
        format!("{} ada-sub", scalar_text(&db, "SELECT user_id FROM accounts").await)
    );

    // The same callback again: its state is spent.
    let replay = browser.get(&callback).await;
    assert_eq!(replay.status, StatusCode::BAD_REQUEST);
    assert!(replay.body.contains("unknown, was already used"), "{}", replay.body);

    // A second sign-in with the same identity finds the same account.
    provider.next_login("ada-sub", "ada@example.org", true).await;
    let second = to_callback(&app, &mut browser, &params).await;
    let back = browser.get(&second).await;
    assert_eq!(back.status, StatusCode::FOUND, "{}", back.body);
    assert_eq!(scalar_text(&db, "SELECT count(*)::text FROM accounts").await, "1");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn closed_sign_up_refuses_an_unknown_identity_and_links_an_operator_account_by_verified_email() {
    let Some((app, provider)) = hosted_with_provider("oidc_closed", |_| {}).await else {
        return;
    };
    let db = app.app.settings.database_url();
    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);
    let mut browser = Browser::new();

    provider.next_login("stranger", "stranger@example.org", true).await;
    let callback = to_callback(&app, &mut browser, &params).await;
    let refused = browser.get(&callback).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(
        refused
            .body
            .contains("No account on this server belongs to this identity, and sign-up is closed"),
        "{}",
        refused.body
    );
    assert_eq!(scalar_text(&db, "SELECT count(*)::text FROM accounts").await, "0");

    // The operator's account: an unverified email at the provider does not take it over ...
    // (each person in a browser of their own: the provider keeps a session per browser)
    let user_id = create_user(&db, "grace@example.org", "correct horse battery staple");
    let mut browser = Browser::new();
    provider.next_login("grace-sub", "grace@example.org", false).await;
    let callback = to_callback(&app, &mut browser, &params).await;
    let refused = browser.get(&callback).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN);
    assert!(
        refused.body.contains("An account with this email exists"),
        "{}",
        refused.body
    );

    // ... nor does a verified one while the account's own address is unproven ...
    let mut browser = Browser::new();
    provider.next_login("grace-sub", "grace@example.org", true).await;
    let callback = to_callback(&app, &mut browser, &params).await;
    let refused = browser.get(&callback).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert!(refused.body.contains("its address is not verified"), "{}", refused.body);

    // ... once it is (as its verification link does), a verified one links it, and the client's
    // key is that account's.
    scalar_text(
        &db,
        &format!("UPDATE accounts SET email_verified_at = now() WHERE user_id = '{user_id}' RETURNING 'verified'"),
    )
    .await;
    let mut browser = Browser::new();
    provider.next_login("grace-sub", "Grace@Example.org", true).await;
    let callback = to_callback(&app, &mut browser, &params).await;
    let back = browser.get(&callback).await;
    assert_eq!(back.status, StatusCode::FOUND, "{}", back.body);
    let code = back.param("code").expect("a code");
    let (status, _, token) = app.token(&app.token_form(&client, &code)).await;
    assert_eq!(status, StatusCode::OK, "{token}");
    assert_eq!(
        scalar_text(
            &db,
            "SELECT user_id FROM account_identities WHERE subject = 'grace-sub'"
        )
        .await,
        user_id
    );
    assert_eq!(scalar_text(&db, "SELECT count(*)::text FROM accounts").await, "1");
}

/// Open sign-up lets anyone register any address with a password. When the address's owner
/// later signs in with the provider (which verified it), the squatter's unverified account must
/// not become theirs: refused, nothing linked. Nor does an address the provider did not verify
/// make an account.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_verified_identity_is_not_linked_to_an_account_whose_address_was_never_verified() {
    let Some((app, provider)) = hosted_with_provider("oidc_squatted", |s| s.hosted.signup = "open".into()).await else {
        return;
    };
    let db = app.app.settings.database_url();
    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);

    // The attacker signs up with the victim's address and a password of their own.
    let squatted = app
        .consent(
            &params,
            &[
                ("email", "victim@corp.example"),
                ("password", "the attacker's own password"),
                ("action", "signup"),
            ],
        )
        .await;
    assert_eq!(squatted.status, StatusCode::FOUND, "{}", squatted.body);
    let squatter = scalar_text(&db, "SELECT user_id FROM accounts WHERE email = 'victim@corp.example'").await;

    // The victim signs in with the provider, which verified the address: refused, not linked.
    let mut browser = Browser::new();
    provider.next_login("victim-sub", "victim@corp.example", true).await;
    let callback = to_callback(&app, &mut browser, &params).await;
    let refused = browser.get(&callback).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert!(refused.location.is_none(), "no code for the client");
    assert!(
        refused
            .body
            .contains("An account with this email exists but its address is not verified"),
        "{}",
        refused.body
    );
    assert_eq!(
        scalar_text(&db, "SELECT count(*)::text FROM account_identities").await,
        "0",
        "the identity is not linked to {squatter}"
    );
    assert_eq!(scalar_text(&db, "SELECT count(*)::text FROM accounts").await, "1");

    // An address the provider did not verify makes no account (it would hold that address).
    let mut browser = Browser::new();
    provider.next_login("claimer-sub", "someone@corp.example", false).await;
    let callback = to_callback(&app, &mut browser, &params).await;
    let refused = browser.get(&callback).await;
    assert_eq!(refused.status, StatusCode::FORBIDDEN, "{}", refused.body);
    assert!(
        refused.body.contains("did not share a verified email address"),
        "{}",
        refused.body
    );
    assert_eq!(scalar_text(&db, "SELECT count(*)::text FROM accounts").await, "1");
    assert_eq!(
        scalar_text(&db, "SELECT count(*)::text FROM account_identities").await,
        "0"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_callback_refuses_a_made_up_state_another_browser_a_replayed_code_and_relays_a_refusal() {
    let Some((app, provider)) = hosted_with_provider("oidc_refusals", |s| s.hosted.signup = "open".into()).await else {
        return;
    };
    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);

    let made_up = app
        .http
        .get(app.url(&format!("{CALLBACK}?state=made-up&code=whatever")))
        .send()
        .await
        .unwrap();
    assert_eq!(made_up.status(), StatusCode::BAD_REQUEST);
    assert!(made_up.text().await.unwrap().contains("unknown, was already used"));
    let no_state = app
        .http
        .get(app.url(&format!("{CALLBACK}?code=x")))
        .send()
        .await
        .unwrap();
    assert_eq!(no_state.status(), StatusCode::BAD_REQUEST);

    // The return in another browser (no cookie) is refused, and spends the sign-in.
    let mut browser = Browser::new();
    provider.next_login("eve-sub", "eve@example.org", true).await;
    let callback = to_callback(&app, &mut browser, &params).await;
    let elsewhere = Browser::new().get(&callback).await;
    assert_eq!(elsewhere.status, StatusCode::BAD_REQUEST);
    assert!(
        elsewhere.body.contains("started in another browser"),
        "{}",
        elsewhere.body
    );
    assert_eq!(browser.get(&callback).await.status, StatusCode::BAD_REQUEST);

    // A code the provider already redeemed, brought back with a fresh sign-in's state.
    provider.next_login("eve-sub", "eve@example.org", true).await;
    let used = to_callback(&app, &mut browser, &params).await;
    assert_eq!(browser.get(&used).await.status, StatusCode::FOUND);
    let used_code = reqwest::Url::parse(&used)
        .unwrap()
        .query_pairs()
        .find(|(n, _)| n == "code")
        .unwrap()
        .1
        .into_owned();
    provider.next_login("eve-sub", "eve@example.org", true).await;
    let fresh = reqwest::Url::parse(&to_callback(&app, &mut browser, &params).await).unwrap();
    let fresh_state = fresh.query_pairs().find(|(n, _)| n == "state").unwrap().1.into_owned();
    let mut replayed = fresh.clone();
    replayed
        .query_pairs_mut()
        .clear()
        .append_pair("state", &fresh_state)
        .append_pair("code", &used_code);
    let answer = browser.get(replayed.as_str()).await;
    assert_eq!(answer.status, StatusCode::BAD_REQUEST);
    assert!(answer.body.contains("did not pass the checks"), "{}", answer.body);

    // The person declines at the provider: the client hears access_denied with its state.
    let mut browser = Browser::new();
    provider.next_declines().await;
    let callback = to_callback(&app, &mut browser, &params).await;
    let declined = browser.get(&callback).await;
    assert_eq!(declined.status, StatusCode::FOUND, "{}", declined.body);
    assert!(declined.location.as_ref().unwrap().as_str().starts_with(REDIRECT));
    assert_eq!(declined.param("error").as_deref(), Some("access_denied"));
    assert_eq!(declined.param("state").as_deref(), Some(STATE));
}

/// Each sign-in begun at the provider is stored until it returns: one address may begin 20 per
/// 10 minutes; the next is refused 429 and nothing more is stored.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sign_ins_begun_at_the_provider_are_limited_per_address() {
    let Some((app, _provider)) = hosted_with_provider("oidc_begin_limit", |_| {}).await else {
        return;
    };
    let client = app.client("Claude Desktop").await;
    let params = app.request(&client);
    let mut browser = Browser::new();
    for _ in 0..svc_http::EXTERNAL_SIGN_INS_PER_WINDOW {
        leave_for_provider(&app, &mut browser, &params).await;
    }
    let db = app.app.settings.database_url();
    let pending = || scalar_text(&db, "SELECT COUNT(*)::text FROM external_sign_ins");
    let before = pending().await;
    assert_eq!(before, svc_http::EXTERNAL_SIGN_INS_PER_WINDOW.to_string());
    let mut form = params.clone();
    form.push(("action".into(), "external".into()));
    let refused = browser.post_form(&app.url("/oauth/authorize"), &form).await;
    assert_eq!(refused.status, StatusCode::TOO_MANY_REQUESTS, "{}", refused.body);
    assert_eq!(pending().await, before, "a refused sign-in stores nothing");
}

/// A sign-in whose begin cannot be counted against its address's limit (the database lost its
/// table of windows) is refused with the consent form's documented busy page (`503`, HTML, the
/// consent page's headers), not an OAuth JSON error a browser would show raw; nothing is stored
/// and the browser is not sent to the provider (none runs: the limit is checked first).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sign_in_that_cannot_be_counted_is_the_documented_busy_page() {
    use sea_orm::{ConnectionTrait, Database};
    let test = "oidc_begin_uncounted";
    if !postgres_available(test) {
        return;
    }
    let Some(app) = OAuthApp::spawn(test, Backend::Postgres, Auth::Strict, |s| {
        s.hosted.enabled = true;
        s.hosted.master_keys = svc::settings::SecretList::Many(vec![master_key("k1", 1)]);
        s.hosted.oidc.issuer = format!("http://127.0.0.1:{}", free_port());
        s.hosted.oidc.client_id = "svc".into();
        s.hosted.oidc.client_secret = "secret".into();
    })
    .await
    else {
        return;
    };
    let client = app.client("Claude Desktop").await;
    let db_url = app.app.settings.database_url();
    let db = Database::connect(&db_url).await.expect("connect");
    db.execute_unprepared("DROP TABLE rate_windows").await.expect("drop");
    let origin = app.issuer().to_owned();
    let refused = app
        .consent_with_headers(&app.request(&client), &[("action", "external")], &[("origin", &origin)])
        .await;
    assert_eq!(refused.status, StatusCode::SERVICE_UNAVAILABLE, "{}", refused.body);
    assert_eq!(refused.headers["content-type"], "text/html; charset=utf-8");
    assert_eq!(refused.headers["cache-control"], "no-store");
    assert_eq!(refused.headers["x-frame-options"], "DENY");
    assert!(refused.headers.contains_key("content-security-policy"));
    assert!(refused.location.is_none() && !refused.headers.contains_key("set-cookie"));
    assert!(
        refused.body.contains(
            "<p>The sign-in could not be counted against this address&#39;s limit right now. Try again in a moment.</p>"
        ),
        "{}",
        refused.body
    );
    assert_eq!(
        scalar_text(&db_url, "SELECT COUNT(*)::text FROM external_sign_ins").await,
        "0",
        "no sign-in began"
    );
    let (_, _, document) = app.get_json("/openapi.json").await;
    let documented = &document["paths"]["/oauth/authorize"]["post"]["responses"]["503"];
    assert!(
        documented["content"]["text/html; charset=utf-8"].is_object(),
        "{documented}"
    );
}

/// `action=external` needs no secret from the person: a form another site posts would take a
/// browser signed in at the provider past the consent page, to the code of the attacker's
/// client. Only a form from the consent page's own origin starts the sign-in.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sign_in_posted_from_another_site_is_refused_and_stores_nothing() {
    let Some((app, _provider)) = hosted_with_provider("oidc_cross_site", |s| s.hosted.signup = "open".into()).await
    else {
        return;
    };
    let client = app.client("Claude Desktop").await;
    let mut form = app.request(&client);
    form.push(("action".into(), "external".into()));
    let db = app.app.settings.database_url();
    let mut browser = Browser::new();
    for origin in [Some("https://evil.example"), Some("null"), None] {
        let page = browser
            .post_form_from(origin, &app.url("/oauth/authorize"), &form)
            .await;
        assert_eq!(page.status, StatusCode::FORBIDDEN, "from {origin:?}: {}", page.body);
        assert!(page.location.is_none(), "no redirect from {origin:?}");
        assert!(page.set_cookies.is_empty(), "{:?}", page.set_cookies);
    }
    assert_eq!(
        scalar_text(&db, "SELECT COUNT(*)::text FROM external_sign_ins").await,
        "0",
        "no sign-in began"
    );
    // The same form from the consent page goes to the provider.
    leave_for_provider(&app, &mut browser, &app.request(&client)).await;
}

/// An external consent page (`oauth.consent_url`) may offer the sign-in with the provider as the
/// built-in one does: a form posted from its origin, named by `Origin` or, from a browser that
/// sends none, by `Referer`, goes to the provider; a request naming no page still does not.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_sign_in_posted_from_the_consent_urls_origin_goes_to_the_provider() {
    let Some((app, provider)) = hosted_with_provider("oidc_consent_url_origin", |s| {
        s.hosted.signup = "open".into();
        s.oauth.consent_url = "https://consent.example.com/approve".into();
    })
    .await
    else {
        return;
    };
    let client = app.client("Claude Desktop").await;
    let mut form = app.request(&client);
    form.push(("action".into(), "external".into()));
    let mut browser = Browser::new();
    let posted_from = [
        ("origin", "https://consent.example.com"),
        ("referer", "https://consent.example.com/approve?client_id=x"),
    ];
    for header in posted_from {
        let page = browser
            .post_form_with(&[header], &app.url("/oauth/authorize"), &form)
            .await;
        assert_eq!(page.status, StatusCode::FOUND, "from {header:?}: {}", page.body);
        let to = page.location.expect("a Location");
        assert!(to.as_str().starts_with(&provider.issuer), "{to}");
    }
    let page = browser.post_form_with(&[], &app.url("/oauth/authorize"), &form).await;
    assert_eq!(page.status, StatusCode::FORBIDDEN, "{}", page.body);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn without_a_provider_the_consent_page_offers_none_and_the_callback_is_not_found() {
    if !postgres_available("oidc_off") {
        return;
    }
    let Some(app) = OAuthApp::spawn("oidc_off", Backend::Postgres, Auth::Strict, |s| {
        s.hosted.enabled = true;
        s.hosted.master_keys = svc::settings::SecretList::Many(vec![master_key("k1", 1)]);
    })
    .await
    else {
        return;
    };
    let client = app.client("Claude Desktop").await;
    let page = app.authorize(&app.request(&client)).await;
    assert!(!page.body.contains("Sign in with"), "{}", page.body);
    let callback = app
        .http
        .get(app.url(&format!("{CALLBACK}?state=s&code=c")))
        .send()
        .await
        .unwrap();
    assert_eq!(callback.status(), StatusCode::NOT_FOUND);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn users_create_queues_a_verification_mail_unless_told_not_to() {
    let Some(sink) = SmtpSink::start("users_create_mail", 0) else {
        return;
    };
    if !postgres_available("users_create_mail") {
        return;
    }
    let Some(app) = OAuthApp::spawn("users_create_mail", Backend::Postgres, Auth::Strict, |s| {
        s.hosted.enabled = true;
        s.hosted.master_keys = svc::settings::SecretList::Many(vec![master_key("k1", 1)]);
        s.mail.smtp_url = sink.url();
        s.mail.from = "svc tests <svc@example.org>".into();
        s.mail.poll_seconds = 1;
        s.mail.retry_base_seconds = 1;
    })
    .await
    else {
        return;
    };
    let db = app.app.settings.database_url();
    let password = "correct horse battery staple";
    create_user_with(&db, "quiet@example.org", password, &["--no-verification-mail"]);
    // `--verified`: the operator vouches for the address; the account starts verified, no mail.
    create_user_with(&db, "vouched@example.org", password, &["--verified"]);
    assert_eq!(
        scalar_text(&db, "SELECT CASE WHEN email_verified_at IS NULL THEN 'no' ELSE 'yes' END FROM accounts WHERE email = 'vouched@example.org'").await,
        "yes"
    );
    create_user(&db, "linus@example.org", "correct horse battery staple");
    let mail = sink
        .wait_for(
            "linus@example.org",
            "Confirm your email address",
            Duration::from_secs(20),
        )
        .await;
    let link = mail.link("/account/verify?token=").expect("a verification link");
    // The CLI's links start with `server.public_base_url` (unset here: the default address), so
    // the link's path is opened on the test server.
    let path = &link[link.find("/account/verify").unwrap()..];
    let confirmed = svc_tests::verify_link::confirm(&app.http, &app.url(path)).await;
    assert_eq!(confirmed.status(), StatusCode::OK);
    assert_eq!(
        scalar_text(&db, "SELECT CASE WHEN email_verified_at IS NULL THEN 'no' ELSE 'yes' END FROM accounts WHERE email = 'linus@example.org'").await,
        "yes"
    );
    assert!(
        sink.received()
            .iter()
            .all(|m| !m.to.iter().any(|to| to.contains("quiet@"))),
        "--no-verification-mail queues none"
    );
    assert!(
        sink.received()
            .iter()
            .all(|m| !m.to.iter().any(|to| to.contains("vouched@"))),
        "--verified queues none"
    );
}

/// The consent page's own button in Debian's Chromium reaches the provider: the origin check
/// that refuses other sites' forms (above) passes what a real browser sends from this page,
/// whose referrer policy would otherwise make it send `Origin: null`
/// (`tests/browser/consent-provider.mjs`).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_consent_pages_provider_button_reaches_the_provider_in_chromium() {
    let test = "oidc_button_in_chromium";
    let browser_dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("browser");
    let chromium = std::env::var("SVC_CHROMIUM").unwrap_or_else(|_| "/usr/bin/chromium".to_owned());
    let needed = [
        browser_dir.join("node_modules").join("playwright-core"),
        std::path::PathBuf::from(chromium),
    ];
    if !svc_tests::external::deps_present(
        test,
        &needed,
        "SVC_REQUIRE_BROWSER",
        "browser deps",
        "run tests/browser/install.sh",
    ) {
        return;
    }
    let Some((app, provider)) = hosted_with_provider(test, |s| s.hosted.signup = "open".into()).await else {
        return;
    };
    let client = app.client("Claude Desktop").await;
    let authorize = reqwest::Url::parse_with_params(&app.url("/oauth/authorize"), app.request(&client))
        .unwrap()
        .to_string();
    let issuer = provider.issuer.clone();
    let run = tokio::task::spawn_blocking(move || {
        let mut command = std::process::Command::new("node");
        command
            .arg(browser_dir.join("consent-provider.mjs"))
            .arg(&authorize)
            .arg(&issuer)
            .current_dir(&browser_dir);
        svc_tests::external::run_with_deadline(command, Duration::from_secs(120))
    })
    .await
    .unwrap();
    let output = format!("{}{}", run.stdout, run.stderr);
    assert!(
        run.status.is_some_and(|status| status.success()),
        "consent-provider.mjs failed:\n{output}"
    );
    let db = app.app.settings.database_url();
    assert_eq!(
        scalar_text(&db, "SELECT COUNT(*)::text FROM external_sign_ins").await,
        "1",
        "the sign-in began: {output}"
    );
}
