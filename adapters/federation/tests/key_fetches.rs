//! How the key cache fetches an issuer's documents, against a loopback HTTP server: a burst of
//! concurrent misses is one fetch, and a body of no declared length stops at the size bound.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use svc_federation::{JwksCache, KeyFetchSettings};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const JWKS: &str = r#"{"keys":[{"kty":"OKP","crv":"Ed25519","kid":"k1","alg":"EdDSA","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#;

/// What the loopback server answers every request with.
#[derive(Clone, Copy)]
enum Serve {
    /// The key set above, after a pause (so concurrent requests overlap).
    SlowKeySet,
    /// A discovery document for the server itself, then the key set at `/jwks`, each slowly.
    SlowDiscovery,
    /// A chunked body that never ends.
    Endless,
    /// HTTP 503, after a pause (an issuer that is down).
    SlowFailure,
}

struct Loopback {
    base: String,
    /// Requests per path, in the order of the paths asked.
    requests: Arc<std::sync::Mutex<Vec<String>>>,
    served: Arc<AtomicUsize>,
}

impl Loopback {
    async fn start(serve: Serve) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let base = format!("http://{}", listener.local_addr().unwrap());
        let requests = Arc::new(std::sync::Mutex::new(Vec::new()));
        let served = Arc::new(AtomicUsize::new(0));
        let (issuer, seen, count) = (base.clone(), requests.clone(), served.clone());
        tokio::spawn(async move {
            while let Ok((stream, _)) = listener.accept().await {
                let (issuer, seen, count) = (issuer.clone(), seen.clone(), count.clone());
                tokio::spawn(async move { answer(stream, serve, &issuer, &seen, &count).await });
            }
        });
        Self { base, requests, served }
    }

    fn requests_for(&self, path: &str) -> usize {
        self.requests.lock().unwrap().iter().filter(|p| *p == path).count()
    }
}

async fn answer(
    mut stream: TcpStream,
    serve: Serve,
    issuer: &str,
    seen: &std::sync::Mutex<Vec<String>>,
    served: &AtomicUsize,
) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        if stream.read(&mut byte).await.unwrap_or(0) == 0 {
            return;
        }
        head.push(byte[0]);
    }
    let head = String::from_utf8_lossy(&head);
    let path = head.split_whitespace().nth(1).unwrap_or("").to_owned();
    seen.lock().unwrap().push(path.clone());
    served.fetch_add(1, Ordering::SeqCst);
    let body = match (serve, path.as_str()) {
        (Serve::Endless, _) => {
            let _ = stream
                .write_all(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ntransfer-encoding: chunked\r\n\r\n")
                .await;
            let chunk = format!("{:x}\r\n{}\r\n", 16 * 1024, " ".repeat(16 * 1024));
            while stream.write_all(chunk.as_bytes()).await.is_ok() {}
            return;
        }
        (Serve::SlowFailure, _) => {
            tokio::time::sleep(Duration::from_millis(300)).await;
            let _ = stream
                .write_all(b"HTTP/1.1 503 Service Unavailable\r\ncontent-length: 0\r\nconnection: close\r\n\r\n")
                .await;
            return;
        }
        (Serve::SlowDiscovery, "/.well-known/openid-configuration") => {
            format!(r#"{{"issuer":"{issuer}","jwks_uri":"{issuer}/jwks"}}"#)
        }
        _ => JWKS.to_owned(),
    };
    tokio::time::sleep(Duration::from_millis(300)).await;
    let response = format!(
        "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
        body.len()
    );
    let _ = stream.write_all(response.as_bytes()).await;
}

fn cache(refresh_floor: Duration) -> Arc<JwksCache> {
    Arc::new(JwksCache::new(KeyFetchSettings {
        ttl: Duration::from_secs(3600),
        refresh_floor,
        timeout: Duration::from_secs(3),
    }))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_first_requests_discover_and_fetch_the_keys_once() {
    let issuer = Loopback::start(Serve::SlowDiscovery).await;
    let keys = cache(Duration::from_secs(30));
    let asks = (0..10).map(|_| {
        let (keys, issuer) = (keys.clone(), issuer.base.clone());
        tokio::spawn(async move {
            let url = keys.jwks_url(&issuer, None).await?;
            keys.keys(&url, Some("k1")).await
        })
    });
    for asked in futures_util::future::join_all(asks).await {
        let set = asked.unwrap().expect("the key set");
        assert!(set.find("k1").is_some());
    }
    assert_eq!(issuer.requests_for("/.well-known/openid-configuration"), 1);
    assert_eq!(issuer.requests_for("/jwks"), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_burst_of_unknown_kids_refetches_once_even_with_no_floor() {
    let issuer = Loopback::start(Serve::SlowKeySet).await;
    let url = format!("{}/jwks", issuer.base);
    let keys = cache(Duration::ZERO);
    keys.keys(&url, Some("k1")).await.expect("the first fetch");
    let asks = (0..10).map(|n| {
        let (keys, url) = (keys.clone(), url.clone());
        tokio::spawn(async move { keys.keys(&url, Some(&format!("made-up-{n}"))).await })
    });
    for asked in futures_util::future::join_all(asks).await {
        // The set comes back (without the kid): the verifier refuses the token, not the fetch.
        assert!(asked.unwrap().expect("the key set").find("k1").is_some());
    }
    // Those who waited for the refetch read it; the ones that came after it fetch again, so a
    // burst of ten asks at once costs far fewer than ten fetches.
    let refetches = issuer.served.load(Ordering::SeqCst) - 1;
    assert!((1..=2).contains(&refetches), "refetches: {refetches}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_key_set_of_no_declared_length_stops_at_the_bound() {
    let issuer = Loopback::start(Serve::Endless).await;
    let keys = cache(Duration::from_secs(30));
    let error = keys
        .keys(&format!("{}/jwks", issuer.base), None)
        .await
        .expect_err("an endless body is refused");
    assert!(error.ends_with("document too large"), "{error}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn requests_that_waited_for_a_failed_fetch_share_its_failure() {
    let issuer = Loopback::start(Serve::SlowFailure).await;
    let keys = cache(Duration::from_secs(30));
    let url = format!("{}/jwks", issuer.base);
    let asks = (0..10).map(|_| {
        let (keys, url) = (keys.clone(), url.clone());
        tokio::spawn(async move { keys.keys(&url, Some("k1")).await })
    });
    for asked in futures_util::future::join_all(asks).await {
        let error = asked.unwrap().expect_err("the issuer is down");
        assert!(error.contains("503"), "{error}");
    }
    assert_eq!(issuer.served.load(Ordering::SeqCst), 1, "one fetch answered all ten");
    // A request after the failure tries again.
    keys.keys(&url, Some("k1")).await.expect_err("still down");
    assert_eq!(issuer.served.load(Ordering::SeqCst), 2);
}
