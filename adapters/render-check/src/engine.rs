//! One check in a fresh QuickJS runtime: evaluate the bundle, declare the modules a card
//! provides, evaluate the component module, render its default export.

use std::cell::Cell;
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::{Context, Ctx, Function, Module, Object, Runtime, Value};
use serde_json::{Value as Json, json};
use svc_application::ports::generation::{CompileFinding, RenderCheckInput};
use svc_domain::gadgets::ExportName;
use svc_domain::themes::{self, ThemeMode};

use crate::RenderLimits;

/// The check's JavaScript half, built from `adapters/mount/src/render-check.tsx`.
/// Time allowed to turn a thrown value into text, after the render's own budget.
const DESCRIBE_BUDGET: Duration = Duration::from_millis(500);

pub const RENDER_CHECK_JS: &str = include_str!("../../mount/dist/render-check.js");

/// Name the component module is declared under; the bundle reads error lines by it.
const COMPONENT_MODULE: &str = "svc-component.js";
/// The global the bundle installs.
const REGISTRY: &str = "__svcCheck";
/// Longest excerpt of the props or of a source line quoted in a finding.
const EXCERPT_CHARS: usize = 160;

/// Where the component module was when it threw.
#[derive(Clone, Copy)]
enum Step {
    /// Linking its imports and running its top level.
    Loading,
    Rendering,
}

pub enum Outcome {
    /// The markup of the first frame.
    Rendered(String),
    Threw(CompileFinding),
}

/// Why the check itself could not run.
#[derive(Debug)]
pub struct Fault(String);

impl std::fmt::Display for Fault {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

fn fault(step: &str) -> impl FnOnce(rquickjs::Error) -> Fault + '_ {
    move |error| Fault(format!("{step}: {error}"))
}

pub fn run(input: &RenderCheckInput<'_>, limits: &RenderLimits) -> Result<Outcome, Fault> {
    let runtime = Runtime::new().map_err(fault("creating the runtime"))?;
    runtime.set_memory_limit(limits.memory_bytes);
    runtime.set_max_stack_size(limits.stack_bytes);
    let deadline: Rc<Cell<Option<Instant>>> = Rc::default();
    let interrupted = Rc::new(Cell::new(false));
    {
        let (deadline, interrupted) = (deadline.clone(), interrupted.clone());
        runtime.set_interrupt_handler(Some(Box::new(move || {
            let over = deadline.get().is_some_and(|at| Instant::now() >= at);
            if over {
                interrupted.set(true);
            }
            over
        })));
    }
    let context = Context::full(&runtime).map_err(fault("creating the context"))?;
    context.with(|ctx| {
        ctx.eval::<(), _>(RENDER_CHECK_JS)
            .map_err(|e| Fault(format!("evaluating render-check.js: {}", describe_raw(&ctx, e))))?;
        let check: Object = ctx.globals().get(REGISTRY).map_err(fault("reading the registry"))?;
        let prepare: Function = check.get("prepare").map_err(fault("reading prepare"))?;
        let fixture = ctx
            .json_parse(check_input(input).to_string())
            .map_err(fault("passing the fixture"))?;
        let shims: Vec<Vec<String>> = prepare.call((fixture,)).map_err(fault("preparing the modules"))?;
        for shim in shims {
            let [specifier, source] = <[String; 2]>::try_from(shim)
                .map_err(|_| Fault("prepare returns [specifier, source] pairs".to_owned()))?;
            Module::declare(ctx.clone(), specifier.as_str(), source)
                .map_err(|e| Fault(format!("declaring `{specifier}`: {}", describe_raw(&ctx, e))))?;
        }

        let start = Instant::now();
        deadline.set(Some(start + limits.time_budget));
        let mut step = Step::Loading;
        let attempt = (|| {
            let (module, loaded) = Module::declare(ctx.clone(), COMPONENT_MODULE, input.code)?.eval()?;
            loaded.finish::<()>()?;
            let render: Function = check.get("render")?;
            let namespace = module.namespace()?;
            step = Step::Rendering;
            render.call::<_, String>((namespace,))
        })();
        deadline.set(None);
        let elapsed = start.elapsed();
        match attempt {
            Ok(markup) => {
                tracing::debug!(?elapsed, "the component rendered");
                Ok(Outcome::Rendered(markup))
            }
            Err(_) if interrupted.get() => Ok(Outcome::Threw(CompileFinding {
                message: format!(
                    "rendering the component did not finish within {} s: look for a loop that never \
                     ends, or a state update made during render",
                    limits.time_budget.as_secs_f32()
                ),
                line: None,
            })),
            Err(error) => {
                // Describing the thrown value runs the component's code again (a `toString`, a
                // `message` getter): it gets a short deadline of its own, so it cannot hang.
                deadline.set(Some(Instant::now() + DESCRIBE_BUDGET));
                let finding = thrown(&ctx, &check, step, error, input, limits);
                deadline.set(None);
                Ok(Outcome::Threw(finding))
            }
        }
    })
}

