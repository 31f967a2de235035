//! What an operator sees (issue 12, "Seeing what the server does"): every response carries a
//! request id (an incoming sane `X-Request-Id` is kept), one JSON access-log line per request
//! names route, status, duration and tool and never a bearer, and `GET /metrics` is Prometheus
//! text (read here with a real parser, `prometheus-parse`) whose counters move with traffic.

use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::time::Duration;

use futures_util::StreamExt;
use serde_json::{Value, json};
use svc_tests::{Auth, TestApp, on_every_backend, temp_dir};

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");

/// `name{labels}` -> value, from a scrape of `/metrics`.
async fn scrape(app: &TestApp) -> HashMap<String, f64> {
    let response = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap();
    assert_eq!(response.status(), 200);
    assert!(
        response.headers()["content-type"]
            .to_str()
            .unwrap()
            .starts_with("text/plain; version=0.0.4"),
        "{:?}",
        response.headers()
    );
    let text = response.text().await.unwrap();
    let lines = text.lines().map(|line| Ok(line.to_owned()));
    let parsed = prometheus_parse::Scrape::parse(lines).expect("Prometheus text format");
    parsed
        .samples
        .into_iter()
        .map(|sample| {
            let mut labels: Vec<String> = sample.labels.iter().map(|(k, v)| format!("{k}={v}")).collect();
            labels.sort();
            let value = match sample.value {
                prometheus_parse::Value::Counter(v)
                | prometheus_parse::Value::Gauge(v)
                | prometheus_parse::Value::Untyped(v) => v,
                prometheus_parse::Value::Histogram(buckets) => buckets.last().map_or(0.0, |b| b.count),
                prometheus_parse::Value::Summary(_) => 0.0,
            };
            (format!("{}{{{}}}", sample.metric, labels.join(",")), value)
        })
        .collect()
}

fn value(samples: &HashMap<String, f64>, key: &str) -> f64 {
    samples.get(key).copied().unwrap_or(0.0)
}

async fn counters_move_with_traffic(app: TestApp) {
    let before = scrape(&app).await;
    let rendered = app
        .render("metrics card", json!({ "propsSpec": { "type": "object" } }), json!({}))
        .await;
    assert_eq!(rendered["outcome"], "rendered");
    let after = scrape(&app).await;
    // Other tests of this binary share the process's registry: counters move by at least ours.
    let mcp_ok = "svc_http_requests_total{method=POST,route=/mcp,status=200}";
    assert!(
        value(&after, mcp_ok) >= value(&before, mcp_ok) + 2.0,
        "{mcp_ok}: {before:?} -> {after:?}"
    );
    let render_latency = "svc_http_request_duration_seconds_count{route=/mcp,rpc=svc_render}";
    assert!(
        value(&after, render_latency) >= value(&before, render_latency) + 1.0,
        "{after:?}"
    );
    let renders = format!(
        "svc_renders_total{{cache={},outcome=rendered}}",
        if rendered["cache"]["hit"] == true {
            "hit"
        } else {
            "miss"
        }
    );
    assert!(
        value(&after, &renders) >= value(&before, &renders) + 1.0,
        "{renders}: {after:?}"
    );
    assert!(after.contains_key("svc_live_sockets{}"), "{after:?}");
    // SQLite's group-commit writer counts its commits and the writes they carried: the handshake
    // and the render were answered one after the other, so they committed apart.
    if app.backend() == svc_tests::Backend::Sqlite {
        let commits = "svc_db_commits_total{}";
        assert!(
            value(&after, commits) >= value(&before, commits) + 2.0,
            "{commits}: {before:?} -> {after:?}"
        );
        let writes = |samples: &HashMap<String, f64>| {
            value(samples, "svc_db_writes_total{statement=alone}")
                + value(samples, "svc_db_writes_total{statement=listed}")
        };
        assert!(writes(&after) >= writes(&before) + 2.0, "{after:?}");
    }
    assert!(after.contains_key("svc_long_polls{}"), "{after:?}");

    // Replicas on PostgreSQL count the request paths' reads, alone or sharing a statement.
    if app.can_have_replicas() && app.is_postgres() {
        app.tool_ok("svc_get_session", json!({ "sessionId": rendered["sessionId"] }))
            .await;
        let read = scrape(&app).await;
        let reads =
            value(&read, "svc_db_reads_total{statement=alone}") + value(&read, "svc_db_reads_total{statement=shared}");
        assert!(reads >= 1.0, "the session's read is counted: {read:?}");
    }

    // A made-up tool name is counted as `unknown`, never as a label of its own.
    app.call("svc_made_up_tool_7f3", json!({})).await;
    let later = scrape(&app).await;
    assert!(
        later.keys().all(|key| !key.contains("svc_made_up_tool_7f3")),
        "{later:?}"
    );
    assert!(
        value(
            &later,
            "svc_http_request_duration_seconds_count{route=/mcp,rpc=unknown}"
        ) >= 1.0
    );
}

