//! An OpenAI-compatible embeddings client: `POST {base_url}/embeddings` with
//! `{ model, input: [..] }`, answering `{ data: [{ index, embedding }] }`. Works with OpenAI and
//! the many servers that copy its API (Ollama, vLLM, LiteLLM, llama.cpp's server, ...).

use std::time::Duration;

use serde::Deserialize;
use serde_json::json;
use svc_application::ports::blueprints::{EmbedError, Embedder};

/// Inputs sent in one request; longer batches are split.
const BATCH: usize = 256;
/// The widest vectors expected (OpenAI's largest model has 3072 dimensions; 4096-wide open
/// models exist): twice that, so no real model comes near the bound.
const MAX_DIMENSIONS: usize = 8192;
/// One number of a vector in JSON at its longest (`-1.2345678901234567e-10,`).
const BYTES_PER_NUMBER: usize = 25;
/// A row's envelope (`{"object":"embedding","index":255,"embedding":[...]}`) and the answer's
/// own (`model`, `usage`), generously.
const BYTES_PER_ROW: usize = 256;
const ENVELOPE_BYTES: usize = 64 << 10;
/// The part of an error answer read.
const MAX_ERROR_BYTES: usize = 64 << 10;

/// The largest answer read for `inputs` texts: every vector `MAX_DIMENSIONS` numbers wide, each
/// number at its longest; about 51 MiB for a full batch of 256, 264 KiB for one text.
fn answer_limit(inputs: usize) -> usize {
    inputs * (MAX_DIMENSIONS * BYTES_PER_NUMBER + BYTES_PER_ROW) + ENVELOPE_BYTES
}

#[derive(Debug, Clone)]
pub struct OpenAiEmbedderOptions {
    /// For example `https://api.openai.com/v1`; `/embeddings` is appended.
    pub base_url: String,
    pub model: String,
    /// Sent as a bearer when not empty.
    pub api_key: String,
    pub timeout: Duration,
}

pub struct OpenAiEmbedder {
    client: reqwest::Client,
    url: String,
    /// The model name sent to the endpoint.
    remote_model: String,
    /// `openai:<model>`: the vector-space id stored with each vector.
    model_id: String,
    api_key: String,
}

#[derive(Deserialize)]
struct EmbeddingsResponse {
    data: Vec<EmbeddingRow>,
}

#[derive(Deserialize)]
struct EmbeddingRow {
    index: usize,
    embedding: Vec<f32>,
}

impl OpenAiEmbedder {
    pub fn new(options: OpenAiEmbedderOptions) -> Result<Self, EmbedError> {
        let client = reqwest::Client::builder()
            .timeout(options.timeout)
            .build()
            .map_err(|e| EmbedError::Failed(format!("cannot build the HTTP client: {e}")))?;
        Ok(Self {
            client,
            url: format!("{}/embeddings", options.base_url.trim_end_matches('/')),
            model_id: format!("openai:{}", options.model),
            remote_model: options.model,
            api_key: options.api_key,
        })
    }

    async fn embed_batch(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut request = self
            .client
            .post(&self.url)
            .json(&json!({ "model": self.remote_model, "input": texts }));
        if !self.api_key.is_empty() {
            request = request.bearer_auth(&self.api_key);
        }
        let response = request
            .send()
            .await
            .map_err(|e| EmbedError::Failed(format!("{}: {e}", self.url)))?;
        let status = response.status();
        if !status.is_success() {
            let body = read_capped(response, MAX_ERROR_BYTES)
                .await
                .unwrap_or_else(|partial| partial);
            let excerpt: String = String::from_utf8_lossy(&body).chars().take(200).collect();
            return Err(EmbedError::Failed(format!("{} answered {status}: {excerpt}", self.url)));
        }
        let limit = answer_limit(texts.len());
        let body = read_capped(response, limit)
            .await
            .map_err(|_| EmbedError::Failed(format!("{}: the answer is larger than {limit} bytes", self.url)))?;
        let mut body: EmbeddingsResponse = serde_json::from_slice(&body)
            .map_err(|e| EmbedError::Failed(format!("{}: unreadable response: {e}", self.url)))?;
        if body.data.len() != texts.len() {
            return Err(EmbedError::Failed(format!(
                "{}: {} vectors for {} inputs",
                self.url,
                body.data.len(),
                texts.len()
            )));
        }
        body.data.sort_by_key(|row| row.index);
        Ok(body.data.into_iter().map(|row| row.embedding).collect())
    }
}

