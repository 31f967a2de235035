//! The conformance gate (`POST /conformance/check`, and publish behind it): each rule with its
//! path, and a bundle nested past any parse stack.

use crate::registry_support;

use base64::Engine;
use base64::engine::general_purpose::STANDARD;
use registry_support::*;

use reqwest::StatusCode;
use serde_json::{Value, json};

crate::on_every_registry_backend!(
    the_conformance_gate_names_rule_and_path,
    a_bundle_nested_past_any_stack_is_refused_and_the_registry_lives_on,
    an_oversized_blueprint_contract_or_fixture_is_refused_by_its_path,
    nested_raw_value_markers_in_a_manifest_are_refused_before_it_is_parsed,
);

/// serde_json's raw-value marker nested in its own strings (each text 120 deep): a manifest is
/// parsed into a `Value`, where each marker's string is parsed again with a recursion limit of
/// its own, past any stack. Refused as a body that does not parse; the registry lives on.
async fn nested_raw_value_markers_in_a_manifest_are_refused_before_it_is_parsed(registry: Registry) {
    let token = registry.mint("acme", false);
    let text = svc_tests::nested_raw_value_markers(10);
    let body = format!(r#"{{"manifest":{{"kind":"gadget","fixtureProps":{text}}},"bundle":""}}"#);
    let answer = registry
        .client
        .post(format!("{}/conformance/check", registry.base))
        .bearer_auth(&token)
        .header("content-type", "application/json")
        .body(body)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), StatusCode::BAD_REQUEST);
    let answer: Value = answer.json().await.unwrap();
    assert!(
        answer["message"]
            .as_str()
            .is_some_and(|m| m.contains("the member name `$serde_json::private::RawValue` is reserved")),
        "{answer}"
    );
    let (status, _) = registry.get("/health", None).await;
    assert_eq!(status, StatusCode::OK, "the registry lives on");
}

/// docs/registry.md, "The manifest": a blueprint's `contract` and `fixtureProps` are each at most
/// 262144 bytes of JSON; one over is `invalid_manifest` at its path on publish, listed by the check.
async fn an_oversized_blueprint_contract_or_fixture_is_refused_by_its_path(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    for part in ["contract", "fixtureProps"] {
        let mut manifest = blueprint_manifest("@acme", "board", "1.0.0", &author, BLUEPRINT_TSX);
        // `{"x":"…"}`: 8 bytes beside the text, one byte over the limit.
        manifest["blueprint"][part] = json!({ "x": "a".repeat(262_144 + 1 - 8) });
        let path = format!("/manifest/blueprint/{part}");
        let message = format!("`blueprint.{part}` is more than 262144 bytes of JSON");
        let (status, refused) = registry
            .post(
                "/publish",
                Some(&token),
                &signed_publish(&manifest, BLUEPRINT_TSX, &author),
            )
            .await;
        assert_eq!(status, StatusCode::BAD_REQUEST, "{part}");
        assert_eq!(
            (&refused["error"], &refused["path"], &refused["rule"]),
            (&json!("invalid_manifest"), &json!(path), &json!("manifest_schema")),
            "{part}"
        );
        assert!(refused["message"].as_str().unwrap().contains(&message), "{refused}");
        let body = json!({ "manifest": manifest, "bundle": STANDARD.encode(BLUEPRINT_TSX) });
        let (status, checked) = registry.post("/conformance/check", Some(&token), &body).await;
        assert_eq!(status, StatusCode::OK);
        assert_eq!(
            checked,
            json!({ "ok": false, "failures": [{ "rule": "manifest_schema", "path": path, "message": message }] })
        );
    }
    let (status, _) = registry.get("/pkg/@acme/board", Some(&token)).await;
    assert_eq!(status, StatusCode::NOT_FOUND, "nothing was stored");
}

