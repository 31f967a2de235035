//! Our lines against `tracing-subscriber`'s own formatters, the layouts they keep: the same
//! events through both, compared without their timestamps.

use std::io;
use std::sync::{Arc, Mutex};

use tracing_subscriber::fmt;
use tracing_subscriber::fmt::MakeWriter;
use tracing_subscriber::fmt::format::FmtSpan;
use tracing_subscriber::layer::SubscriberExt;

use super::subscriber;

/// Everything written, shared by the clones a subscriber makes.
#[derive(Clone, Default)]
pub(super) struct Captured(Arc<Mutex<Vec<u8>>>);

impl Captured {
    pub(super) fn lines(&self) -> Vec<String> {
        let bytes = self.0.lock().unwrap();
        String::from_utf8(bytes.clone())
            .unwrap()
            .lines()
            .map(str::to_owned)
            .collect()
    }
}

impl io::Write for Captured {
    fn write(&mut self, bytes: &[u8]) -> io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(bytes);
        Ok(bytes.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

impl<'a> MakeWriter<'a> for Captured {
    type Writer = Captured;

    fn make_writer(&'a self) -> Self::Writer {
        self.clone()
    }
}

#[derive(Debug, thiserror::Error)]
#[error("the provider answered HTTP 401")]
struct Rejected(#[source] Refused);

#[derive(Debug, thiserror::Error)]
#[error("key refused")]
struct Refused;

/// What a request logs, and a timed span closing, with fields of every kind a visitor takes.
fn log_a_request() {
    let request = tracing::info_span!("request", request_id = %"01JEXAMPLE", method = %"POST", route = "/mcp");
    let _entered = request.enter();
    tracing::warn!(reason = "host", "request refused by the host guard");
    {
        let call = tracing::info_span!(
            "provider_call",
            provider = "openai",
            round = 2_u64,
            status = tracing::field::Empty
        );
        let _call = call.enter();
        call.record("status", 401_u64);
        tracing::error!(
            error = &Rejected(Refused) as &(dyn std::error::Error + 'static),
            attempt = -1_i64,
            "generation failed"
        );
    }
    log::warn!(target: "a::library", "a record of the log crate, {}", 7);
    tracing::info!(
        target: "svc::access",
        status = 200_u64,
        duration_ms = 0.123_456_f64,
        rpc = "tools/list",
        cached = true,
        shape = ?["a", "b"],
        "request"
    );
    drop(_entered);
    tracing::info!(
        quote = "say \"hi\" é",
        whole = 1.0_f64,
        small = 1.5e-7_f64,
        "outside any span"
    );
}

/// `tracing-subscriber`'s own layer with its span closing lines; it closes the request span
/// too, which ours does not (the access line has its duration): see [`without_the_requests_close`].
fn stock_text(writer: Captured) -> impl tracing::Subscriber {
    tracing_subscriber::registry().with(
        fmt::layer()
            .with_ansi(false)
            .with_writer(writer)
            .with_span_events(FmtSpan::CLOSE),
    )
}

fn stock_json(writer: Captured) -> impl tracing::Subscriber {
    tracing_subscriber::registry().with(fmt::layer().json().with_writer(writer).with_span_events(FmtSpan::CLOSE))
}

/// The stock lines but the request span's closing one.
fn without_the_requests_close(lines: Vec<String>) -> Vec<String> {
    lines
        .into_iter()
        .filter(|line| match serde_json::from_str::<serde_json::Value>(line) {
            Ok(json) => !(json["fields"]["message"] == "close" && json["span"]["name"] == "request"),
            // The one other span, `provider_call`, is inside the request's.
            Err(_) => !line.contains(": close time.busy=") || line.contains(":provider_call{"),
        })
        .collect()
}

fn lines_of(subscriber: impl tracing::Subscriber + Send + Sync + 'static, captured: &Captured) -> Vec<String> {
    // The `log` crate's records go to the thread's subscriber, as `try_init` sets it up in `svc`.
    let _ = tracing_log::LogTracer::init();
    tracing::subscriber::with_default(subscriber, log_a_request);
    captured.lines()
}

/// A text line after its 27-character timestamp, the span timings' values (which differ from
/// run to run) left out.
fn without_timestamp(line: &str) -> String {
    line[27..]
        .split(' ')
        .map(|word| match word.split_once('=') {
            Some((timing @ ("time.busy" | "time.idle"), _)) => timing,
            _ => word,
        })
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn text_lines_are_laid_out_as_tracing_subscribers_own() {
    let (ours, stock) = (Captured::default(), Captured::default());
    let ours_lines = lines_of(subscriber(ours.clone(), false, false, Some("trace")), &ours);
    let stock_lines = without_the_requests_close(lines_of(stock_text(stock.clone()), &stock));
    assert_eq!(ours_lines.len(), 6, "{ours_lines:#?}");
    assert_eq!(ours_lines.len(), stock_lines.len(), "{ours_lines:#?}\n{stock_lines:#?}");
    for (ours, stock) in ours_lines.iter().zip(&stock_lines) {
        assert!(chrono::DateTime::parse_from_rfc3339(&ours[..27]).is_ok(), "{ours}");
        // The stock format writes an error's sources as `error.sources=[..]`; ours as a chain.
        let stock = stock.replace(" error.sources=[key refused]", ": key refused");
        assert_eq!(without_timestamp(ours), without_timestamp(&stock));
    }
}

#[test]
fn json_lines_hold_what_tracing_subscribers_own_hold() {
    let (ours, stock) = (Captured::default(), Captured::default());
    let ours_lines = lines_of(subscriber(ours.clone(), true, false, Some("trace")), &ours);
    let stock_lines = without_the_requests_close(lines_of(stock_json(stock.clone()), &stock));
    assert_eq!(ours_lines.len(), 6, "{ours_lines:#?}");
    assert_eq!(ours_lines.len(), stock_lines.len());
    for (ours, stock) in ours_lines.iter().zip(&stock_lines) {
        serde_json::from_str::<NoDuplicateKeys>(ours).unwrap_or_else(|e| panic!("{ours}: {e}"));
        let mut ours: serde_json::Value = serde_json::from_str(ours).unwrap_or_else(|e| panic!("{ours}: {e}"));
        let mut stock: serde_json::Value = serde_json::from_str(stock).unwrap();
        let timestamp = ours["timestamp"].take();
        assert!(
            chrono::DateTime::parse_from_rfc3339(timestamp.as_str().unwrap()).is_ok(),
            "{timestamp}"
        );
        stock["timestamp"].take();
        // The stock format writes an error as its message alone; ours with its sources.
        if stock["fields"]["error"] == "the provider answered HTTP 401" {
            stock["fields"]["error"] = "the provider answered HTTP 401: key refused".into();
        }
        // A span's closing line: the stock `spans` are the spans entered where it closed;
        // ours end with the span that closed, as `span` does.
        if ours["fields"]["message"] == "close" {
            for timing in ["time.busy", "time.idle"] {
                assert!(ours["fields"][timing].is_string(), "{ours}");
                ours["fields"][timing] = stock["fields"][timing].clone();
            }
            let closed = ours["spans"].as_array_mut().unwrap().pop();
            assert_eq!(closed.as_ref(), Some(&ours["span"]));
        }
        assert_eq!(ours, stock);
    }
}

#[test]
fn a_value_with_line_breaks_and_escapes_stays_one_line() {
    let forged = "ok\n2026-12-06T00:00:00.000000Z  INFO svc::access: forged \x1b[2J\u{9b}";
    for json in [false, true] {
        let captured = Captured::default();
        tracing::subscriber::with_default(subscriber(captured.clone(), json, false, None), || {
            let request = tracing::info_span!("request", request_id = %forged);
            let _entered = request.enter();
            tracing::info!(detail = %forged, error = forged, "{forged}");
        });
        let lines = captured.lines();
        assert_eq!(lines.len(), 1, "json: {json}: {lines:#?}");
        assert!(!lines[0].chars().any(char::is_control), "{:?}", lines[0]);
        if json {
            let line: serde_json::Value = serde_json::from_str(&lines[0]).unwrap();
            assert_eq!(line["fields"]["message"], forged);
            assert_eq!(line["fields"]["detail"], forged);
            assert_eq!(line["span"]["request_id"], forged);
        }
    }
}

/// Reads any JSON and fails on an object with a key twice, which `serde_json::Value` would
/// read as its last value.
struct NoDuplicateKeys;

impl<'de> serde::Deserialize<'de> for NoDuplicateKeys {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        deserializer.deserialize_any(NoDuplicateKeys)
    }
}

impl<'de> serde::de::Visitor<'de> for NoDuplicateKeys {
    type Value = NoDuplicateKeys;

    fn expecting(&self, formatter: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        formatter.write_str("any JSON")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<Self, A::Error> {
        let mut keys = std::collections::HashSet::new();
        while let Some(key) = map.next_key::<String>()? {
            if !keys.insert(key.clone()) {
                return Err(serde::de::Error::custom(format!("the key {key:?} twice")));
            }
            map.next_value::<NoDuplicateKeys>()?;
        }
        Ok(self)
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<Self, A::Error> {
        while seq.next_element::<NoDuplicateKeys>()?.is_some() {}
        Ok(self)
    }

    fn visit_str<E>(self, _: &str) -> Result<Self, E> {
        Ok(self)
    }

    fn visit_bool<E>(self, _: bool) -> Result<Self, E> {
        Ok(self)
    }

    fn visit_u64<E>(self, _: u64) -> Result<Self, E> {
        Ok(self)
    }

    fn visit_i64<E>(self, _: i64) -> Result<Self, E> {
        Ok(self)
    }

    fn visit_f64<E>(self, _: f64) -> Result<Self, E> {
        Ok(self)
    }

    fn visit_unit<E>(self) -> Result<Self, E> {
        Ok(self)
    }
}

/// At a terminal the stock coloured format stays, behind the formatting mark.
#[test]
fn a_terminal_gets_the_stock_coloured_lines() {
    let captured = Captured::default();
    tracing::subscriber::with_default(subscriber(captured.clone(), false, true, None), || {
        let request = tracing::info_span!("request", request_id = "at-a-terminal");
        let _entered = request.enter();
        tracing::info!(status = 200_u64, "coloured");
        let stage = tracing::info_span!("stage", status = tracing::field::Empty);
        stage.record("status", 401_u64);
        stage.in_scope(|| {});
    });
    let lines = captured.lines();
    assert_eq!(lines.len(), 2, "the event and the stage's close: {lines:#?}");
    assert!(
        lines[1].contains("close") && lines[1].contains("time.busy") && lines[1].contains("stage"),
        "{:?}",
        lines[1]
    );
    assert_eq!(
        lines[1].matches("401").count(),
        1,
        "a field recorded later, once: {:?}",
        lines[1]
    );
    assert!(lines[0].contains('\u{1b}'), "{:?}", lines[0]);
    assert!(
        lines[0].contains("at-a-terminal") && lines[0].contains("coloured"),
        "{:?}",
        lines[0]
    );
}