async fn metrics_are_not_served_through_a_proxy(app: TestApp) {
    let response = app
        .client
        .get(format!("{}/metrics", app.base))
        .header("x-forwarded-for", "203.0.113.9")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status(), 403);
}

async fn every_response_carries_a_request_id(app: TestApp) {
    let kept = app
        .client
        .get(format!("{}/healthz", app.base))
        .header("x-request-id", "lb-7f3a.1")
        .send()
        .await
        .unwrap();
    assert_eq!(kept.headers()["x-request-id"], "lb-7f3a.1");
    let fresh = app.client.get(format!("{}/healthz", app.base)).send().await.unwrap();
    let id = fresh.headers()["x-request-id"].to_str().unwrap().to_owned();
    assert_eq!(uuid::Uuid::parse_str(&id).map(|u| u.get_version_num()), Ok(7), "{id}");
    let replaced = app
        .client
        .get(format!("{}/healthz", app.base))
        .header("x-request-id", "two words")
        .send()
        .await
        .unwrap();
    assert_ne!(replaced.headers()["x-request-id"], "two words");
}

/// A cold render counts a cache miss, a queue wait and a generation; the same handshake again is
/// a cache hit and generates nothing. Queue depth and the database pool are read at each scrape.
async fn generation_figures_move(app: TestApp) {
    let contract = json!({ "propsSpec": { "type": "object" } });
    let before = scrape(&app).await;
    let rendered = app.render("generation metrics card", contract.clone(), json!({})).await;
    assert_eq!(rendered["outcome"], "rendered");
    let after = scrape(&app).await;
    for (key, moved_by) in [
        ("svc_blueprint_cache_lookups_total{result=miss}", 1.0),
        ("svc_generation_queue_wait_seconds_count{}", 1.0),
        ("svc_generation_duration_seconds_count{outcome=rendered}", 1.0),
    ] {
        assert!(
            value(&after, key) >= value(&before, key) + moved_by,
            "{key}: {} -> {}",
            value(&before, key),
            value(&after, key)
        );
    }

    let handshake = app
        .tool_ok(
            "svc_handshake",
            json!({ "intent": "generation metrics card", "blueprintDraft": { "contract": contract } }),
        )
        .await;
    assert_eq!(handshake["suggestion"]["origin"], "cache", "{handshake}");
    let hit = "svc_blueprint_cache_lookups_total{result=hit}";
    let later = scrape(&app).await;
    assert!(value(&later, hit) >= value(&after, hit) + 1.0, "{later:?}");

    // Gauges of this server, set at the scrape: nothing is generating now.
    assert_eq!(
        later.get("svc_generation_queue{state=running}"),
        Some(&0.0),
        "{later:?}"
    );
    assert_eq!(
        later.get("svc_generation_queue{state=waiting}"),
        Some(&0.0),
        "{later:?}"
    );
    let max = value(&later, "svc_db_pool_max_connections{}");
    let open =
        value(&later, "svc_db_pool_connections{state=idle}") + value(&later, "svc_db_pool_connections{state=in_use}");
    assert!(
        max >= 2.0 && open >= 1.0 && open <= max,
        "pool: {open} open of {max}: {later:?}"
    );
}

