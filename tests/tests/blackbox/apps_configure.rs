//! `svc apps configure`: each bad value is refused with its own one-line error and exit status 1,
//! nothing stored; options not given keep their stored values.

use crate::federation_support;
use crate::ops_support;

use federation_support::configure_app;
use ops_support::{BINARY, Client, app_with_prompt};
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::Strict => bad_values_are_refused_one_line_each_and_the_rest_is_kept);

fn refused(database_url: &str, app_id: &str, args: &[&str]) -> String {
    let out = std::process::Command::new(BINARY)
        .args(["apps", "configure", "--database-url", database_url, "--app-id", app_id])
        .args(args)
        .output()
        .expect("svc runs");
    assert_eq!(out.status.code(), Some(1), "{args:?} should fail");
    assert!(out.stdout.is_empty(), "{args:?}: nothing printed on stdout");
    String::from_utf8(out.stderr).unwrap().trim_end().to_owned()
}

async fn bad_values_are_refused_one_line_each_and_the_rest_is_kept(app: TestApp) {
    let db = app.settings.database_url();
    let app_id = app_with_prompt(&Client::of(&app), "Configured", "x").await;
    let app_id = app_id.as_str().unwrap();
    configure_app(BINARY, &db, app_id, &["--rate-limit-per-minute", "10"]);

    let cases: [(&str, &[&str], String); 7] = [
        (
            "NoSuchApp0000000",
            &["--rate-limit-per-minute", "5"],
            "svc: cannot configure app NoSuchApp0000000: no app with id NoSuchApp0000000".into(),
        ),
        (
            app_id,
            &["--rate-limit-per-minute", "0"],
            format!("svc: cannot configure app {app_id}: rate limit per minute must be between 1 and 1000000, not 0"),
        ),
        (
            app_id,
            &["--default-shell-type", "window"],
            format!(
                "svc: cannot configure app {app_id}: unknown shell type `window`: expected chat, fullscreen or spatial"
            ),
        ),
        (
            app_id,
            &["--enabled-adapters", "voice,telepathy"],
            format!(
                "svc: cannot configure app {app_id}: unknown adapter `telepathy`: expected one of voice, camera, location, bluetooth"
            ),
        ),
        (
            app_id,
            &["--auth-mode", "federated"],
            format!("svc: cannot configure app {app_id}: auth mode `federated` needs a federation issuer"),
        ),
        (
            app_id,
            &["--federation-issuer", "http://issuer.example"],
            format!(
                "svc: cannot configure app {app_id}: federation issuer must be an https URL (http only on a loopback host), not `http://issuer.example`"
            ),
        ),
        (
            app_id,
            &["--jwks-url", "https://issuer.example/jwks"],
            format!("svc: cannot configure app {app_id}: a JWKS URL needs a federation issuer to check tokens against"),
        ),
    ];
    for (target, args, expected) in cases {
        assert_eq!(refused(&db, target, args), expected, "{args:?}");
    }

    let printed = configure_app(BINARY, &db, app_id, &["--default-shell-type", "chat"]);
    assert!(printed.contains("rate_limit_per_minute: 10"), "kept: {printed}");
    assert!(printed.contains("default_shell_type: chat"), "{printed}");
    assert!(printed.contains("auth_mode: native"), "{printed}");
}
