//! Blueprints over real HTTP on every backend: search scoring, dedup with manifest precedence,
//! limits, the UI registry (`svc_render_blueprint` present only with one), featured blueprints,
//! the handshake's semantic cache hit, pools moved between servers, and manifest start-up errors.

use std::path::PathBuf;

use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp, on_every_backend};

fn fixture_manifest() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/manifest/svc.json")
}

/// Like `on_every_backend!`, for servers started with the fixture manifest (`mariadb, ` first adds
/// a MariaDB variant).
macro_rules! with_manifest {
    (mariadb, $($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    if let Some(app) = super::spawn_with_manifest(stringify!($scenario), svc_tests::Backend::Sqlite).await {
                        super::$scenario(app).await;
                    }
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(app) = super::spawn_with_manifest(stringify!($scenario), svc_tests::Backend::Postgres).await {
                        super::$scenario(app).await;
                    }
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn mariadb() {
                    if let Some(app) = super::spawn_with_manifest(stringify!($scenario), svc_tests::Backend::Mariadb).await {
                        super::$scenario(app).await;
                    }
                }
            }
        )+
    };
    ($($scenario:ident),+ $(,)?) => {
        $(
            mod $scenario {
                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn sqlite() {
                    if let Some(app) = super::spawn_with_manifest(stringify!($scenario), svc_tests::Backend::Sqlite).await {
                        super::$scenario(app).await;
                    }
                }

                #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
                async fn postgres() {
                    if let Some(app) = super::spawn_with_manifest(stringify!($scenario), svc_tests::Backend::Postgres).await {
                        super::$scenario(app).await;
                    }
                }
            }
        )+
    };
}

async fn spawn_with_manifest(test: &str, backend: Backend) -> Option<TestApp> {
    TestApp::spawn_configured(test, backend, Auth::DevAllowAll, |s| {
        s.blueprints.manifest = fixture_manifest().display().to_string();
    })
    .await
}

on_every_backend!(Auth::DevAllowAll =>
    without_a_manifest_render_blueprint_is_absent_and_the_catalog_is_empty,
);

// The scenarios that also run on MariaDB (each MariaDB database costs a few seconds of DDL).
on_every_backend!(mariadb, Auth::DevAllowAll =>
    search_limits_default_to_10_and_stop_at_100,
);

with_manifest!(
    render_blueprint_serves_a_manifest_bundle_and_refuses_an_unknown_id,
    manifest_names_score_1_and_substrings_0_7,
    a_manifest_row_wins_over_the_same_blueprint_found_by_meaning,
    featured_lists_the_featured_manifest_uis,
    a_paraphrased_intent_is_a_semantic_cache_hit,
    the_manifest_layers_gadgets_over_the_standard_package,
);
with_manifest!(mariadb, cached_generations_are_found_by_meaning_with_their_cosine);

fn approval_contract() -> Value {
    json!({
        "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } }, "required": ["title"] },
        "actionSpec": { "approve": { "schema": { "type": "object", "properties": { "note": { "type": "string" } } } } }
    })
}

async fn handshake(app: &TestApp, intent: &str, contract: Value) -> Value {
    app.tool_ok(
        "svc_handshake",
        json!({ "intent": intent, "blueprintDraft": { "contract": contract } }),
    )
    .await
}

async fn search(app: &TestApp, query: &str) -> Value {
    app.tool_ok("svc_search_blueprints", json!({ "query": query })).await
}

fn rows(result: &Value) -> Vec<(String, f64)> {
    result["results"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| (r["id"].as_str().unwrap().to_owned(), r["score"].as_f64().unwrap()))
        .collect()
}

fn tool_names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

