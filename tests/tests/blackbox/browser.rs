//! A rendered card in a real browser: `tests/browser/card-flow.mjs` drives Debian's Chromium
//! (playwright-core, never a downloaded browser) against the real `svc` binary. The agent is the
//! official MCP TypeScript SDK client, the host page uses the ext-apps 2.x `AppBridge`, and the
//! card is the committed mount runtime inside a `srcdoc` iframe (origin `null`, sandbox
//! `allow-scripts allow-forms`) under the policy a strict host builds from the resource's
//! `_meta.ui.csp` (`tests/browser/host-policy.js`). It proves: the strict-host matrix (the shell
//! and the per-render document under their declared policy, a host granting no domains, a host
//! applying none) with every request audited against the declaration; the card
//! mounts from the per-render resource and from the shell plus the tool result; a click reaches
//! `svc_consume` with intent, actionData and uiContext; `svc_update` repaints; `svc_emit` streams;
//! a dropped connection resumes with nothing lost or doubled, and an action clicked offline is
//! delivered once; a history epoch keeps its props; a refused wsToken is refreshed through the
//! host; a CSP that forbids the WebSocket gets
//! the card over the `pollingUrl` fallback (update, emit and a click reaching `svc_consume`); a
//! throwing component and an unprovided import show readable errors, and a card that threw paints
//! again when `svc_update` brings good props; an action over the 256 KiB frame limit settles as
//! refused (`FRAME_TOO_LARGE`) on a card that stays live, and a later action reaches
//! `svc_consume`; an action on a card the host lets connect nowhere settles with `NOT_CONNECTED`;
//! a subscribe answered `SERVER_BUSY` before its `ack` is sent again after `retryAfterSeconds`
//! (not after the 15 s connect limit), and one refused with `BAD_FRAME` says so on the card at once;
//! a socket unbound after its `ack` (`INTERNAL`, then `NOT_SUBSCRIBED`) is subscribed again on
//! the same socket, and the action sent meanwhile reaches `svc_consume` once;
//! a component importing a
//! declared gadget package gets the bundle the host page's server serves (integrity checked,
//! stylesheet linked, one React), and a bundle whose bytes differ from its `bundleSri` shows a
//! readable integrity error.
//!
//! The server runs with a manifest declaring those packages (`tests/browser/gadgets/`). Their
//! `bundleUrl` is on the host page's server, which `card-flow.mjs` starts, so this test picks that
//! server's port first and passes it on (`SVC_BROWSER_HOST_PORT`): the `gadgetBundles` the card
//! receives are then the server's own, not something the test's WebSocket proxy made up.
//!
//! Needs `tests/browser/node_modules` and `/usr/bin/chromium` (`bash tests/browser/install.sh`).
//! Without them the test prints `skipped: ...` and passes, unless `SVC_REQUIRE_BROWSER=1`.

use std::net::TcpListener;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use base64::Engine;
use serde_json::json;
use sha2::{Digest, Sha384};

use svc_tests::external::{deps_present, run_with_deadline};
use svc_tests::process::ServerProcess;
use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
const CHROMIUM: &str = "/usr/bin/chromium";
const DEADLINE: Duration = Duration::from_secs(240);
/// The gallery mounts 21 cards and runs axe-core on each three times.
const GALLERY_DEADLINE: Duration = Duration::from_secs(480);

fn browser_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("browser")
}