/// The answer's body by chunks, up to `limit` bytes: `Err` with the first `limit` bytes when it is
/// longer (the rest is never read; the connection is closed). A transport error mid-body ends it
/// where it is; the JSON parse then says what is wrong.
async fn read_capped(mut response: reqwest::Response, limit: usize) -> Result<Vec<u8>, Vec<u8>> {
    let mut body = Vec::new();
    while let Ok(Some(chunk)) = response.chunk().await {
        if body.len() + chunk.len() > limit {
            body.extend_from_slice(&chunk[..limit - body.len()]);
            return Err(body);
        }
        body.extend_from_slice(&chunk);
    }
    Ok(body)
}

#[async_trait::async_trait]
impl Embedder for OpenAiEmbedder {
    fn model(&self) -> &str {
        &self.model_id
    }

    async fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>, EmbedError> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(self.embed_batch(chunk).await?);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use std::sync::{Arc, Mutex};

    use poem::listener::{Acceptor, Listener, TcpListener};
    use poem::web::{Data, Json};
    use poem::{EndpointExt, Request, Route, Server, handler, post};
    use serde_json::Value;

    use super::*;

    type Seen = Arc<Mutex<Vec<(Option<String>, Value)>>>;

    /// A loopback fake of the embeddings API: answers rows in reverse order (clients must sort by
    /// `index`) with `[len(text), index]` as each vector.
    #[handler]
    fn fake(req: &Request, Json(body): Json<Value>, Data(seen): Data<&Seen>) -> poem::Response {
        let auth = req.header("authorization").map(str::to_owned);
        seen.lock().unwrap().push((auth, body.clone()));
        if body["model"] == "huge" || body["model"] == "huge-error" {
            // 64 MiB, counted as the connection takes it.
            let status = if body["model"] == "huge" { 200 } else { 500 };
            let sent = FLOOD_SENT.clone();
            let chunks = std::iter::once(b"{\"data\":[".to_vec())
                .chain(std::iter::repeat_n(b"0.0,".repeat(16 << 10), 1024))
                .map(move |chunk| {
                    sent.fetch_add(chunk.len(), std::sync::atomic::Ordering::SeqCst);
                    Ok::<_, std::io::Error>(chunk)
                });
            return poem::Response::builder()
                .status(poem::http::StatusCode::from_u16(status).unwrap())
                .content_type("application/json")
                .body(poem::Body::from_bytes_stream(futures_util::stream::iter(chunks)));
        }
        if body["model"] == "broken" {
            return poem::Response::builder()
                .status(poem::http::StatusCode::UNAUTHORIZED)
                .body("{\"error\":{\"message\":\"bad key\"}}");
        }
        let inputs = body["input"].as_array().cloned().unwrap_or_default();
        let mut data: Vec<Value> = inputs
            .iter()
            .enumerate()
            .map(|(i, t)| json!({ "object": "embedding", "index": i, "embedding": [t.as_str().unwrap().len() as f32, i as f32] }))
            .collect();
        data.reverse();
        let body = json!({ "object": "list", "data": data, "model": body["model"] });
        poem::Response::builder()
            .content_type("application/json")
            .body(body.to_string())
    }

    /// Bytes of the 64 MiB answers handed to the connection.
    static FLOOD_SENT: std::sync::LazyLock<Arc<std::sync::atomic::AtomicUsize>> =
        std::sync::LazyLock::new(Arc::default);