async fn without_a_manifest_render_blueprint_is_absent_and_the_catalog_is_empty(app: TestApp) {
    let (_, list) = app.rpc("tools/list", json!({})).await;
    let names = tool_names(&list);
    assert!(!names.contains(&"svc_render_blueprint".to_owned()), "{names:?}");
    assert!(names.contains(&"svc_search_blueprints".to_owned()));
    assert!(names.contains(&"svc_list_featured_blueprints".to_owned()));
    let err = app
        .tool_rpc_error("svc_render_blueprint", json!({ "blueprintId": "order-approval" }))
        .await;
    assert_eq!(err["code"], -32602);
    assert_eq!(
        err["message"],
        "Invalid params: name: unknown tool `svc_render_blueprint`"
    );
    let featured = app.tool_ok("svc_list_featured_blueprints", json!({})).await;
    assert_eq!(featured, json!({ "blueprints": [], "total": 0 }));
    let found = search(&app, "order approval").await;
    assert_eq!(found, json!({ "results": [], "total": 0, "query": "order approval" }));
}

async fn render_blueprint_serves_a_manifest_bundle_and_refuses_an_unknown_id(app: TestApp) {
    let (_, list) = app.rpc("tools/list", json!({})).await;
    assert!(tool_names(&list).contains(&"svc_render_blueprint".to_owned()));
    let sessions_before = app.tool_ok("svc_list_sessions", json!({})).await;
    let bundle = app
        .tool_ok("svc_render_blueprint", json!({ "blueprintId": "order-approval" }))
        .await;
    assert_eq!(bundle["blueprintId"], "order-approval");
    assert_eq!(bundle["blueprintName"], "Order approval");
    assert_eq!(bundle["contentType"], "application/javascript+react");
    let code = bundle["code"].as_str().unwrap();
    assert!(code.contains("export default"), "an ES module: {code}");
    assert!(!code.contains("type Props"), "TypeScript is compiled away");
    assert_eq!(
        app.tool_ok("svc_list_sessions", json!({})).await,
        sessions_before,
        "no session is created"
    );
    let err = app
        .tool_error_result("svc_render_blueprint", json!({ "blueprintId": "nope" }))
        .await;
    assert_eq!(err["error"]["code"], "blueprint_not_found");
    assert!(err["error"]["message"].as_str().unwrap().contains("`nope`"));
}

async fn manifest_names_score_1_and_substrings_0_7(app: TestApp) {
    let exact = search(&app, "order APPROVAL").await;
    assert_eq!(exact["query"], "order APPROVAL");
    let first = &exact["results"][0];
    assert_eq!(first["id"], "order-approval");
    assert_eq!(first["score"], 1.0);
    assert_eq!(first["relevance"], "match");
    assert_eq!(first["name"], "Order approval");
    assert_eq!(first["category"], "commerce");
    assert_eq!(first["featured"], true);
    assert_eq!(first["props"], json!(["title", "total"]));
    assert_eq!(first["callbacks"], json!(["approve", "reject"]));

    let by_name = rows(&search(&app, "kanban").await);
    assert_eq!(by_name[0], ("kanban-board".to_owned(), 0.7), "{by_name:?}");
    let by_description = rows(&search(&app, "rain chance").await);
    assert_eq!(
        by_description[0],
        ("weather-forecast".to_owned(), 0.7),
        "{by_description:?}"
    );
    let scores: Vec<f64> = by_description.iter().map(|r| r.1).collect();
    assert!(scores.windows(2).all(|w| w[0] >= w[1]), "sorted by score: {scores:?}");
    assert!(scores.iter().all(|s| (0.0..=1.0).contains(s)));
}

async fn a_manifest_row_wins_over_the_same_blueprint_found_by_meaning(app: TestApp) {
    // The query is a substring of the description (0.7) and nearly the whole text the manifest UI
    // is indexed by, so its cosine is higher than 0.7: the manifest row still wins, once.
    let query = "reject a customer order with its line items";
    let found = search(&app, query).await;
    let got = rows(&found);
    let order_rows: Vec<&(String, f64)> = got.iter().filter(|r| r.0 == "order-approval").collect();
    assert_eq!(order_rows, [&("order-approval".to_owned(), 0.7)], "{got:?}");
    assert_eq!(found["total"].as_u64().unwrap() as usize, got.len());
}