/// The bundle's `prepare` argument: the card state of the first frame.
fn check_input(input: &RenderCheckInput<'_>) -> Json {
    let theme_id = input.theme_id.unwrap_or(themes::DEFAULT_THEME_ID);
    let vars = themes::css_variables(theme_id, ThemeMode::Light)
        .or_else(|| themes::css_variables(themes::DEFAULT_THEME_ID, ThemeMode::Light))
        .unwrap_or_default();
    let packages: Vec<Json> = input
        .gadgets
        .iter()
        .map(|descriptor| {
            let (mut components, mut hooks) = (Vec::new(), Vec::new());
            for export in &descriptor.exports {
                match &export.name {
                    ExportName::Component(name) => components.push(name.clone()),
                    ExportName::Hook(name) => hooks.push(name.clone()),
                }
            }
            json!({ "name": descriptor.package, "components": components, "hooks": hooks })
        })
        .collect();
    json!({
        "props": input.props,
        "contract": input.contract,
        "theme": { "id": theme_id, "mode": "light", "vars": vars },
        "packages": packages,
    })
}

/// A finding from what the component module threw while loading or rendering.
fn thrown<'js>(
    ctx: &Ctx<'js>,
    check: &Object<'js>,
    step: Step,
    error: rquickjs::Error,
    input: &RenderCheckInput<'_>,
    limits: &RenderLimits,
) -> CompileFinding {
    let (message, line) = match error {
        rquickjs::Error::Exception => {
            let value = ctx.catch();
            let described = check
                .get::<_, Function>("describe")
                .and_then(|describe| describe.call::<_, Object>((value.clone(),)))
                .and_then(|d| Ok((d.get::<_, String>("message")?, d.get::<_, Option<u32>>("line")?)));
            described.unwrap_or_else(|_| (exception_text(&value), None))
        }
        other => (other.to_string(), None),
    };
    if message.contains("out of memory") || message.contains("Allocation failed") {
        return CompileFinding {
            message: format!(
                "rendering the component ran out of memory ({} MiB): look for an array, string or \
                 recursion that grows without end",
                limits.memory_bytes >> 20
            ),
            line: None,
        };
    }
    let mut text = match step {
        Step::Loading => format!("loading the component module threw {}", message.trim_end_matches('.')),
        Step::Rendering => format!(
            "rendering the component against the fixture props threw {}",
            message.trim_end_matches('.')
        ),
    };
    if let Some(line) = line {
        let source = input
            .code
            .lines()
            .nth(line.saturating_sub(1) as usize)
            .unwrap_or("")
            .trim();
        text.push_str(&format!(
            " (at line {line} of the compiled module: `{}`)",
            excerpt(source)
        ));
    }
    if let Step::Rendering = step {
        text.push_str(&format!(". useProps() returned {}", excerpt(&input.props.to_string())));
    }
    // The line is the compiled module's, not the TSX source's: it stays in the text.
    CompileFinding {
        message: text,
        line: None,
    }
}

fn excerpt(text: &str) -> String {
    if text.chars().count() <= EXCERPT_CHARS {
        return text.to_owned();
    }
    let cut: String = text.chars().take(EXCERPT_CHARS).collect();
    format!("{cut}…")
}

fn exception_text(value: &Value<'_>) -> String {
    match value.as_exception() {
        Some(exception) => exception.message().unwrap_or_else(|| "an exception".to_owned()),
        None => format!("a non-error value: {value:?}"),
    }
}

fn describe_raw(ctx: &Ctx<'_>, error: rquickjs::Error) -> String {
    match error {
        rquickjs::Error::Exception => {
            let value = ctx.catch();
            let stack = value.as_exception().and_then(|e| e.stack()).unwrap_or_default();
            format!("{} {stack}", exception_text(&value))
        }
        other => other.to_string(),
    }
}
