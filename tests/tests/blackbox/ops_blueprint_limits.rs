//! What bounds the operator's blueprints on the wire: each text's cap (-32602 naming the field,
//! from the published `inputSchema`), the listing's pages (`limit`, `cursor`, `nextCursor`), the
//! app's room, and rows stored over the caps before they existed (they list, update and search,
//! and the index keeps only an excerpt of them). On SQLite and PostgreSQL.

use crate::ops_support;

use ops_support::Client;
use sea_orm::{ConnectionTrait, Database, DbBackend, Statement};
use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend, readiness_within};

on_every_backend!(Auth::Strict =>
    each_text_is_capped_where_it_arrives,
    the_listing_is_paged_with_a_cursor,
    a_row_stored_over_the_caps_still_lists_and_searches_as_an_excerpt,
    an_app_at_its_cap_takes_no_more_operator_blueprints,
);

/// The texts, their caps in characters, and the tools that take them.
const CAPS: [(&str, usize); 4] = [
    ("persona", 200),
    ("aesthetic", 200),
    ("context", 4_000),
    ("seedPrompt", 10_000),
];
const TOOLS: [&str; 2] = ["svc_ops_register_blueprint", "svc_ops_generate_blueprint"];
/// `APP_BLUEPRINTS_MAX` (docs/ops.md).
const APP_BLUEPRINTS_MAX: usize = 10_000;
/// What the index keeps of a description (docs/blueprints.md), before its `…`.
const INDEXED_DESCRIPTION_CHARS: usize = 500;

fn contract(title_field: &str) -> Value {
    json!({
        "propsSpec": {
            "type": "object",
            "properties": { title_field: { "type": "string" } },
            "required": [title_field]
        },
    })
}

fn arguments(tool: &str, extra: Value) -> Value {
    let mut arguments = json!({ "contract": contract("title") });
    if tool == "svc_ops_register_blueprint" {
        arguments["componentCode"] = json!("export default () => null;");
    }
    arguments
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    arguments
}

async fn register(ops: &Client, contract: Value, extra: Value) -> String {
    let mut arguments = json!({ "contract": contract, "componentCode": "export default () => null;" });
    arguments
        .as_object_mut()
        .unwrap()
        .extend(extra.as_object().unwrap().clone());
    ops.ok("svc_ops_register_blueprint", arguments).await["blueprintId"]
        .as_str()
        .unwrap()
        .to_owned()
}

fn ids(page: &Value) -> Vec<String> {
    page["blueprints"]
        .as_array()
        .unwrap_or_else(|| panic!("{page}"))
        .iter()
        .map(|r| r["blueprintId"].as_str().unwrap().to_owned())
        .collect()
}

/// Every page of the listing from the first, following `nextCursor`: the ids of each page.
async fn pages(ops: &Client, filters: Value) -> Vec<Vec<String>> {
    let mut pages = Vec::new();
    let mut arguments = filters;
    loop {
        let page = ops.ok("svc_ops_list_blueprints", arguments.clone()).await;
        pages.push(ids(&page));
        match page.get("nextCursor") {
            Some(cursor) => arguments["cursor"] = cursor.clone(),
            None => return pages,
        }
    }
}

/// The server's database, reached from the test.
async fn database(app: &TestApp) -> (sea_orm::DatabaseConnection, DbBackend) {
    let (url, backend) = if app.is_postgres() {
        (app.settings.server.database_url.clone(), DbBackend::Postgres)
    } else {
        let file = app.data_dir.join("svc.db");
        (format!("sqlite://{}?mode=rwc", file.display()), DbBackend::Sqlite)
    };
    let db = Database::connect(&url)
        .await
        .expect("the test reaches the server's database");
    (db, backend)
}