async fn cached_generations_are_found_by_meaning_with_their_cosine(app: TestApp) {
    let rendered = app
        .render(
            "customer invoice with a pay button",
            json!({ "propsSpec": { "type": "object", "properties": { "amount": { "type": "number" } } }, "actionSpec": { "pay": { "schema": { "type": "object" } } } }),
            json!({ "amount": 12 }),
        )
        .await;
    let id = rendered["blueprintId"].as_str().unwrap();
    let found = search(&app, "invoices for customers").await;
    let row = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == id)
        .unwrap_or_else(|| panic!("the cached generation is found: {found}"));
    let score = row["score"].as_f64().unwrap();
    assert!(score > 0.2 && score < 1.0 && score != 0.7, "a cosine: {score}");
    assert_eq!(row["name"], "customer invoice with a pay button");
    assert_eq!(row["category"], "generated");
    assert_eq!(row["props"], json!(["amount"]));
    assert_eq!(row["callbacks"], json!(["pay"]));
    assert_eq!(row["featured"], false);
    assert_eq!(rows(&found)[0].0, id, "the best match first");
    let unrelated = rows(&search(&app, "kanban").await);
    assert!(unrelated.iter().all(|r| r.0 != id), "{unrelated:?}");
}

async fn search_limits_default_to_10_and_stop_at_100(app: TestApp) {
    // Twelve contracts, so no render reuses another's blueprint by meaning.
    for i in 0..12 {
        let contract =
            json!({ "propsSpec": { "type": "object", "properties": { format!("region{i}"): { "type": "string" } } } });
        app.render(&format!("quarterly sales report {i}"), contract, json!({}))
            .await;
    }
    let default = search(&app, "quarterly sales report").await;
    assert_eq!(default["results"].as_array().unwrap().len(), 10);
    assert_eq!(default["total"], 12);
    let three = app
        .tool_ok(
            "svc_search_blueprints",
            json!({ "query": "quarterly sales report", "limit": 3 }),
        )
        .await;
    assert_eq!(three["results"].as_array().unwrap().len(), 3);
    assert_eq!(rows(&three)[..], rows(&default)[..3], "a limit cuts the same ranking");
    let hundred = app
        .tool_ok(
            "svc_search_blueprints",
            json!({ "query": "quarterly sales report", "limit": 100 }),
        )
        .await;
    assert_eq!(hundred["results"].as_array().unwrap().len(), 12);
    let cases = [
        (
            json!(101),
            "Invalid params: limit: 101 is greater than the maximum of 100",
        ),
        (json!(0), "Invalid params: limit: 0 is less than the minimum of 1"),
        (
            json!("ten"),
            "Invalid params: limit: \"ten\" is not of types \"null\", \"integer\"",
        ),
        (
            json!(2.5),
            "Invalid params: limit: 2.5 is not of types \"null\", \"integer\"",
        ),
    ];
    for (limit, message) in cases {
        let err = app
            .tool_rpc_error("svc_search_blueprints", json!({ "query": "x", "limit": limit }))
            .await;
        assert_eq!(err["code"], -32602, "{limit}");
        assert_eq!(err["message"], message, "{limit}");
    }
    let err = app.tool_rpc_error("svc_search_blueprints", json!({})).await;
    assert_eq!(
        err["message"],
        "Invalid params: arguments: \"query\" is a required property"
    );
}

async fn featured_lists_the_featured_manifest_uis(app: TestApp) {
    let featured = app.tool_ok("svc_list_featured_blueprints", json!({})).await;
    assert_eq!(featured["total"], 2);
    let ids: Vec<&str> = featured["blueprints"]
        .as_array()
        .unwrap()
        .iter()
        .map(|b| b["id"].as_str().unwrap())
        .collect();
    assert_eq!(ids, ["order-approval", "weather-forecast"], "manifest order");
    let first = &featured["blueprints"][0];
    for field in [
        "id",
        "name",
        "description",
        "category",
        "props",
        "callbacks",
        "featured",
    ] {
        assert!(first.get(field).is_some(), "{field} in {first}");
    }
}

