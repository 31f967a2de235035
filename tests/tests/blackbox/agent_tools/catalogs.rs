//! The catalogs an agent reads before it drafts: `svc_list_gadgets` and `svc_list_themes`.

use serde_json::json;
use svc_tests::{Auth, TestApp, on_every_backend};

on_every_backend!(Auth::DevAllowAll => catalogs_list_gadgets_and_themes);

async fn catalogs_list_gadgets_and_themes(app: TestApp) {
    let gadgets = app.tool_ok("svc_list_gadgets", json!({})).await;
    let standard = &gadgets["gadgets"][0];
    assert_eq!(standard["package"], "@svc/gadgets");
    let exports = standard["exports"].as_array().unwrap();
    let hooks: Vec<&str> = exports.iter().filter_map(|e| e["hook"].as_str()).collect();
    assert_eq!(hooks.len(), 7);
    let components: Vec<&str> = exports.iter().filter_map(|e| e["component"].as_str()).collect();
    assert_eq!(
        components,
        ["ActionButton", "Chart", "DataTable", "StatusBadge"],
        "the kit"
    );
    for e in standard["exports"].as_array().unwrap() {
        for field in ["description", "usage", "example"] {
            assert!(e[field].is_string(), "{field} on {e}");
        }
    }
    let themes = app.tool_ok("svc_list_themes", json!({})).await;
    let ids: Vec<&str> = themes["themes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["id"].as_str().unwrap())
        .collect();
    assert!(ids.contains(&"default") && ids.contains(&"high-contrast"), "{ids:?}");
    for tool in ["svc_list_gadgets", "svc_list_themes"] {
        let denied = app.tool_error_result(tool, json!({ "appId": "someone-else" })).await;
        assert_eq!(denied["error"]["code"], "app_access_denied");
    }
}