async fn the_conformance_gate_names_rule_and_path(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let check = |manifest: Value, bundle: &str| {
        let (registry, token) = (&registry, token.clone());
        let body = json!({ "manifest": manifest, "bundle": STANDARD.encode(bundle) });
        async move {
            let (status, answer) = registry.post("/conformance/check", Some(&token), &body).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            answer
        }
    };
    let gadget = |bundle: &str| gadget_manifest("@acme", "chart", "1.0.0", &author, bundle);
    let blueprint = |source: &str| blueprint_manifest("@acme", "board", "1.0.0", &author, source);
    assert_eq!(check(gadget(GADGET_JS), GADGET_JS).await, json!({ "ok": true }));
    assert_eq!(
        check(blueprint(BLUEPRINT_TSX), BLUEPRINT_TSX).await,
        json!({ "ok": true })
    );

    let missing_hook = "export function useSparkline(v) { return v; }\n";
    let extra_export = format!("{GADGET_JS}export const useExtra = 1;\n");
    let not_a_module = "export function useSparkline( {";
    let relative = format!("import x from './x.js';\n{GADGET_JS}");
    let no_compile = "export default function Board() { return <div>; }\n";
    let throws = "export default function Board() { throw new Error(\"boom at render\"); }\n";
    let mut bad_tag = gadget(GADGET_JS);
    bad_tag["tags"] = json!(["Not A Tag"]);
    let mut bad_version = gadget(GADGET_JS);
    bad_version["version"] = json!("latest");
    let rows = [
        (
            check(gadget(missing_hook), missing_hook).await,
            "gadget_exports",
            "/manifest/gadget/exports/1/hook",
            "useBars",
        ),
        (
            check(gadget(&extra_export), &extra_export).await,
            "gadget_exports",
            "/bundle",
            "useExtra",
        ),
        (
            check(gadget(not_a_module), not_a_module).await,
            "gadget_module",
            "/bundle",
            "",
        ),
        (
            check(gadget(&relative), &relative).await,
            "gadget_module",
            "/bundle",
            "./x.js",
        ),
        (
            check(blueprint(no_compile), no_compile).await,
            "blueprint_compiles",
            "/bundle",
            "line 1",
        ),
        (
            check(blueprint(throws), throws).await,
            "blueprint_renders",
            "/manifest/blueprint/fixtureProps",
            "boom at render",
        ),
        (
            check(bad_tag, GADGET_JS).await,
            "manifest_schema",
            "/manifest/tags/0",
            "",
        ),
        (
            check(bad_version, GADGET_JS).await,
            "version_format",
            "/manifest/version",
            "latest",
        ),
    ];
    for (answer, rule, path, mentions) in rows {
        assert_eq!(answer["ok"], false, "{answer}");
        let failure = &answer["failures"][0];
        assert_eq!(
            (failure["rule"].as_str(), failure["path"].as_str()),
            (Some(rule), Some(path)),
            "{answer}"
        );
        assert!(failure["message"].as_str().unwrap().contains(mentions), "{answer}");
    }
    let body = json!({ "manifest": gadget(GADGET_JS) });
    let (_, answer) = registry.post("/conformance/check", Some(&token), &body).await;
    assert_eq!((answer["failures"][0]["rule"].as_str()), Some("bundle_required"));

    // Publishing runs the same gate: 400 conformance_failed naming the rule and the path.
    let manifest = gadget(missing_hook);
    let (status, refused) = registry
        .post(
            "/publish",
            Some(&token),
            &signed_publish(&manifest, missing_hook, &author),
        )
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        (
            refused["error"].as_str(),
            refused["rule"].as_str(),
            refused["path"].as_str()
        ),
        (
            Some("conformance_failed"),
            Some("gadget_exports"),
            Some("/manifest/gadget/exports/1/hook")
        )
    );
    let manifest = blueprint(throws);
    let (status, refused) = registry
        .post("/publish", Some(&token), &signed_publish(&manifest, throws, &author))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        (refused["rule"].as_str(), refused["path"].as_str()),
        (Some("blueprint_renders"), Some("/manifest/blueprint/fixtureProps"))
    );
    // A blueprint may import a gadget its contract lists, once that version is published here.
    let uses_chart = "import { useProps } from \"@svc/gadgets\";\n\
                      import { useSparkline } from \"@acme/chart\";\n\
                      export default function Board() {\n\
                        const props = useProps<{ title: string }>();\n\
                        return <h1>{props.title} {useSparkline([1])}</h1>;\n\
                      }\n";
    let mut with_chart = blueprint(uses_chart);
    with_chart["blueprint"]["contract"]["clientCapabilities"] = json!({ "gadgets": { "@acme/chart": "1.0.0" } });
    let answer = check(with_chart.clone(), uses_chart).await;
    assert_eq!(
        (
            answer["failures"][0]["rule"].as_str(),
            answer["failures"][0]["path"].as_str()
        ),
        (
            Some("blueprint_gadgets"),
            Some("/manifest/blueprint/contract/clientCapabilities/gadgets/@acme~1chart")
        ),
        "{answer}"
    );
    assert!(
        answer["failures"][0]["message"]
            .as_str()
            .unwrap()
            .contains("@acme/chart 1.0.0: this registry holds no such gadget version"),
        "{answer}"
    );
    let chart = gadget(GADGET_JS);
    let (status, _) = registry
        .post("/publish", Some(&token), &signed_publish(&chart, GADGET_JS, &author))
        .await;
    assert_eq!(status, StatusCode::CREATED);
    assert_eq!(check(with_chart.clone(), uses_chart).await, json!({ "ok": true }));
    // Without the contract listing it, the same import does not compile.
    let answer = check(blueprint(uses_chart), uses_chart).await;
    assert_eq!(answer["failures"][0]["rule"], "blueprint_compiles", "{answer}");
    // A yanked gadget version is no longer importable.
    let (ok, _, stderr) = registry.cli(&["yank", "@acme/chart@1.0.0", "--reason", "broken"]);
    assert!(ok, "{stderr}");
    let answer = check(with_chart, uses_chart).await;
    assert!(
        answer["failures"][0]["message"]
            .as_str()
            .unwrap()
            .contains("this version was yanked"),
        "{answer}"
    );

    // A schema failure at publish is invalid_manifest, with its path.
    let mut extra = gadget(GADGET_JS);
    extra["unexpected"] = json!(true);
    let (status, refused) = registry
        .post("/publish", Some(&token), &signed_publish(&extra, GADGET_JS, &author))
        .await;
    assert_eq!(status, StatusCode::BAD_REQUEST);
    assert_eq!(
        (refused["error"].as_str(), refused["path"].as_str()),
        (Some("invalid_manifest"), Some("/manifest"))
    );
}