#[test]
fn a_card_mounts_acts_updates_streams_and_resumes_in_chromium() {
    let test = "a_card_mounts_acts_updates_streams_and_resumes_in_chromium";
    if !browser_deps_present(test) {
        return;
    }
    let data_dir = temp_dir("svc-browser");
    let host_port = free_port();
    let manifest = data_dir.join("svc.json");
    std::fs::write(&manifest, gadget_manifest(host_port).to_string()).expect("write svc.json");
    let server = ServerProcess::start(
        BINARY,
        &data_dir,
        &["--dev-allow-all", "--manifest", manifest.to_str().expect("utf-8 path")],
    );
    let mut command = Command::new("node");
    command
        .arg(browser_dir().join("card-flow.mjs"))
        .arg(&server.base)
        .env("SVC_BROWSER_HOST_PORT", host_port.to_string())
        .current_dir(browser_dir());
    let run = run_with_deadline(command, DEADLINE);
    drop(server);
    let _ = std::fs::remove_dir_all(&data_dir);
    let output = format!("{}{}", run.stdout, run.stderr);
    match run.status {
        Some(status) if status.success() => println!("{output}"),
        Some(_) => panic!("card-flow.mjs failed:\n{output}"),
        None => panic!("card-flow.mjs did not finish within {DEADLINE:?} and was killed:\n{output}"),
    }
}

/// The built-in generator's gallery (`tests/browser/gallery.mjs`): every fixture contract of
/// `gallery-fixtures.mjs` (21) rendered by the real server and mounted at 720 px and 380 px, light
/// and dark, with no horizontal overflow and no serious or critical axe-core violation; every
/// control reachable by Tab with a visible focus ring; the 20-row table readable at 720 px and
/// stacked at 380 px; money and percentages formatted; series drawn as line, bar and sparkline
/// charts; reject styled as danger; at most two buttons at the bottom; a double click sending one
/// event; `09:30` typed into a time field accepted by the server; a field the server refuses
/// showing its error inline, then a sending and a sent state; a row action sending its row; the
/// stepper at step 1 of 3 moving when the agent answers Next. Screenshots in
/// `tests/browser/artifacts/gallery/`.
#[test]
fn the_builtin_generator_gallery_reads_well_at_720_and_380_px_in_chromium() {
    let test = "the_builtin_generator_gallery_reads_well_at_720_and_380_px_in_chromium";
    if !browser_deps_present(test) {
        return;
    }
    let data_dir = temp_dir("svc-gallery");
    let server = ServerProcess::start(BINARY, &data_dir, &["--dev-allow-all"]);
    let mut command = Command::new("node");
    command
        .arg(browser_dir().join("gallery.mjs"))
        .arg(&server.base)
        .current_dir(browser_dir());
    let run = run_with_deadline(command, GALLERY_DEADLINE);
    drop(server);
    let _ = std::fs::remove_dir_all(&data_dir);
    let output = format!("{}{}", run.stdout, run.stderr);
    match run.status {
        Some(status) if status.success() => println!("{output}"),
        Some(_) => panic!("gallery.mjs failed:\n{output}"),
        None => panic!("gallery.mjs did not finish within {GALLERY_DEADLINE:?} and was killed:\n{output}"),
    }
}

/// The operator console (`tests/browser/console.mjs`) against a strict self-hosted server on
/// SQLite: signs in with a key minted by `svc keys mint`, walks apps, keys (issue, one-time
/// reveal, revoke, refused on `/mcp`), orgs and invites, coupons (a code from `svc coupons
/// issue`), blueprints; axe-core on every screen at 1024 px, 380 px and dark; the session cookie
/// unreadable from script. Screenshots in `tests/browser/artifacts/console/`.
#[test]
fn the_operator_console_walks_every_screen_in_chromium() {
    let test = "the_operator_console_walks_every_screen_in_chromium";
    if !browser_deps_present(test) {
        return;
    }
    let data_dir = temp_dir("svc-console");
    let dir = data_dir.to_str().expect("utf-8 path");
    let key = last_line_of(&["keys", "mint", "--data-dir", dir, "--name", "console test"]);
    let coupon = last_line_of(&["coupons", "issue", "--cents", "500", "--data-dir", dir]);
    let server = ServerProcess::start(BINARY, &data_dir, &[]);
    let mut command = Command::new("node");
    command
        .arg(browser_dir().join("console.mjs"))
        .arg(&server.base)
        .arg(&key)
        .arg(&coupon)
        .current_dir(browser_dir());
    let run = run_with_deadline(command, DEADLINE);
    drop(server);
    let _ = std::fs::remove_dir_all(&data_dir);
    let output = format!("{}{}", run.stdout, run.stderr);
    match run.status {
        Some(status) if status.success() => println!("{output}"),
        Some(_) => panic!("console.mjs failed:\n{output}"),
        None => panic!("console.mjs did not finish within {DEADLINE:?} and was killed:\n{output}"),
    }
}

