//! Declared gadget packages reach the card: a render whose contract can import a package with a
//! `bundleUrl` carries it as `gadgetBundles` in its embedded bootstrap and in the `/ws` ack, and
//! the mount resources' `_meta.ui.csp` lets the card fetch the bundle and reach its `connect`
//! origins. A render whose contract cannot import the package carries nothing for it.
//!
//! The module lexer (the card runtime's reader of modules without the server's links) is inlined
//! only where a bundle may need it: a card without bundles reads its component by `links`.

use serde_json::{Value, json};
use svc_tests::live::LiveClient;
use svc_tests::{Auth, Backend, TestApp, temp_dir};

const SRI: &str = "sha384-oqVuAfXRKap7fdgcCY5uykM6+R9GqQ8K/uxy9rx7HNQlGYl1kPzQho1wx4JwY8wC";

fn manifest() -> Value {
    json!({ "app": { "gadgets": [
        {
            "package": "@acme/charts",
            "version": "2.1.0",
            "bundleUrl": "https://cdn.acme.example/charts-2.1.0.js",
            "bundleSri": SRI,
            "styleUrl": "https://styles.acme.example:8443/charts.css",
            "connect": ["wss://feed.acme.example/live"],
            "exports": [{ "component": "LineChart" }]
        },
        { "package": "@acme/maps", "version": "1.0.0", "exports": [{ "hook": "useMap" }] }
    ] } })
}

async fn spawn(test: &str, backend: Backend) -> Option<TestApp> {
    let dir = temp_dir("svc-gadget-manifest");
    let file = dir.join("svc.json");
    std::fs::write(&file, manifest().to_string()).unwrap();
    TestApp::spawn_configured(test, backend, Auth::DevAllowAll, |s| {
        s.blueprints.manifest = file.display().to_string();
    })
    .await
}

fn contract(gadgets: Value) -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "clientCapabilities": { "gadgets": gadgets }
    })
}

/// Renders with `contract`; returns (the `_meta['ai.svc/render']` slice, the resources/read content).
async fn render(app: &TestApp, intent: &str, contract: Value) -> (Value, Value) {
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": intent, "blueprintDraft": { "contract": contract } }),
        )
        .await;
    let body = app
        .call(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "t" } }),
        )
        .await;
    let slice = body["result"]["_meta"]["ai.svc/render"].clone();
    let uri = body["result"]["structuredContent"]["resourceUri"]
        .as_str()
        .unwrap()
        .to_owned();
    let read = app.rpc("resources/read", json!({ "uri": uri })).await.1;
    (slice, read["result"]["contents"][0].clone())
}

/// The JSON inside the document's `<script id="svc-bootstrap">`.
fn embedded_bootstrap(content: &Value) -> Value {
    let html = content["text"].as_str().unwrap();
    let start = html.find("id=\"svc-bootstrap\">").unwrap() + "id=\"svc-bootstrap\">".len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).unwrap()
}

async fn ack(app: &TestApp, slice: &Value) -> Value {
    let mut ws = LiveClient::connect(&app.base).await;
    ws.send(
        "subscribe",
        json!({ "sessionId": slice["sessionId"], "wsToken": slice["wsToken"] }),
    )
    .await;
    ws.expect("ack").await
}

/// The module lexer's script, as the server inlines it.
const MODULE_LEXER: &str = include_str!("../../../adapters/mount/dist/module-lexer.js");

fn carries_the_lexer(content: &Value) -> bool {
    content["text"].as_str().unwrap().contains(&MODULE_LEXER[..400])
}

/// `component.links` point at the component's import statements and its `default` export.
fn assert_links_fit(component: &Value) {
    let code: Vec<u16> = component["code"].as_str().unwrap().encode_utf16().collect();
    let at = |from: &Value, to: &Value| {
        String::from_utf16(&code[from.as_u64().unwrap() as usize..to.as_u64().unwrap() as usize]).unwrap()
    };
    let links = &component["links"];
    let imports = links["imports"]
        .as_array()
        .unwrap_or_else(|| panic!("no links: {component}"));
    assert!(!imports.is_empty(), "a compiled component imports the JSX runtime");
    for import in imports {
        let statement = at(&import["ss"], &import["se"]);
        assert!(statement.starts_with("import"), "{statement}");
        assert!(
            statement.ends_with(&format!("\"{}\"", import["n"].as_str().unwrap())),
            "{statement}"
        );
    }
    let default = links["exports"]
        .as_array()
        .unwrap()
        .iter()
        .find(|export| export["n"] == "default")
        .expect("a default export");
    assert_eq!(at(&default["s"], &default["e"]), "default");
}

