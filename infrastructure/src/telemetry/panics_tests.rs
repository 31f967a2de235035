//! The panic hook, installed for the length of one test (hooks are the process's): another test
//! that panics meanwhile still fails, though its message goes to this test's recording hook.

use std::fmt;
use std::sync::{Arc, Mutex};

use super::line_tests::Captured;
use super::{formatting, panics, subscriber};

/// A field whose `Debug` panics: a panic inside the log itself.
struct PanicsWhenFormatted;

impl fmt::Debug for PanicsWhenFormatted {
    fn fmt(&self, _: &mut fmt::Formatter<'_>) -> fmt::Result {
        panic!("formatting a field panicked")
    }
}

type Hook = Box<dyn Fn(&std::panic::PanicHookInfo<'_>) + Sync + Send + 'static>;

/// Puts Rust's own hook back when the test ends, failed or not.
struct RustsOwnHook(Option<Hook>);

impl Drop for RustsOwnHook {
    fn drop(&mut self) {
        if let Some(hook) = self.0.take() {
            drop(std::panic::take_hook());
            std::panic::set_hook(hook);
        }
    }
}

#[test]
fn a_panic_is_an_error_line_of_the_log_inside_the_request_that_panicked() {
    let printed: Arc<Mutex<Vec<String>>> = Arc::default();
    let restore = RustsOwnHook(Some(std::panic::take_hook()));
    let recorder = printed.clone();
    std::panic::set_hook(Box::new(move |info| recorder.lock().unwrap().push(info.to_string())));
    let writer_running = Arc::new(std::sync::atomic::AtomicBool::new(true));
    panics::log_panics(writer_running.clone());

    let captured = Captured::default();
    let log = captured.clone();
    let stopping = writer_running.clone();
    std::thread::Builder::new()
        .name("svc-test-panics".into())
        .spawn(move || {
            tracing::subscriber::with_default(subscriber(log, true, false, None), || {
                let request = tracing::info_span!("request", request_id = "panicking-7");
                let _entered = request.enter();
                tracing::info!("before the panic");
                let _ = std::panic::catch_unwind(|| panic!("boom {}", 42));
                let _ = std::panic::catch_unwind(|| tracing::info!(value = ?PanicsWhenFormatted, "not written"));
                // As a global subscriber sees it: tracing dispatches the hook's event from within
                // the one being formatted, so the mark is what keeps the hook out.
                let _ = std::panic::catch_unwind(|| formatting::while_formatting(|| panic!("marked as formatting")));
                assert!(!formatting::formatting(), "the mark is lifted once the panic unwound");
                // Once the log's writer has stopped, a panic goes to the hook before.
                stopping.store(false, std::sync::atomic::Ordering::Release);
                let _ = std::panic::catch_unwind(|| panic!("after the writer stopped"));
            });
        })
        .unwrap()
        .join()
        .unwrap();
    drop(restore);

    let lines: Vec<serde_json::Value> = captured
        .lines()
        .iter()
        .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}")))
        .collect();
    let messages: Vec<&str> = lines
        .iter()
        .filter_map(|line| line["fields"]["message"].as_str())
        .collect();
    assert_eq!(messages, ["before the panic", "panicked: boom 42"], "{lines:#?}");
    let panicked = &lines[1];
    assert_eq!(panicked["level"], "ERROR");
    assert_eq!(panicked["target"], "svc::panic");
    assert_eq!(panicked["fields"]["thread"], "svc-test-panics");
    assert!(
        panicked["fields"]["location"]
            .as_str()
            .unwrap()
            .contains("panics_tests.rs"),
        "{panicked}"
    );
    assert_eq!(panicked["span"]["request_id"], "panicking-7");

    let printed = printed.lock().unwrap();
    assert!(
        !printed.iter().any(|text| text.contains("boom 42")),
        "logged, not printed: {printed:?}"
    );
    for inside_the_log in [
        "formatting a field panicked",
        "marked as formatting",
        "after the writer stopped",
    ] {
        assert!(
            printed.iter().any(|text| text.contains(inside_the_log)),
            "a panic inside the log goes to the hook before: {printed:?}"
        );
    }
}
