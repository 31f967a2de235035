//! `GET /search`: each filter, their composition, and what a caller without a credential sees.

use crate::registry_support;

use registry_support::*;

use reqwest::StatusCode;
use serde_json::{Value, json};

crate::on_every_registry_backend!(search_filters_and_compose);

async fn search_filters_and_compose(registry: Registry) {
    let acme = registry.mint("acme", false);
    let globex = registry.mint("globex", false);
    let (acme_key, globex_key) = (Author::new(1), Author::new(2));
    registry.register_key(&acme, &acme_key).await;
    registry.register_key(&globex, &globex_key).await;
    let publish = |token: String, body: Value| {
        let registry = &registry;
        async move {
            let (status, answer) = registry.post("/publish", Some(&token), &body).await;
            assert_eq!(status, StatusCode::CREATED, "{answer}");
        }
    };
    let chart = gadget_manifest("@acme", "chart", "1.0.0", &acme_key, GADGET_JS);
    publish(acme.clone(), signed_publish(&chart, GADGET_JS, &acme_key)).await;
    let chart2 = gadget_manifest("@acme", "chart", "1.1.0", &acme_key, GADGET_JS);
    publish(acme.clone(), signed_publish(&chart2, GADGET_JS, &acme_key)).await;
    let board = blueprint_manifest("@acme", "board", "1.0.0", &acme_key, BLUEPRINT_TSX);
    publish(acme.clone(), signed_publish(&board, BLUEPRINT_TSX, &acme_key)).await;
    publish(globex.clone(), sigstore_publish("@globex", "dates", "2.0.0", GADGET_JS)).await;

    let names = |body: &Value| -> Vec<String> {
        body["results"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| {
                format!(
                    "{}/{}@{}",
                    r["scope"].as_str().unwrap(),
                    r["name"].as_str().unwrap(),
                    r["latestVersion"].as_str().unwrap()
                )
            })
            .collect()
    };
    let rows: [(&str, &[&str]); 9] = [
        ("", &["@acme/board@1.0.0", "@acme/chart@1.1.0", "@globex/dates@2.0.0"]),
        ("?kind=blueprint", &["@acme/board@1.0.0"]),
        ("?kind=gadget", &["@acme/chart@1.1.0", "@globex/dates@2.0.0"]),
        ("?hook=useSparkline", &["@acme/chart@1.1.0", "@globex/dates@2.0.0"]),
        ("?tag=chart", &["@acme/chart@1.1.0"]),
        ("?author=globex", &["@globex/dates@2.0.0"]),
        ("?q=BOARD", &["@acme/board@1.0.0"]),
        ("?kind=gadget&author=acme&tag=svg", &["@acme/chart@1.1.0"]),
        ("?kind=blueprint&hook=useSparkline", &[]),
    ];
    for (query, expected) in rows {
        let (status, body) = registry.get(&format!("/search{query}"), Some(&acme)).await;
        assert_eq!(status, StatusCode::OK, "{query}");
        assert_eq!(names(&body), expected, "{query}");
    }
    let (_, body) = registry.get("/search?author=acme", Some(&acme)).await;
    let chart = &body["results"][1];
    assert_eq!(
        (&chart["kind"], &chart["author"], &chart["description"], &chart["tags"]),
        (
            &json!("gadget"),
            &json!("acme"),
            &json!("Sparkline and bar charts"),
            &json!(["chart", "svg"])
        )
    );
    // Without a credential only public artifacts are listed.
    let (status, body) = registry.get("/search", None).await;
    assert_eq!(
        (status, names(&body)),
        (StatusCode::OK, vec!["@globex/dates@2.0.0".to_owned()])
    );
    let (status, body) = registry.get("/search?kind=widget", None).await;
    assert_eq!(
        (status, body["error"].as_str()),
        (StatusCode::BAD_REQUEST, Some("invalid_request"))
    );
    // Public reads need no credential.
    let (status, detail) = registry.get("/pkg/@globex/dates/2.0.0", None).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    assert_eq!(detail["signature"]["algorithm"], "sigstore");
    assert!(detail["signature"]["sigstoreBundle"].is_object());

    // A private version above a public one: a caller without a credential is answered the
    // highest version it may read, a publisher the highest of all.
    let dates3 = gadget_manifest("@globex", "dates", "3.0.0-beta.1", &globex_key, GADGET_JS);
    publish(globex.clone(), signed_publish(&dates3, GADGET_JS, &globex_key)).await;
    let (_, body) = registry.get("/search?author=globex", None).await;
    assert_eq!(names(&body), ["@globex/dates@2.0.0"]);
    let (_, body) = registry.get("/search?author=globex", Some(&acme)).await;
    assert_eq!(names(&body), ["@globex/dates@3.0.0-beta.1"]);
}