/// The console's hosted screens (`console.mjs ... hosted`) against a hosted server on
/// PostgreSQL that checks bearers: signs in with an account's email and password (a wrong
/// password first), provider keys set (only the last four shown) and removed; the account's cold
/// render (made here with its key) shows as spend in the chart and its generated blueprint is
/// previewed with its fixture props; a coupon redeemed changes the balance and the ledger;
/// axe-core clean. Needs `SVC_TEST_DATABASE_URL` (skipped without it, unless
/// `SVC_REQUIRE_POSTGRES=1`).
#[tokio::test(flavor = "multi_thread")]
async fn the_operator_console_shows_hosted_screens_in_chromium() {
    let test = "the_operator_console_shows_hosted_screens_in_chromium";
    if !browser_deps_present(test) {
        return;
    }
    let Some(mut app) = crate::hosted_support::accounts::hosted_strict_app(test, |_| {}).await else {
        return;
    };
    let url = app.settings.server.database_url.clone();
    let email = "console@example.org";
    let password = "console walk password";
    crate::hosted_support::accounts::create_user(&url, email, password);
    // A cold render by the account's own key: charged to its wallet, and a generated blueprint.
    app.bearer = crate::hosted_support::accounts::mint_key(&url, email, Some("render"));
    let handshake = crate::hosted_support::handshake(&app, "order card").await;
    let rendered = crate::hosted_support::render(&app, &handshake, json!({})).await;
    assert_eq!(
        rendered["result"]["structuredContent"]["outcome"], "rendered",
        "{rendered}"
    );
    let coupon = last_line_of(&["coupons", "issue", "--cents", "500", "--database-url", &url]);
    let base = app.base.clone();
    let run = tokio::task::spawn_blocking(move || {
        let mut command = Command::new("node");
        command
            .arg(browser_dir().join("console.mjs"))
            .arg(&base)
            .arg(email)
            .arg(&coupon)
            .arg("hosted")
            .arg(password)
            .current_dir(browser_dir());
        run_with_deadline(command, DEADLINE)
    })
    .await
    .expect("the walk ran");
    drop(app);
    let output = format!("{}{}", run.stdout, run.stderr);
    match run.status {
        Some(status) if status.success() => println!("{output}"),
        Some(_) => panic!("console.mjs hosted failed:\n{output}"),
        None => panic!("console.mjs hosted did not finish within {DEADLINE:?} and was killed:\n{output}"),
    }
}

/// The last line `svc <args>` prints (the key or the coupon code), which must succeed.
fn last_line_of(args: &[&str]) -> String {
    let output = Command::new(BINARY).args(args).output().expect("run svc");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "svc {args:?}: {stdout}{}",
        String::from_utf8_lossy(&output.stderr)
    );
    stdout.lines().last().expect("a line").trim().to_owned()
}

/// README's first hour ends on the playground (`tests/browser/playground.mjs`): README's own
/// handshake and render through /mcp, the render's text linking the page, the card mounted there
/// under its declared policy, a click shown as sent and drained by the page's `svc_consume`, the
/// page's strict policy refusing nothing. Dev mode: the page is open.
#[test]
fn the_first_hour_ends_with_a_card_on_the_playground_and_a_drained_click() {
    let test = "the_first_hour_ends_with_a_card_on_the_playground_and_a_drained_click";
    if !browser_deps_present(test) {
        return;
    }
    let data_dir = temp_dir("svc-playground");
    let server = ServerProcess::start(BINARY, &data_dir, &["--dev-allow-all"]);
    let mut command = Command::new("node");
    command
        .arg(browser_dir().join("playground.mjs"))
        .arg(&server.base)
        .current_dir(browser_dir());
    let run = run_with_deadline(command, DEADLINE);
    drop(server);
    let _ = std::fs::remove_dir_all(&data_dir);
    finished("playground.mjs", run);
}

