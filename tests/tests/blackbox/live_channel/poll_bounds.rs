//! The polling GET's bounds (docs/live-channel.md, "The polling fallback"): an answer carries at
//! most 1 MiB of replayed frames, so a large replay is drained over several polls, each frame
//! once and in order; a session has at most 4 GETs in flight, counted until the connection took
//! the whole answer (a client that reads nothing, or trickles its window a byte at a time, keeps
//! its places); and at most 200 a second.

use std::time::Duration;

use serde_json::{Value, json};
use svc_tests::{Auth, Backend, TestApp, on_every_backend};

use crate::live_channel::support::{card, poll, polling_url};

/// Replayed frame bytes one answer carries at most.
const ANSWER_BUDGET_BYTES: usize = 1024 * 1024;

on_every_backend!(Auth::DevAllowAll => a_replay_of_several_mib_is_drained_over_polls_within_the_budget);

async fn a_replay_of_several_mib_is_drained_over_polls_within_the_budget(app: TestApp) {
    let (session, slice) = card(&app).await;
    // The first poll: the ack, and the cursors after the render's own envelopes.
    let first = poll(&app, &slice, "wait=0").await;
    assert_eq!(first["frames"][0]["type"], "ack");
    let revision = first["cursors"]["revision"].clone();
    let mut since = first["cursors"]["lastSequence"].as_i64().unwrap();
    let mut from_seq = first["cursors"]["lastStreamSeq"].as_i64().unwrap();
    let rendered = from_seq;
    // 24 envelopes of 150 to 249 KiB, about 4.8 MiB: within the replay buffer's 8 MiB.
    let emitted: Vec<String> = (0..24usize)
        .map(|i| format!("{i}:{}", "x".repeat((150 + (i * 37) % 100) * 1024)))
        .collect();
    for payload in &emitted {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": payload }),
        )
        .await;
    }

    let mut seen = vec![];
    let mut answers = 0;
    loop {
        assert!(answers < 50, "the drain ends; seen {} envelopes", seen.len());
        let query = format!("revision={revision}&fromSeq={from_seq}&sinceSequence={since}&wait=0");
        let answer = poll(&app, &slice, &query).await;
        answers += 1;
        let frames = answer["frames"].as_array().unwrap();
        let frame_bytes: usize = frames.iter().map(|frame| frame.to_string().len()).sum();
        assert!(
            frame_bytes <= ANSWER_BUDGET_BYTES,
            "answer {answers} carries {frame_bytes} bytes of frames"
        );
        assert!(!frames.is_empty(), "answer {answers} carries something");
        for frame in frames {
            assert_eq!(frame["type"], "data", "only the envelopes, no replay_gap");
            let payload = frame["payload"]["payload"].as_str().unwrap();
            let index = payload.split(':').next().unwrap().to_owned();
            seen.push((frame["payload"]["seq"].as_i64().unwrap(), index, payload.len()));
        }
        from_seq = answer["cursors"]["lastStreamSeq"].as_i64().unwrap();
        since = answer["cursors"]["lastSequence"].as_i64().unwrap();
        assert_eq!(
            Some(from_seq),
            seen.last().map(|(seq, ..)| *seq),
            "the cursor is the last carried"
        );
        if answer["more"] == false {
            break;
        }
        assert_eq!(answer["more"], true);
    }
    let expected: Vec<(i64, String, usize)> = emitted
        .iter()
        .enumerate()
        .map(|(i, payload)| (rendered + i as i64 + 1, i.to_string(), payload.len()))
        .collect();
    assert_eq!(seen, expected, "every envelope once, in order");
    assert!(answers >= 5, "4.8 MiB took {answers} answers of at most 1 MiB");
    let after = poll(
        &app,
        &slice,
        &format!("revision={revision}&fromSeq={from_seq}&sinceSequence={since}&wait=0"),
    )
    .await;
    assert_eq!(after["frames"], json!([]), "nothing is left");
    assert_eq!(after["more"], false);
}

/// The body of a GET refused while 4 of its session's are in flight.
fn in_flight_refusal() -> Value {
    json!({ "error": { "code": "RATE_LIMITED", "message": "this session has 4 polls in flight; poll again when one has ended" } })
}

