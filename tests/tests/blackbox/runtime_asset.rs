//! `GET /_svc/iframe-runtime.js`, the mount runtime a card loads by URL (`runtimeUrl`): gzipped
//! for a client that accepts it (decoded here by Debian's `gzip`), each coding with its own ETag
//! that answers 304, and immutable only at the URL carrying its content hash.

use reqwest::StatusCode;
use svc_tests::external::gunzip;
use svc_tests::{Auth, Backend, TestApp};

async fn app() -> TestApp {
    TestApp::spawn("runtime_asset", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .expect("SQLite needs nothing")
}

async fn get(app: &TestApp, path: &str, headers: &[(&str, &str)]) -> reqwest::Response {
    let mut request = app.client.get(format!("{}{path}", app.base));
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request.send().await.unwrap()
}

fn header(response: &reqwest::Response, name: &str) -> Option<String> {
    response.headers().get(name).map(|v| v.to_str().unwrap().to_owned())
}

#[tokio::test]
async fn a_client_that_accepts_gzip_gets_the_same_runtime_in_a_third_of_the_bytes() {
    let app = app().await;
    let plain = get(&app, "/_svc/iframe-runtime.js", &[("accept-encoding", "identity")]).await;
    assert_eq!(plain.status(), StatusCode::OK);
    assert_eq!(header(&plain, "content-encoding"), None);
    assert_eq!(header(&plain, "vary").as_deref(), Some("accept-encoding"));
    assert_eq!(
        header(&plain, "content-type").as_deref(),
        Some("text/javascript; charset=utf-8")
    );
    let plain_etag = header(&plain, "etag").expect("an ETag");
    let plain = plain.bytes().await.unwrap();
    assert!(plain.len() > 10_000, "the bundle: {} bytes", plain.len());
    // A shell that loads this URL may hand the runtime a component without links: the module
    // lexer comes with it.
    let lexer = include_str!("../../../adapters/mount/dist/module-lexer.js");
    assert!(plain.starts_with(lexer.as_bytes()), "the lexer first");

    // Twice: the member made for the first gzipped answer serves the next one alike.
    for _ in 0..2 {
        let packed = get(
            &app,
            "/_svc/iframe-runtime.js",
            &[("accept-encoding", "gzip, deflate, br")],
        )
        .await;
        assert_eq!(packed.status(), StatusCode::OK);
        assert_eq!(header(&packed, "content-encoding").as_deref(), Some("gzip"));
        assert_eq!(header(&packed, "vary").as_deref(), Some("accept-encoding"));
        let etag = header(&packed, "etag").expect("an ETag");
        assert_ne!(etag, plain_etag, "each coding has its own strong validator");
        let packed = packed.bytes().await.unwrap();
        assert!(
            packed.len() * 5 < plain.len() * 2,
            "gzipped {} of {} bytes",
            packed.len(),
            plain.len()
        );
        assert_eq!(gunzip(&packed), plain, "the same bundle");
    }

    // Refusing gzip is honoured.
    let refused = get(
        &app,
        "/_svc/iframe-runtime.js",
        &[("accept-encoding", "gzip;q=0, identity")],
    )
    .await;
    assert_eq!(header(&refused, "content-encoding"), None);
    assert_eq!(refused.bytes().await.unwrap(), plain);
}

#[tokio::test]
async fn each_codings_etag_answers_304_and_only_for_its_coding() {
    let app = app().await;
    let path = "/_svc/iframe-runtime.js";
    let plain_etag = header(&get(&app, path, &[("accept-encoding", "identity")]).await, "etag").unwrap();
    let gzip_etag = header(&get(&app, path, &[("accept-encoding", "gzip")]).await, "etag").unwrap();

    for (encoding, etag) in [("identity", &plain_etag), ("gzip", &gzip_etag)] {
        let listed = format!("\"other\", W/{etag}");
        for tags in [etag.as_str(), listed.as_str(), "*"] {
            let revalidated = get(&app, path, &[("accept-encoding", encoding), ("if-none-match", tags)]).await;
            assert_eq!(revalidated.status(), StatusCode::NOT_MODIFIED, "{encoding} {tags}");
            // What the 200 would have said of caching, so a cache keeps what it stored.
            assert_eq!(header(&revalidated, "etag").as_ref(), Some(etag));
            assert_eq!(header(&revalidated, "vary").as_deref(), Some("accept-encoding"));
            assert_eq!(header(&revalidated, "cache-control").as_deref(), Some("no-cache"));
            assert!(revalidated.bytes().await.unwrap().is_empty());
        }
    }
    // A validator of the other coding is not this representation's: the body is sent.
    let crossed = get(
        &app,
        path,
        &[("accept-encoding", "gzip"), ("if-none-match", &plain_etag)],
    )
    .await;
    assert_eq!(crossed.status(), StatusCode::OK);
    assert_eq!(header(&crossed, "content-encoding").as_deref(), Some("gzip"));
}

#[tokio::test]
async fn only_the_url_with_the_content_hash_is_immutable() {
    let app = app().await;
    let bare = get(&app, "/_svc/iframe-runtime.js", &[]).await;
    assert_eq!(header(&bare, "cache-control").as_deref(), Some("no-cache"));
    let etag = header(&bare, "etag").unwrap();
    // The unencoded body's ETag carries the hash the immutable URL names.
    let hash = etag.trim_matches('"');
    for query in [format!("v={hash}"), format!("a=1&v={hash}")] {
        let pinned = get(&app, &format!("/_svc/iframe-runtime.js?{query}"), &[]).await;
        assert_eq!(
            header(&pinned, "cache-control").as_deref(),
            Some("public, max-age=31536000, immutable"),
            "{query}"
        );
    }
    for query in [
        "v=0000000000000000".to_owned(),
        format!("xv={hash}"),
        format!("v={hash}0"),
    ] {
        let other = get(&app, &format!("/_svc/iframe-runtime.js?{query}"), &[]).await;
        assert_eq!(header(&other, "cache-control").as_deref(), Some("no-cache"), "{query}");
    }
}