async fn each_text_is_capped_where_it_arrives(app: TestApp) {
    let ops = Client::of(&app);
    let (_, listed) = ops.ops("tools/list", json!({})).await;
    for tool in TOOLS {
        let declared = listed["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .find(|t| t["name"] == tool)
            .unwrap_or_else(|| panic!("{tool} is listed"));
        for (field, max) in CAPS {
            assert_eq!(
                declared["inputSchema"]["properties"][field]["maxLength"],
                json!(max),
                "{tool} publishes the cap of {field}"
            );
            // Characters, not bytes: `é` is two bytes.
            let message = ops
                .invalid(tool, arguments(tool, json!({ field: "é".repeat(max + 1) })), field)
                .await;
            assert!(
                message.ends_with(&format!("is longer than {max} characters")),
                "{tool}: {message}"
            );
        }
    }
    assert!(
        ids(&ops.ok("svc_ops_list_blueprints", json!({})).await).is_empty(),
        "nothing refused was stored"
    );
    let at_the_caps: serde_json::Map<String, Value> = CAPS
        .iter()
        .map(|(field, max)| (field.to_string(), json!("é".repeat(*max))))
        .collect();
    for tool in TOOLS {
        ops.ok(tool, arguments(tool, Value::Object(at_the_caps.clone()))).await;
    }
    let rows = ops.ok("svc_ops_list_blueprints", json!({})).await;
    assert_eq!(ids(&rows).len(), 2, "each cap itself is accepted");
    assert_eq!(rows["blueprints"][0]["description"], json!("é".repeat(4_000)));
}

async fn the_listing_is_paged_with_a_cursor(app: TestApp) {
    let ops = Client::of(&app);
    let mut all = Vec::new();
    for i in 0..23 {
        let field = if i % 2 == 0 { "title" } else { "name" };
        all.push(register(&ops, contract(field), json!({})).await);
    }
    let broken = ops
        .ok(
            "svc_ops_register_blueprint",
            json!({ "contract": contract("title"), "componentCode": "this is not TSX" }),
        )
        .await["blueprintId"]
        .as_str()
        .unwrap()
        .to_owned();
    all.push(broken.clone());

    let first = ops.ok("svc_ops_list_blueprints", json!({})).await;
    assert_eq!(ids(&first), all[..20], "20 a page by default, oldest first");
    let row = &first["blueprints"][0];
    assert!(
        row["contract"]["propsSpec"].is_object(),
        "a row still shows its contract: {row}"
    );
    assert_eq!(row["mountable"], true, "{row}");
    assert!(first["nextCursor"].is_string(), "{first}");
    let rest = ops
        .ok("svc_ops_list_blueprints", json!({ "cursor": first["nextCursor"] }))
        .await;
    assert_eq!(ids(&rest), all[20..]);
    assert!(rest.get("nextCursor").is_none(), "the last page says so: {rest}");
    assert_eq!(rest["blueprints"][3]["mountable"], false, "{rest}");

    let by_five = pages(&ops, json!({ "limit": 5 })).await;
    assert_eq!(by_five.iter().map(Vec::len).collect::<Vec<_>>(), [5, 5, 5, 5, 4]);
    assert_eq!(by_five.concat(), all, "each row once, none skipped");

    // Filters hold on every page; a page is full of matching rows.
    let hash = first["blueprints"][0]["contractHash"].clone();
    let titled: Vec<String> = all.iter().step_by(2).cloned().chain([broken]).collect();
    let filtered = pages(&ops, json!({ "contractHash": hash, "limit": 4 })).await;
    assert_eq!(filtered.iter().map(Vec::len).collect::<Vec<_>>(), [4, 4, 4, 1]);
    assert_eq!(filtered.concat(), titled);

    for limit in [json!(0), json!(101), json!("ten")] {
        ops.invalid("svc_ops_list_blueprints", json!({ "limit": limit }), "limit")
            .await;
    }
    ops.ok("svc_ops_list_blueprints", json!({ "limit": 100 })).await;
    for cursor in ["nope", "MjAyNi0wMS0wMVQwMDowMDowMFo"] {
        ops.invalid("svc_ops_list_blueprints", json!({ "cursor": cursor }), "cursor")
            .await;
    }
}

async fn a_row_stored_over_the_caps_still_lists_and_searches_as_an_excerpt(mut app: TestApp) {
    let ops = Client::of(&app);
    let id = register(
        &ops,
        contract("title"),
        json!({ "context": "approve the supplier invoices waiting in the queue", "persona": "clerk" }),
    )
    .await;
    // Written before the caps existed: far over each of them.
    let description = format!(
        "approve the supplier invoices waiting in the queue {}",
        "d".repeat(20_000)
    );
    let persona = "p".repeat(5_000);
    let aesthetic = "a".repeat(5_000);
    let (db, backend) = database(&app).await;
    let sql = match backend {
        DbBackend::Postgres => {
            "UPDATE blueprints SET description = $1, persona = $2, aesthetic = $3 WHERE blueprint_id = $4"
        }
        _ => "UPDATE blueprints SET description = ?, persona = ?, aesthetic = ? WHERE blueprint_id = ?",
    };
    db.execute_raw(Statement::from_sql_and_values(
        backend,
        sql,
        [
            description.clone().into(),
            persona.clone().into(),
            aesthetic.clone().into(),
            id.clone().into(),
        ],
    ))
    .await
    .expect("an old oversized row");
    let _ = db.close().await;

    // The index is rebuilt from the database, as after an upgrade.
    app.restart(|_| {}).await;
    assert_eq!(
        readiness_within(&app.client, &app.base, std::time::Duration::from_secs(30)).await,
        200
    );
    let ops = Client::of(&app);
    let listed = ops.ok("svc_ops_list_blueprints", json!({})).await;
    let row = &listed["blueprints"][0];
    assert_eq!(row["blueprintId"], json!(id));
    assert_eq!(row["description"], json!(description), "a stored row reads back whole");
    assert_eq!(row["persona"], json!(persona));
    assert_eq!(row["aesthetic"], json!(aesthetic));
    ops.ok(
        "svc_ops_update_blueprint",
        json!({ "blueprintId": id, "variance": { "density": "compact" } }),
    )
    .await;
    // A filter is capped like a stored persona (200 characters): the old one is still matched
    // by meaning by its first 200.
    let at_the_cap: String = persona.chars().take(200).collect();
    let filtered = ops
        .ok("svc_ops_list_blueprints", json!({ "persona": at_the_cap }))
        .await;
    assert_eq!(
        ids(&filtered),
        std::slice::from_ref(&id),
        "its persona still matches a filter at the cap"
    );

    let found = app
        .tool_ok(
            "svc_search_blueprints",
            json!({ "query": "approve the supplier invoices waiting in the queue" }),
        )
        .await;
    let hit = found["results"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["id"] == json!(id))
        .unwrap_or_else(|| panic!("the old row is still found: {found}"));
    let shown = hit["description"].as_str().unwrap();
    assert_eq!(
        shown,
        format!(
            "{}…",
            description.chars().take(INDEXED_DESCRIPTION_CHARS).collect::<String>()
        ),
        "a search row shows the excerpt the index keeps"
    );
}

async fn an_app_at_its_cap_takes_no_more_operator_blueprints(app: TestApp) {
    let ops = Client::of(&app);
    let original = register(&ops, contract("title"), json!({})).await;
    // Copies (with the original's vector, so no server embeds them) fill the app to its cap.
    let (db, _) = database(&app).await;
    let columns = "app_id, intent, contract_hash, variant_key, contract, variance, source, code, code_hash, \
                   generator, model, created_at, name, description, category, fixture_props, embedding, \
                   embedding_model, featured, persona, aesthetic, is_operator_default, source_kind, updated_at";
    let copies = format!(
        "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < {}) \
         INSERT INTO blueprints (blueprint_id, {columns}) \
         SELECT blueprint_id || '-' || i, {columns} FROM blueprints, n WHERE blueprint_id = '{original}'",
        APP_BLUEPRINTS_MAX - 1
    );
    db.execute_unprepared(&copies).await.expect("fill the app");
    let _ = db.close().await;

    let error = ops
        .refused(
            "svc_ops_register_blueprint",
            arguments("svc_ops_register_blueprint", json!({})),
            "blueprint_limit_reached",
        )
        .await;
    assert!(
        error["message"].as_str().unwrap().contains("10000"),
        "the message names the cap: {error}"
    );
    ops.refused(
        "svc_ops_generate_blueprint",
        arguments("svc_ops_generate_blueprint", json!({})),
        "blueprint_limit_reached",
    )
    .await;
    // An agent's render is not refused: its generation is paid for and queued.
    let rendered = app
        .render(
            "a card the operator cap leaves alone",
            contract("name"),
            json!({ "name": "n" }),
        )
        .await;
    assert_eq!(rendered["outcome"], "rendered", "{rendered}");

    ops.ok("svc_ops_delete_blueprint", json!({ "blueprintId": original }))
        .await;
    ops.ok(
        "svc_ops_delete_blueprint",
        json!({ "blueprintId": format!("{original}-1") }),
    )
    .await;
    register(&ops, contract("title"), json!({})).await;
    let page = ops.ok("svc_ops_list_blueprints", json!({})).await;
    assert_eq!(ids(&page).len(), 20, "a page of a full app is still 20 rows");
}