/// A `svc_consume` held open with a timeout counts in `svc_consume_waits` while it waits, and its
/// latency is the whole wait (its answer is sent after its head).
async fn a_held_consume_counts_as_a_wait(app: TestApp) {
    let rendered = app
        .render("waiting card", json!({ "propsSpec": { "type": "object" } }), json!({}))
        .await;
    let session_id = rendered["sessionId"].as_str().unwrap().to_owned();
    let waited = "svc_http_request_duration_seconds_sum{route=/mcp,rpc=svc_consume}";
    let waited_before = value(&scrape(&app).await, waited);
    let held = app.call("svc_consume", json!({ "sessionId": session_id, "timeout": 3 }));
    let seen = async {
        // The gauge is per process; another test's wait may add to it, never subtract.
        for _ in 0..100 {
            let waits = value(&scrape(&app).await, "svc_consume_waits{}");
            if waits >= 1.0 {
                return waits;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        0.0
    };
    let (reply, waits) = tokio::join!(held, seen);
    assert!(waits >= 1.0, "svc_consume_waits while a consume waits: {waits}");
    assert_eq!(reply["result"]["structuredContent"]["events"], json!([]), "{reply}");
    // Recorded as the body ends, which can follow the client's read by a moment.
    let mut recorded = 0.0;
    for _ in 0..100 {
        recorded = value(&scrape(&app).await, waited) - waited_before;
        if recorded >= 2.9 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(recorded >= 2.9, "the 3 s wait is in the latency sum: {recorded}");
}

on_every_backend!(Auth::DevAllowAll =>
    a_held_consume_counts_as_a_wait,
    generation_figures_move,
    counters_move_with_traffic,
    metrics_are_not_served_through_a_proxy,
    every_response_carries_a_request_id
);

/// The log of a server started with `--log-format FORMAT` and `RUST_LOG=FILTER` that answered
/// one `/healthz` carrying `request_id`, read once the server has stopped.
async fn log_of_one_healthz(name: &str, format: &str, filter: &str, request_id: &str) -> String {
    let data_dir = temp_dir(name);
    let log_path = data_dir.join("stderr.log");
    let server = svc_tests::process::ServerProcess::start_logging(
        BINARY,
        &data_dir.join("data"),
        &["--dev-allow-all", "--log-format", format],
        filter,
        &log_path,
    );
    let answer = reqwest::Client::new()
        .get(format!("{}/healthz", server.base))
        .header("x-request-id", request_id)
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    assert!(server.terminate().success());
    let log = std::fs::read_to_string(&log_path).unwrap();
    let _ = std::fs::remove_dir_all(&data_dir);
    log
}

/// A log that is not read at a terminal (a file here; a pipe or a journal alike) is plain text:
/// no ANSI colour escapes around levels, field names and spans.
#[tokio::test]
async fn a_log_written_to_a_file_has_no_colour_escapes() {
    let log = log_of_one_healthz("svc-plain-log", "text", "info", "plain-text-7").await;
    let access = log
        .lines()
        .find(|line| line.contains("svc::access") && line.contains("plain-text-7"))
        .unwrap_or_else(|| panic!("the request's access line:\n{log}"));
    assert!(access.contains(r#"request_id="plain-text-7""#), "{access}");
    assert!(access.contains("status=200"), "{access}");
    assert!(
        !log.contains('\u{1b}'),
        "colour escapes in a log written to a file:\n{log:?}"
    );
}

/// `RUST_LOG`'s span rules choose the access lines: `warn,[request]=info` logs each request's
/// line (the event is logged inside the request's span) and none of start-up's `INFO` lines.
#[tokio::test]
async fn a_span_rule_in_rust_log_chooses_the_access_lines() {
    let log = log_of_one_healthz("svc-span-rule-log", "json", "warn,[request]=info", "span-rule-3").await;
    let lines: Vec<serde_json::Value> = log.lines().filter_map(|line| serde_json::from_str(line).ok()).collect();
    assert!(
        lines
            .iter()
            .any(|line| line["target"] == "svc::access" && line["span"]["request_id"] == "span-rule-3"),
        "the request's access line:\n{log}"
    );
    assert!(
        !lines.iter().any(|line| line["target"] == "svc::startup"),
        "start-up's INFO lines are outside the rule:\n{log}"
    );
}

/// The log is written by a thread of its own (infrastructure/src/telemetry.rs): every line logged
/// before a SIGTERM is on stderr when the process has exited, each whole on its own line, though
/// the requests came from many connections at once and the signal followed the last answer
/// without a pause.
#[tokio::test]
async fn every_line_logged_before_a_sigterm_is_written_whole_before_the_process_exits() {
    let data_dir = temp_dir("svc-log-flush");
    let log_path = data_dir.join("stderr.log");
    let server = svc_tests::process::ServerProcess::start_logging(
        BINARY,
        &data_dir.join("data"),
        &["--dev-allow-all", "--log-format", "json"],
        "info",
        &log_path,
    );
    let base = server.base.clone();
    let client = reqwest::Client::new();
    let requests = (0..2_000).map(|n| {
        let request = client
            .post(format!("{base}/mcp"))
            .bearer_auth("load")
            .header("x-request-id", format!("flush-{n}"))
            .header("accept", "application/json, text/event-stream")
            .json(&json!({ "jsonrpc": "2.0", "id": n, "method": "ping" }))
            .send();
        async move { request.await.unwrap().status() }
    });
    let statuses: Vec<_> = futures_util::stream::iter(requests)
        .buffer_unordered(32)
        .collect()
        .await;
    assert!(statuses.iter().all(|status| *status == 200), "{statuses:?}");
    server.send_term();
    let exited = server
        .exit_within(Duration::from_secs(30))
        .expect("the server exits on SIGTERM");
    assert!(exited.success(), "{exited:?}");
    let log = std::fs::read_to_string(&log_path).unwrap();
    let _ = std::fs::remove_dir_all(&data_dir);
    let mut answered = std::collections::HashSet::new();
    for line in log.lines() {
        let parsed: Value =
            serde_json::from_str(line).unwrap_or_else(|e| panic!("a line that is not whole JSON ({e}): {line:?}"));
        if parsed["target"] == "svc::access"
            && let Some(id) = parsed["span"]["request_id"]
                .as_str()
                .and_then(|id| id.strip_prefix("flush-"))
        {
            assert!(answered.insert(id.to_owned()), "two access lines for request {id}");
        }
    }
    assert_eq!(answered.len(), 2_000, "access lines of the 2,000 answered requests");
    assert!(
        log.lines()
            .last()
            .and_then(|line| serde_json::from_str::<Value>(line).ok())
            .is_some_and(|line| line["fields"]["message"] == "stopped"),
        "the log ends with the server's last line:\n{}",
        log.lines().rev().take(3).collect::<Vec<_>>().join("\n")
    );
}

/// The real binary with JSON logs: one access line per request, with the request id, route,
/// status, tool and duration, and no bearer anywhere in the log.
#[tokio::test]
async fn one_json_access_line_per_request_and_no_bearer_in_the_log() {
    let data_dir = temp_dir("svc-access-log");
    let log_path = data_dir.join("stderr.log");
    let mut child = Command::new(BINARY)
        .args([
            "serve",
            "--port",
            "0",
            "--dev-allow-all",
            "--log-format",
            "json",
            "--data-dir",
        ])
        .arg(&data_dir)
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut banner).unwrap();
    let base = banner.split("listening on ").nth(1).unwrap().trim().to_owned();
    let secret_bearer = "bearer-that-must-never-be-logged-5c1d";
    let client = reqwest::Client::new();
    let answer = client
        .post(format!("{base}/mcp"))
        .bearer_auth(secret_bearer)
        .header("x-request-id", "trace-me-42")
        .header("accept", "application/json, text/event-stream")
        .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": "svc_handshake", "arguments": { "intent": "log test", "blueprintDraft": { "contract": { "propsSpec": { "type": "object" } } } } } }))
        .send()
        .await
        .unwrap();
    assert_eq!(answer.status(), 200);
    // Refused by the host guard in front of every route: its warning is the request's too.
    let refused = client
        .get(format!("{base}/healthz"))
        .header("host", "rebound.example")
        .header("x-request-id", "trace-refused-7")
        .send()
        .await
        .unwrap();
    assert_eq!(refused.status(), 403);
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let _ = child.wait();
    let log = std::fs::read_to_string(&log_path).unwrap();
    let _ = std::fs::remove_dir_all(&data_dir);
    assert!(!log.contains(secret_bearer), "the bearer reached the log:\n{log}");
    let access: Vec<Value> = log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .filter(|line| line["target"] == "svc::access")
        .collect();
    let ours: Vec<&Value> = access
        .iter()
        .filter(|line| line["span"]["request_id"] == "trace-me-42")
        .collect();
    assert_eq!(ours.len(), 1, "one access line for the request:\n{log}");
    let line = ours[0];
    assert_eq!(line["fields"]["status"], 200, "{line}");
    assert_eq!(line["fields"]["rpc"], "svc_handshake", "{line}");
    assert_eq!(line["span"]["route"], "/mcp", "{line}");
    assert_eq!(line["span"]["method"], "POST", "{line}");
    assert!(
        line["fields"]["duration_ms"].as_f64().is_some_and(|ms| ms > 0.0),
        "{line}"
    );
    let warned = log
        .lines()
        .filter_map(|line| serde_json::from_str::<Value>(line).ok())
        .find(|line| line["fields"]["message"] == "request refused by the host guard")
        .unwrap_or_else(|| panic!("the guard's warning:\n{log}"));
    assert_eq!(warned["span"]["request_id"], "trace-refused-7", "{warned}");
}

/// The real binary with JSON logs, every provider pointed at a fake that answers 401: the
/// start-up summary names each provider and whether it has a key (never the key) and the models
/// a render can reach; the first failed call logs an error naming the provider and its status;
/// the failed generation logs its code; its spans close with durations; `/metrics` counts it.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rejected_provider_key_shows_in_the_log_and_the_metrics() {
    use svc_generation::llm::fake_provider::{FakeProvider, FakeReply};

    let fake = FakeProvider::start().await;
    fake.set_default(FakeReply::status(
        401,
        r#"{"error":{"message":"Incorrect API key provided"}}"#,
    ));
    let bad_key = "sk-rejected-key-that-must-never-be-logged-7d1e";
    let data_dir = temp_dir("svc-provider-log");
    let log_path = data_dir.join("stderr.log");
    let mut child = Command::new(BINARY)
        .args([
            "serve",
            "--port",
            "0",
            "--dev-allow-all",
            "--log-format",
            "json",
            "--data-dir",
        ])
        .arg(&data_dir)
        .env(
            "SVC_GENERATION__PROVIDERS__OPENAI__BASE_URL",
            format!("{}/v1", fake.base_url),
        )
        .env("SVC_GENERATION__PROVIDERS__OPENAI__API_KEY", bad_key)
        .env_remove("RUST_LOG")
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("GEMINI_API_KEY")
        .env_remove("MISTRAL_API_KEY")
        .stdout(Stdio::piped())
        .stderr(std::fs::File::create(&log_path).unwrap())
        .spawn()
        .unwrap();
    let mut banner = String::new();
    std::io::BufRead::read_line(&mut std::io::BufReader::new(child.stdout.take().unwrap()), &mut banner).unwrap();
    let base = banner.split("listening on ").nth(1).unwrap().trim().to_owned();
    let client = reqwest::Client::new();
    let call = |tool: &str, arguments: Value| {
        client
            .post(format!("{base}/mcp"))
            .bearer_auth("dev")
            .header("accept", "application/json, text/event-stream")
            .json(&json!({ "jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": { "name": tool, "arguments": arguments } }))
            .send()
    };
    let contract = json!({ "propsSpec": { "type": "object" } });
    let handshake: Value = call(
        "svc_handshake",
        json!({ "intent": "key test", "blueprintDraft": { "contract": contract } }),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    let handshake_id = handshake["result"]["structuredContent"]["handshakeId"].clone();
    let render: Value = call(
        "svc_render",
        json!({ "handshakeId": handshake_id, "props": {}, "infra": { "model": "openai:gpt-4.1-mini" } }),
    )
    .await
    .unwrap()
    .json()
    .await
    .unwrap();
    assert_eq!(
        render["result"]["structuredContent"]["error"]["code"], "NO_CREDENTIALS",
        "{render}"
    );
    assert_eq!(fake.request_count(), 1, "a rejected key is not retried");
    let metrics = client
        .get(format!("{base}/metrics"))
        .send()
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    let _ = Command::new("kill").args(["-TERM", &child.id().to_string()]).status();
    let _ = child.wait();
    let log = std::fs::read_to_string(&log_path).unwrap();
    let _ = std::fs::remove_dir_all(&data_dir);

    assert!(!log.contains(bad_key), "the key reached the log:\n{log}");
    let lines: Vec<Value> = log.lines().filter_map(|l| serde_json::from_str(l).ok()).collect();
    let find = |what: &str, test: &dyn Fn(&Value) -> bool| -> Value {
        lines
            .iter()
            .find(|line| test(line))
            .cloned()
            .unwrap_or_else(|| panic!("no {what} line in the log:\n{log}"))
    };
    let startup = find("start-up summary", &|l| {
        l["target"] == "svc::startup" && l["fields"]["message"] == "generation"
    });
    let providers = startup["fields"]["providers"].as_str().unwrap();
    for named in ["openai (key set)", "anthropic (no key)", "ollama (no key needed)"] {
        assert!(providers.contains(named), "{named}: {startup}");
    }
    let routable = startup["fields"]["routable_models"].as_str().unwrap();
    assert!(routable.contains("openai:gpt-4.1-mini"), "{startup}");
    assert!(!routable.contains("anthropic:"), "{startup}");

    let rejected = find("rejected key", &|l| {
        l["level"] == "ERROR"
            && l["fields"]["message"]
                .as_str()
                .is_some_and(|m| m.contains("rejected its API key"))
    });
    assert_eq!(rejected["fields"]["provider"], "openai", "{rejected}");
    assert_eq!(rejected["fields"]["status"], 401, "{rejected}");

    let failed = find("generation failed", &|l| l["fields"]["message"] == "generation failed");
    assert_eq!(failed["fields"]["code"], "NO_CREDENTIALS", "{failed}");
    assert!(
        failed["fields"]["error"].as_str().unwrap().contains("HTTP 401"),
        "{failed}"
    );

    // Spans close with their durations.
    for span in ["handshake", "render", "generation", "prompting", "provider_call"] {
        let closed = find(span, &|l| {
            l["fields"]["message"] == "close" && l["span"]["name"] == span
        });
        assert!(closed["fields"]["time.busy"].is_string(), "{closed}");
    }
    let call_closed = find("provider_call", &|l| l["span"]["name"] == "provider_call");
    assert_eq!(call_closed["span"]["status"], 401, "{call_closed}");

    let count = "svc_generation_duration_seconds_count{outcome=\"NO_CREDENTIALS\"} 1";
    assert!(metrics.contains(count), "{count}:\n{metrics}");
}

/// A server bound to `::` (dual-stack) sees a local IPv4 scraper as `::ffff:127.0.0.1`: it is on
/// the machine itself, so `/metrics` answers it.
#[tokio::test]
async fn metrics_answer_a_local_ipv4_client_of_a_dual_stack_listener() {
    let app = TestApp::spawn_configured("metrics_dual_stack", svc_tests::Backend::Sqlite, Auth::Strict, |s| {
        s.server.host = "::".into();
    })
    .await
    .unwrap();
    assert!(app.base.starts_with("http://127.0.0.1:"), "{}", app.base);
    let response = app.client.get(format!("{}/metrics", app.base)).send().await.unwrap();
    assert_eq!(response.status(), reqwest::StatusCode::OK);
}