/// A gadget bundle past 64 KiB is parsed by a process of its own: one nested deeper than any
/// parse stack (a megabyte of `(`, which overflowed the registry's own and aborted it) is
/// refused by the gate, and a long bundle of ordinary nesting passes.
async fn a_bundle_nested_past_any_stack_is_refused_and_the_registry_lives_on(registry: Registry) {
    let token = registry.mint("acme", false);
    let author = Author::new(1);
    registry.register_key(&token, &author).await;
    let check = |bundle: String| {
        let (registry, token) = (&registry, token.clone());
        let manifest = gadget_manifest("@acme", "chart", "1.0.0", &author, &bundle);
        let body = json!({ "manifest": manifest, "bundle": STANDARD.encode(&bundle) });
        async move {
            let (status, answer) = registry.post("/conformance/check", Some(&token), &body).await;
            assert_eq!(status, StatusCode::OK, "{answer}");
            answer
        }
    };
    let deep = format!("{GADGET_JS}export const useDeep = {}1", "(".repeat(1 << 20));
    let answer = check(deep).await;
    let failure = &answer["failures"][0];
    assert_eq!(
        (
            answer["ok"].as_bool(),
            failure["rule"].as_str(),
            failure["path"].as_str()
        ),
        (Some(false), Some("gadget_module"), Some("/bundle")),
        "{answer}"
    );
    assert!(
        failure["message"].as_str().unwrap().contains("nests deeper"),
        "{answer}"
    );
    let long = format!("{GADGET_JS}export const notes = \"{}\";\n", "n".repeat(200 * 1024));
    let answer = check(long).await;
    let failure = &answer["failures"][0];
    assert_eq!(failure["rule"], "gadget_exports", "read in the child: {answer}");
    assert!(failure["message"].as_str().unwrap().contains("notes"), "{answer}");
}