/// GETs `url` until it is answered `status` (the GETs it waits for are sent concurrently, or
/// leave once the client has gone): the answer's `Retry-After` and body.
async fn until_answered(app: &TestApp, url: &str, status: u16) -> (Option<String>, Value) {
    for _ in 0..100 {
        let answer = app.client.get(url).send().await.unwrap();
        if answer.status() == status {
            let retry_after = answer
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_owned());
            return (retry_after, answer.json().await.unwrap());
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    panic!("{url} was never answered {status}");
}

/// The query of a poll that has seen everything so far.
fn up_to_date(first: &Value) -> String {
    let cursors = &first["cursors"];
    format!(
        "revision={}&fromSeq={}&sinceSequence={}",
        cursors["revision"], cursors["lastStreamSeq"], cursors["lastSequence"]
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_fifth_poll_of_a_session_with_four_waiting_is_refused() {
    let app = TestApp::spawn("poll_bounds_waiting", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .expect("SQLite is always available");
    let (session, slice) = card(&app).await;
    let up_to_date = up_to_date(&poll(&app, &slice, "wait=0").await);
    // Four long-polls wait for news. One that came while the probe below held a place was
    // refused, and is sent again.
    let held: Vec<_> = (0..4)
        .map(|_| {
            let (client, url) = (
                app.client.clone(),
                polling_url(&slice, &format!("{up_to_date}&wait=25")),
            );
            tokio::spawn(async move {
                loop {
                    let answer = client.get(&url).send().await.unwrap();
                    if answer.status() != 429 {
                        return answer.json::<Value>().await.unwrap();
                    }
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            })
        })
        .collect();

    let fifth = polling_url(&slice, &format!("{up_to_date}&wait=0"));
    let (retry_after, body) = until_answered(&app, &fifth, 429).await;
    assert_eq!(body, in_flight_refusal());
    assert_eq!(retry_after.as_deref(), Some("1"));
    assert!(held.iter().all(|poll| !poll.is_finished()), "the four still wait");

    // News ends the four, and the session may poll again.
    app.tool_ok(
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": "news" }),
    )
    .await;
    for poll in held {
        let answer = poll.await.unwrap();
        assert_eq!(answer["frames"][0]["payload"]["payload"], "news", "{answer}");
    }
    let (_, body) = until_answered(&app, &fifth, 200).await;
    assert_eq!(body["frames"][0]["payload"]["payload"], "news", "{body}");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn answers_a_client_never_reads_keep_their_places_until_it_lets_them_go() {
    let app = TestApp::spawn("poll_bounds_unread", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .expect("SQLite is always available");
    let (session, slice) = card(&app).await;
    let first = poll(&app, &slice, "wait=0").await;
    app.tool_ok(
        "svc_emit",
        json!({ "sessionId": session, "channel": "log", "payload": "x".repeat(64 * 1024) }),
    )
    .await;
    // Each GET replays the envelope at once; over HTTP/2 with no window the answers stay with the
    // server, heads sent, bodies never.
    let replay = polling_url(
        &slice,
        &format!("revision={}&fromSeq=0&wait=0", first["cursors"]["revision"]),
    );
    let (connection, closer) = svc_tests::h2::connect_without_window(&app.base).await;
    let mut unread = vec![];
    for _ in 0..4 {
        let answer = svc_tests::h2::get(connection.clone(), &replay).await.unwrap();
        assert_eq!(answer.status(), 200);
        unread.push(answer);
    }
    let refused = app.client.get(&replay).send().await.unwrap();
    assert_eq!(refused.status(), 429);
    assert_eq!(
        refused.headers().get("retry-after").map(|v| v.to_str().unwrap()),
        Some("1")
    );
    assert_eq!(refused.json::<Value>().await.unwrap(), in_flight_refusal());

    // A stream the client resets gives its place back.
    unread.pop();
    let (_, body) = until_answered(&app, &replay, 200).await;
    assert_eq!(body["frames"][0]["payload"]["seq"], 1, "{}", body["cursors"]);
    drop(unread);
    closer.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn answers_a_client_trickles_a_byte_at_a_time_keep_their_places_while_they_trickle() {
    let app = TestApp::spawn("poll_bounds_trickled", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .expect("SQLite is always available");
    let (session, slice) = card(&app).await;
    let first = poll(&app, &slice, "wait=0").await;
    // About 960 KiB of envelopes: a replay from the start is one answer near the budget.
    for i in 0..4 {
        app.tool_ok(
            "svc_emit",
            json!({ "sessionId": session, "channel": "log", "payload": format!("{i}:{}", "x".repeat(240 * 1024)) }),
        )
        .await;
    }
    let replay = polling_url(
        &slice,
        &format!("revision={}&fromSeq=0&wait=0", first["cursors"]["revision"]),
    );
    // Over HTTP/2, each stream's window is one byte, granted again as each byte is read: the
    // client reads a byte every few milliseconds, so each answer trickles to it and is taken
    // only after more than an hour.
    let (connection, closer) = svc_tests::h2::connect_with_window(&app.base, 1).await;
    let mut trickling = vec![];
    for _ in 0..4 {
        let answer = svc_tests::h2::get(connection.clone(), &replay).await.unwrap();
        assert_eq!(answer.status(), 200);
        let (read, mut progress) = tokio::sync::watch::channel(Vec::<u8>::new());
        let mut body = answer.into_body();
        trickling.push(tokio::spawn(async move {
            while let Some(frame) = http_body_util::BodyExt::frame(&mut body).await {
                let bytes = frame.unwrap().into_data().unwrap();
                read.send_modify(|read| read.extend_from_slice(&bytes));
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }));
        let started = progress.wait_for(|read| read.len() >= 8).await.unwrap().clone();
        assert_eq!(&started[..8], b"{\"frames", "the answer's first bytes, one at a time");
    }
    let refused = app.client.get(&replay).send().await.unwrap();
    assert_eq!(refused.status(), 429, "the four trickling answers hold their places");
    assert_eq!(
        refused.headers().get("retry-after").map(|v| v.to_str().unwrap()),
        Some("1")
    );
    assert_eq!(refused.json::<Value>().await.unwrap(), in_flight_refusal());
    assert!(
        trickling.iter().all(|reader| !reader.is_finished()),
        "the four still trickle"
    );

    // A client that resets its streams gives their places back, and an answer read whole says
    // its length.
    for reader in &trickling {
        reader.abort();
    }
    until_answered(&app, &replay, 200).await;
    let answer = app.client.get(&replay).send().await.unwrap();
    assert_eq!(answer.status(), 200);
    let length = answer
        .headers()
        .get("content-length")
        .map(|v| v.to_str().unwrap().to_owned());
    let bytes = answer.bytes().await.unwrap();
    assert_eq!(length, Some(bytes.len().to_string()));
    let body: Value = serde_json::from_slice(&bytes).unwrap();
    let emitted: Vec<&str> = body["frames"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|frame| frame["payload"]["payload"].as_str())
        .filter_map(|payload| payload.split_once(':').map(|(index, _)| index))
        .collect();
    assert_eq!(emitted, ["0", "1", "2", "3"], "{}", body["cursors"]);
    closer.abort();
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn more_than_200_polls_of_a_session_in_a_second_are_refused() {
    let app = TestApp::spawn("poll_bounds_rate", Backend::Sqlite, Auth::DevAllowAll)
        .await
        .expect("SQLite is always available");
    let (_, slice) = card(&app).await;
    let url = polling_url(
        &slice,
        &format!("{}&wait=0", up_to_date(&poll(&app, &slice, "wait=0").await)),
    );
    let too_fast = json!({ "error": { "code": "RATE_LIMITED", "message": "more than 200 polls of this session in a second; wait a second" } });
    // 300 at once; a burst that a slow machine spreads over two one-second windows is sent again.
    for _ in 0..5 {
        let answers = futures_util::future::join_all((0..300).map(|_| app.client.get(&url).send())).await;
        let mut refused = vec![];
        for answer in answers {
            let answer = answer.unwrap();
            let status = answer.status();
            let retry_after = answer
                .headers()
                .get("retry-after")
                .map(|v| v.to_str().unwrap().to_owned());
            let body: Value = answer.json().await.unwrap();
            if body == too_fast {
                assert_eq!((status.as_u16(), retry_after.as_deref()), (429, Some("1")));
                refused.push(body);
            }
        }
        if !refused.is_empty() {
            // 200 a second pass: the burst's first 199 at least (the poll before it may have
            // opened the window).
            assert!(refused.len() <= 101, "{} of the 300 refused", refused.len());
            return;
        }
        tokio::time::sleep(Duration::from_millis(1100)).await;
    }
    panic!("no burst of 300 polls was refused for its rate");
}