async fn a_paraphrased_intent_is_a_semantic_cache_hit(app: TestApp) {
    let first = app
        .render(
            "approve a purchase order",
            approval_contract(),
            json!({ "title": "PO 7" }),
        )
        .await;
    let cached = first["blueprintId"].as_str().unwrap().to_owned();
    assert_eq!(first["cache"]["hit"], false);

    let hs = handshake(&app, "purchase order approval form", approval_contract()).await;
    assert_eq!(hs["suggestion"]["origin"], "cache", "{hs}");
    assert_eq!(hs["action"], "reuse");
    assert_eq!(hs["suggestion"]["blueprintMeta"]["blueprintId"], cached.as_str());
    let hint = &hs["suggestion"]["cache"];
    assert_eq!(hint["kind"], "semantic");
    let similarity = hint["similarity"].as_f64().unwrap();
    assert!((0.50..1.0).contains(&similarity), "{similarity}");

    let render = app
        .tool_ok(
            "svc_render",
            json!({ "handshakeId": hs["handshakeId"], "props": { "title": "PO 8" } }),
        )
        .await;
    assert_eq!(render["outcome"], "rendered");
    assert_eq!(render["blueprintId"], cached.as_str());
    let cache = &render["cache"];
    assert_eq!(cache["hit"], true);
    assert_eq!(cache["kind"], "semantic");
    assert_eq!(cache["cachedBlueprintId"], cached.as_str());
    assert_eq!(cache["similarity"].as_f64().unwrap(), similarity);
    assert_eq!(cache["llmCallsAvoided"], 1);
    let reason = cache["reason"].as_str().unwrap();
    assert!(reason.contains("approve a purchase order"), "{reason}");

    // Compatible contracts only: the same paraphrase with another contract generates.
    let other_contract = json!({ "propsSpec": { "type": "object", "properties": { "po": { "type": "integer" } } } });
    let hs = handshake(&app, "purchase order approval form", other_contract).await;
    assert_eq!(hs["suggestion"]["origin"], "agent", "{hs}");
    // An unrelated intent with the same contract generates too.
    let hs = handshake(&app, "weather for the weekend", approval_contract()).await;
    assert_eq!(hs["suggestion"]["origin"], "agent", "{hs}");
    // forceCreate skips the lookup.
    let hs = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "purchase order approval form", "forceCreate": true, "blueprintDraft": { "contract": approval_contract() } }),
        )
        .await;
    assert_eq!(hs["suggestion"]["origin"], "agent", "{hs}");
}

async fn the_manifest_layers_gadgets_over_the_standard_package(app: TestApp) {
    let gadgets = app.tool_ok("svc_list_gadgets", json!({})).await;
    let packages: Vec<&str> = gadgets["gadgets"]
        .as_array()
        .unwrap()
        .iter()
        .map(|g| g["package"].as_str().unwrap())
        .collect();
    assert_eq!(packages, ["@svc/gadgets", "@acme/charts"]);
    assert_eq!(gadgets["gadgets"][1]["exports"][0]["component"], "LineChart");
}

/// PostgreSQL only: replicas share a database there (a SQLite replica has its own file).
mod replicas_converge {
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn postgres() {
        super::replicas_converge(svc_tests::Backend::Postgres).await;
    }
}