fn strings(value: &Value) -> Vec<&str> {
    value.as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect()
}

async fn a_declared_bundle_reaches_the_card_and_its_csp(app: TestApp) {
    let (slice, content) = render(&app, "sales chart", contract(json!({ "@acme/charts": "2.1.0" }))).await;
    let wanted = json!([{
        "package": "@acme/charts",
        "url": "https://cdn.acme.example/charts-2.1.0.js",
        "integrity": SRI,
        "styleUrl": "https://styles.acme.example:8443/charts.css"
    }]);
    assert_eq!(embedded_bootstrap(&content)["gadgetBundles"], wanted);
    // The tool result's slice too: the shell paints from it where no connection is allowed.
    assert_eq!(slice["gadgetBundles"], wanted, "{slice}");
    let ack = ack(&app, &slice).await;
    assert_eq!(ack["gadgetBundles"], wanted, "{ack}");
    // The bundle is read in the browser: this card's document carries the lexer.
    assert!(carries_the_lexer(&content));
    let component = &embedded_bootstrap(&content)["component"];
    assert_links_fit(component);
    assert_eq!(
        ack["component"]["links"], component["links"],
        "the ack's links are the document's"
    );

    let csp = &content["_meta"]["ui"]["csp"];
    let resources = strings(&csp["resourceDomains"]);
    let connects = strings(&csp["connectDomains"]);
    // The bundle is fetched (connect-src) and run as an inline script: its origin is no script
    // source; nothing of the server's own is loaded as a resource either.
    assert_eq!(resources, ["https://styles.acme.example:8443"]);
    // The runtime fetches the bundle itself (to check its integrity), so connect-src needs it.
    assert!(connects.contains(&"https://cdn.acme.example"), "{connects:?}");
    assert!(connects.contains(&"wss://feed.acme.example"), "{connects:?}");
    assert!(connects.contains(&app.base.as_str()), "{connects:?}");

    // The shell mounts any render of the app: it allows every declared package.
    let shell = app.rpc("resources/read", json!({ "uri": "ui://svc/render" })).await.1;
    // The shell's component comes in a tool result, without links.
    assert!(carries_the_lexer(&shell["result"]["contents"][0]));
    let shell_csp = &shell["result"]["contents"][0]["_meta"]["ui"]["csp"];
    assert!(strings(&shell_csp["connectDomains"]).contains(&"https://cdn.acme.example"));
    assert!(strings(&shell_csp["resourceDomains"]).contains(&"https://styles.acme.example:8443"));
    assert!(strings(&shell_csp["connectDomains"]).contains(&"wss://feed.acme.example"));
}

async fn a_render_that_cannot_import_the_package_carries_none_of_it(app: TestApp) {
    // `@acme/maps` is importable but declares no bundle; `@acme/charts` is not in the contract.
    let (slice, content) = render(&app, "store map", contract(json!({ "@acme/maps": "1.0.0" }))).await;
    assert_eq!(embedded_bootstrap(&content)["gadgetBundles"], json!([]));
    let ack = ack(&app, &slice).await;
    assert_eq!(ack["gadgetBundles"], json!([]));
    // Nothing to read in the browser but the component, whose links come with it.
    assert!(
        !carries_the_lexer(&content),
        "a card without bundles is sent without the lexer"
    );
    assert_links_fit(&embedded_bootstrap(&content)["component"]);
    assert_links_fit(&ack["component"]);
    let csp = &content["_meta"]["ui"]["csp"];
    let all: Vec<&str> = strings(&csp["resourceDomains"])
        .into_iter()
        .chain(strings(&csp["connectDomains"]))
        .collect();
    assert!(all.iter().all(|origin| !origin.contains("acme.example")), "{all:?}");
}

macro_rules! with_gadget_manifest {
    ($($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    if let Some(app) = super::spawn(stringify!($scenario), svc_tests::Backend::Sqlite).await {
                        super::$scenario(app).await;
                    }
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(app) = super::spawn(stringify!($scenario), svc_tests::Backend::Postgres).await {
                        super::$scenario(app).await;
                    }
                }
            }
        )+
    };
}

with_gadget_manifest!(
    a_declared_bundle_reaches_the_card_and_its_csp,
    a_render_that_cannot_import_the_package_carries_none_of_it,
);