    async fn serve() -> (String, Seen) {
        let seen: Seen = Arc::default();
        let acceptor = TcpListener::bind("127.0.0.1:0").into_acceptor().await.unwrap();
        let port = acceptor.local_addr()[0].as_socket_addr().unwrap().port();
        let app = Route::new().at("/v1/embeddings", post(fake)).data(seen.clone());
        tokio::spawn(Server::new_with_acceptor(acceptor).run(app));
        (format!("http://127.0.0.1:{port}/v1/"), seen)
    }

    fn embedder(base_url: &str, model: &str) -> OpenAiEmbedder {
        OpenAiEmbedder::new(OpenAiEmbedderOptions {
            base_url: base_url.into(),
            model: model.into(),
            api_key: "sk-test".into(),
            timeout: Duration::from_secs(5),
        })
        .unwrap()
    }

    #[tokio::test]
    async fn posts_the_inputs_and_orders_the_vectors_by_index() {
        let (url, seen) = serve().await;
        let e = embedder(&url, "text-embedding-3-small");
        assert_eq!(e.model(), "openai:text-embedding-3-small");
        let texts = vec!["ab".to_owned(), "abcd".to_owned(), "a".to_owned()];
        let vectors = e.embed(&texts).await.unwrap();
        assert_eq!(vectors, vec![vec![2.0, 0.0], vec![4.0, 1.0], vec![1.0, 2.0]]);
        let seen = seen.lock().unwrap();
        assert_eq!(seen.len(), 1);
        assert_eq!(seen[0].0.as_deref(), Some("Bearer sk-test"));
        assert_eq!(seen[0].1["model"], "text-embedding-3-small");
        assert_eq!(seen[0].1["input"], json!(["ab", "abcd", "a"]));
    }

    #[tokio::test]
    async fn long_inputs_are_split_into_batches() {
        let (url, seen) = serve().await;
        let texts: Vec<String> = (0..BATCH + 3).map(|i| "x".repeat(i % 7 + 1)).collect();
        let vectors = embedder(&url, "m").embed(&texts).await.unwrap();
        assert_eq!(vectors.len(), texts.len());
        assert_eq!(vectors[BATCH + 2], vec![texts[BATCH + 2].len() as f32, 2.0]);
        assert_eq!(seen.lock().unwrap().len(), 2);
    }

    #[tokio::test]
    async fn an_error_status_is_an_embed_error_naming_the_url_and_status() {
        let (url, _) = serve().await;
        let err = embedder(&url, "broken").embed(&["x".into()]).await.unwrap_err();
        let text = err.to_string();
        assert!(text.contains("/v1/embeddings") && text.contains("401"), "{text}");
    }

    #[tokio::test]
    async fn an_unreachable_server_is_an_embed_error() {
        let err = embedder("http://127.0.0.1:9/v1", "m")
            .embed(&["x".into()])
            .await
            .unwrap_err();
        assert!(err.to_string().contains("127.0.0.1:9"), "{err}");
    }

    #[tokio::test]
    async fn huge_answers_are_read_only_to_their_bound() {
        let (url, _) = serve().await;
        let texts = vec!["x".to_owned()];
        let limit = answer_limit(texts.len());
        let err = embedder(&url, "huge").embed(&texts).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            format!("embedding failed: {url}embeddings: the answer is larger than {limit} bytes")
        );
        let err = embedder(&url, "huge-error")
            .embed(&texts)
            .await
            .unwrap_err()
            .to_string();
        assert!(err.contains("500"), "{err}");
        assert!(err.len() < 400, "{err}");
        // What the two answers cost: their bounds, not their 128 MiB (loopback buffers aside).
        let sent = FLOOD_SENT.load(std::sync::atomic::Ordering::SeqCst);
        assert!(sent < 32 << 20, "{sent} bytes sent");
    }
}
