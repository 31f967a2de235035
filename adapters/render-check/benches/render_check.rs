//! Time of one headless render check (a fresh QuickJS engine, the bundled React and hooks, one
//! render of the component), against the compile-and-check step every generation already pays
//! for the same component (oxc), measured in the same run.
//!
//! Run: `cargo bench -p svc-render-check --bench render_check` (release profile). Figures go to
//! BENCHMARKS.md. Medians and the 90th percentile over `SAMPLES` runs; the machine is noisy, so
//! read the ratio.

use std::time::{Duration, Instant};

use serde_json::json;
use svc_application::ports::generation::{Compiler, RenderCheck, RenderCheckInput};
use svc_compiler::OxcCompiler;
use svc_render_check::QuickJsRenderCheck;

const SAMPLES: usize = 60;

/// A typical generated card: props, a stream, a context slot and an action.
const CARD: &str = r#"
import { useProps, useStream, useContextSlot, useAction } from "@svc/gadgets";
export default function OrderCard() {
  const { title, items } = useProps<{ title: string; items: { name: string; qty: number }[] }>();
  const log = useStream<string>("log");
  const [tab, setTab] = useContextSlot<string>("tab");
  const approve = useAction("approve");
  return (
    <section style={{ color: "var(--svc-color-fg)" }}>
      <h2>{title}</h2>
      <nav><button onClick={() => setTab("lines")}>{tab}</button></nav>
      <ul>{items.map((item) => <li key={item.name}>{item.name} x {item.qty}</li>)}</ul>
      <ol>{log.items.map((line, i) => <li key={i}>{line}</li>)}</ol>
      <button onClick={() => approve({ note: "ok" })}>Approve</button>
    </section>
  );
}
"#;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn measure(mut run: impl FnMut()) -> (Duration, Duration) {
    run(); // warm-up
    let mut samples: Vec<Duration> = (0..SAMPLES)
        .map(|_| {
            let started = Instant::now();
            run();
            started.elapsed()
        })
        .collect();
    samples.sort();
    (percentile(&samples, 0.5), percentile(&samples, 0.9))
}

fn main() {
    let compiler = OxcCompiler::new();
    let allowed = vec!["@svc/gadgets".to_owned()];
    let code = compiler.compile(CARD, &allowed).expect("the card compiles").code;
    let contract = json!({
        "propsSpec": { "type": "object" },
        "actionSpec": { "approve": { "schema": { "type": "object" } } },
        "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } },
        "contextSpec": { "tab": { "schema": { "type": "string" }, "default": "summary" } },
    });
    let props =
        json!({ "title": "Order 42", "items": [{ "name": "bolts", "qty": 12 }, { "name": "nuts", "qty": 30 }] });
    let check = QuickJsRenderCheck::default();
    let input = RenderCheckInput {
        code: &code,
        props: &props,
        contract: &contract,
        gadgets: &[],
        theme_id: None,
    };

    let (compile_p50, compile_p90) = measure(|| {
        compiler.compile(CARD, &allowed).expect("the card compiles");
    });
    let (check_p50, check_p90) = measure(|| {
        check.render(&input).expect("the card renders");
    });
    println!("samples per figure: {SAMPLES}");
    println!("compile and check (oxc, the peer): p50 {compile_p50:?}, p90 {compile_p90:?}");
    println!("render check (QuickJS):            p50 {check_p50:?}, p90 {check_p90:?}");
    println!(
        "render check / compile, p50: {:.1}x",
        check_p50.as_secs_f64() / compile_p50.as_secs_f64()
    );
}