/// The same path on a strict server: the page asks for a key (a wrong one is refused) and signs
/// in with one minted by `svc keys mint`; the agent uses another.
#[test]
fn a_strict_playground_signs_in_with_a_key_then_shows_the_card_and_its_click() {
    let test = "a_strict_playground_signs_in_with_a_key_then_shows_the_card_and_its_click";
    if !browser_deps_present(test) {
        return;
    }
    let data_dir = temp_dir("svc-playground-strict");
    let agent_key = mint_key(&data_dir, "agent");
    let page_key = mint_key(&data_dir, "playground");
    let server = ServerProcess::start(BINARY, &data_dir, &[]);
    let mut command = Command::new("node");
    command
        .arg(browser_dir().join("playground.mjs"))
        .arg(&server.base)
        .env("SVC_AGENT_BEARER", agent_key)
        .env("SVC_PLAYGROUND_KEY", page_key)
        .current_dir(browser_dir());
    let run = run_with_deadline(command, DEADLINE);
    drop(server);
    let _ = std::fs::remove_dir_all(&data_dir);
    finished("playground.mjs (strict)", run);
}

/// `svc keys mint`'s last line: the new key.
fn mint_key(data_dir: &Path, name: &str) -> String {
    let dir = data_dir.to_str().expect("utf-8 path");
    last_line_of(&["keys", "mint", "--data-dir", dir, "--name", name])
}

fn finished(script: &str, run: svc_tests::external::Finished) {
    let output = format!("{}{}", run.stdout, run.stderr);
    match run.status {
        Some(status) if status.success() => println!("{output}"),
        Some(_) => panic!("{script} failed:\n{output}"),
        None => panic!("{script} did not finish within {DEADLINE:?} and was killed:\n{output}"),
    }
}
fn browser_deps_present(test: &str) -> bool {
    let chromium = std::env::var("SVC_CHROMIUM").unwrap_or_else(|_| CHROMIUM.to_owned());
    let needed = [
        browser_dir().join("node_modules").join("playwright-core"),
        PathBuf::from(chromium),
    ];
    deps_present(
        test,
        &needed,
        "SVC_REQUIRE_BROWSER",
        "browser deps",
        "run tests/browser/install.sh",
    )
}

/// A port nobody listens on now, for the host page's server that `card-flow.mjs` starts.
fn free_port() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").expect("bind a free port");
    listener.local_addr().expect("local addr").port()
}

/// Two declared packages served by the host page's server: `badge.js` with its true sha384, and a
/// tampered copy (the host serves different bytes) declared with the true bundle's sha384.
fn gadget_manifest(host_port: u16) -> serde_json::Value {
    let bundle = std::fs::read(browser_dir().join("gadgets/badge.js")).expect("read badge.js");
    let sri = format!(
        "sha384-{}",
        base64::engine::general_purpose::STANDARD.encode(Sha384::digest(&bundle))
    );
    let origin = format!("http://127.0.0.1:{host_port}");
    json!({ "app": { "gadgets": [
        {
            "package": "@svc-test/badge",
            "version": "1.0.0",
            "bundleUrl": format!("{origin}/gadgets/badge.js"),
            "bundleSri": sri,
            "styleUrl": format!("{origin}/gadgets/badge.css"),
            "exports": [{ "component": "Badge" }]
        },
        {
            "package": "@svc-test/badge-tampered",
            "version": "1.0.0",
            "bundleUrl": format!("{origin}/gadgets/badge-tampered.js"),
            "bundleSri": sri,
            "exports": [{ "component": "Badge" }]
        }
    ] } })
}