/// A blueprint generated on one replica becomes searchable and reusable by meaning on another
/// after the other's index refresh; deleted on the first, it leaves the other's search.
async fn replicas_converge(backend: Backend) {
    let Some(a) = TestApp::spawn_configured("replicas_converge", backend, Auth::DevAllowAll, |s| {
        s.blueprints.index_refresh_seconds = 1;
    })
    .await
    else {
        return;
    };
    let b = a.replica().await;
    let rendered = a
        .render(
            "approve a purchase order",
            approval_contract(),
            json!({ "title": "PO 1" }),
        )
        .await;
    let id = rendered["blueprintId"].as_str().unwrap().to_owned();
    let call = |name: &str, arguments: Value| {
        let body = json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": name, "arguments": arguments } });
        let request = a
            .client
            .post(format!("{}/mcp", b.base))
            .bearer_auth(&a.bearer)
            .json(&body);
        async move {
            let reply: Value = request.send().await.unwrap().json().await.unwrap();
            reply["result"]["structuredContent"].clone()
        }
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let found = call("svc_search_blueprints", json!({ "query": "purchase order approval" })).await;
        if found["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == id.as_str())
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "replica B never indexed {id}: {found}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    let hs = call(
        "svc_handshake",
        json!({ "intent": "purchase order approval form", "blueprintDraft": { "contract": approval_contract() } }),
    )
    .await;
    assert_eq!(hs["suggestion"]["cache"]["kind"], "semantic", "{hs}");
    assert_eq!(hs["suggestion"]["blueprintMeta"]["blueprintId"], id.as_str());

    // Deleted through replica A's /ops, it leaves replica B's search within a few refreshes.
    let deleted: Value = a
        .client
        .post(format!("{}/ops", a.base))
        .bearer_auth(&a.bearer)
        .json(&json!({ "jsonrpc": "2.0", "id": 2, "method": "tools/call",
                       "params": { "name": "svc_ops_delete_blueprint", "arguments": { "blueprintId": id } } }))
        .send()
        .await
        .unwrap()
        .json()
        .await
        .unwrap();
    assert_eq!(deleted["result"]["structuredContent"]["deleted"], true, "{deleted}");
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let found = call("svc_search_blueprints", json!({ "query": "purchase order approval" })).await;
        if !found["results"]
            .as_array()
            .unwrap()
            .iter()
            .any(|r| r["id"] == id.as_str())
        {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "replica B still finds the deleted {id}: {found}"
        );
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
    }
    b.stop();
}

/// A UI taken out of the manifest is removed from the cache at the next start: neither found nor
/// reusable any more, while the UIs still declared stay.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_ui_removed_from_the_manifest_leaves_the_cache() {
    let shared = svc_tests::temp_dir("svc-manifest-db");
    let database_url = format!("sqlite://{}/svc.db?mode=rwc", shared.display());
    let first = TestApp::spawn_configured("manifest_v1", Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.server.database_url = database_url.clone();
        s.blueprints.manifest = fixture_manifest().display().to_string();
    })
    .await
    .unwrap();
    let found = search(&first, "kanban").await;
    assert_eq!(rows(&found)[0].0, "kanban-board");
    drop(first);

    let only_orders = shared.join("svc.json");
    let ui = fixture_manifest()
        .parent()
        .unwrap()
        .join("uis/order-approval/svc.ui.json");
    std::fs::write(
        &only_orders,
        json!({ "blueprints": { "include": [ui.display().to_string()] } }).to_string(),
    )
    .unwrap();
    let second = TestApp::spawn_configured("manifest_v2", Backend::Sqlite, Auth::DevAllowAll, |s| {
        s.server.database_url = database_url.clone();
        s.blueprints.manifest = only_orders.display().to_string();
    })
    .await
    .unwrap();
    let found = search(&second, "kanban board").await;
    assert!(rows(&found).iter().all(|r| r.0 != "kanban-board"), "{found}");
    let found = search(&second, "order approval").await;
    assert_eq!(rows(&found)[0], ("order-approval".to_owned(), 1.0));
    let err = second
        .tool_error_result("svc_render_blueprint", json!({ "blueprintId": "kanban-board" }))
        .await;
    assert_eq!(err["error"]["code"], "blueprint_not_found");
    drop(second);
    std::fs::remove_dir_all(shared).ok();
}
