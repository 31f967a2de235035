//! Reading a gadget bundle's exports and imports for the registry's conformance check, in a
//! process of its own when it is long. oxc's parser recurses once per nesting level with no
//! limit of its own, and a level can be one byte: a publisher's 6 MiB of `(` would need gigabytes
//! of stack, and a thread's stack overflowing aborts the whole process. No size of stack can be
//! promised for a bundle of that length, and no scan before the parse can tell how deep it nests
//! (a `)` in a string or a regular expression looks like a real one), so a long bundle is parsed
//! by `svc registry inspect-bundle`, whose abort is only its own.

use std::io::{Read, Write};
use std::path::PathBuf;
use std::process::{Child, Command, ExitStatus, Stdio};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};
use svc_application::ports::generation::{CompileFailure, CompileFinding};
use svc_application::ports::registry::{EsModuleShape, ModuleInspector};
use svc_compiler::{IN_PROCESS_MODULE_BYTES, OxcModuleInspector, inspect_on_stack};

/// The child's parse stack, as the compiler's: mapped as it is touched. Ordinary code nests a
/// few dozen levels; a bundle that needs more than this is refused (the child ends).
const CHILD_STACK_BYTES: usize = 256 << 20;
/// How long a child may take, its input included (a 6 MiB bundle parses in well under a second).
const CHILD_DEADLINE: Duration = Duration::from_secs(30);
/// Findings the child reports at most (a garbled bundle can have thousands).
const MAX_FINDINGS: usize = 20;

/// The registry's [`ModuleInspector`]: short bundles in this process, long ones in a child.
pub struct IsolatedModuleInspector {
    program: PathBuf,
    args: Vec<String>,
    deadline: Duration,
}

impl IsolatedModuleInspector {
    /// Parses long bundles with `program registry inspect-bundle` (`program` is `svc`).
    pub fn new(program: PathBuf) -> Self {
        Self {
            program,
            args: vec!["registry".into(), "inspect-bundle".into()],
            deadline: CHILD_DEADLINE,
        }
    }

    /// The running program (`svc`) as the child.
    pub fn of_this_program() -> Result<Self, String> {
        std::env::current_exe()
            .map(Self::new)
            .map_err(|e| format!("cannot find this program to parse bundles with: {e}"))
    }

    fn in_child(&self, javascript: &str) -> Result<EsModuleShape, CompileFailure> {
        let mut child = Command::new(&self.program)
            .args(&self.args)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .map_err(|e| finding(format!("the bundle could not be checked: no parser process ({e})")))?;
        // Written and read on threads of their own, so that the deadline holds whatever the
        // child does with its pipes.
        let writer = child.stdin.take().map(|mut stdin| {
            let input = javascript.as_bytes().to_vec();
            std::thread::Builder::new().spawn(move || {
                let _ = stdin.write_all(&input);
            })
        });
        let reader = child.stdout.take().map(|mut stdout| {
            std::thread::Builder::new().spawn(move || {
                let mut answer = String::new();
                let _ = stdout.read_to_string(&mut answer);
                answer
            })
        });
        // The writer is not waited for: it ends when the child's end of the pipe closes.
        drop(writer);
        let Some(status) = wait_until(&mut child, Instant::now() + self.deadline) else {
            return Err(finding(format!(
                "the bundle could not be parsed within {} s",
                self.deadline.as_secs()
            )));
        };
        let answer = match reader {
            Some(Ok(reader)) => reader.join().unwrap_or_default(),
            _ => String::new(),
        };
        match status {
            status if ended_by_a_signal(status) => Err(finding(
                "the bundle could not be parsed: it nests deeper than the parser can follow".to_owned(),
            )),
            status => match serde_json::from_str::<Inspected>(&answer) {
                Ok(inspected) if status.success() => inspected.into_result(),
                _ => Err(finding(format!(
                    "the bundle could not be checked: the parser process failed ({status})"
                ))),
            },
        }
    }
}

/// The child's status, or `None` once `deadline` passed (the child is then killed and reaped).
fn wait_until(child: &mut Child, deadline: Instant) -> Option<ExitStatus> {
    loop {
        match child.try_wait() {
            Ok(Some(status)) => return Some(status),
            Ok(None) if Instant::now() < deadline => std::thread::sleep(Duration::from_millis(5)),
            _ => {
                let _ = child.kill();
                let _ = child.wait();
                return None;
            }
        }
    }
}

/// A stack overflow ends the child with SIGSEGV or SIGABRT (Rust's handler aborts).
fn ended_by_a_signal(status: ExitStatus) -> bool {
    use std::os::unix::process::ExitStatusExt;
    status.signal().is_some()
}

impl ModuleInspector for IsolatedModuleInspector {
    fn inspect(&self, javascript: &str) -> Result<EsModuleShape, CompileFailure> {
        if javascript.len() <= IN_PROCESS_MODULE_BYTES {
            return OxcModuleInspector.inspect(javascript);
        }
        self.in_child(javascript)
    }
}

/// What the child writes on stdout: the module's shape, or the parser's findings.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
enum Inspected {
    Shape { exports: Vec<String>, imports: Vec<String> },
    Findings(Vec<(String, Option<u32>)>),
}

impl Inspected {
    fn of(result: Result<EsModuleShape, CompileFailure>) -> Self {
        match result {
            Ok(shape) => Self::Shape {
                exports: shape.exports,
                imports: shape.imports,
            },
            Err(failure) => Self::Findings(
                failure
                    .findings
                    .into_iter()
                    .take(MAX_FINDINGS)
                    .map(|f| (f.message, f.line))
                    .collect(),
            ),
        }
    }

    fn into_result(self) -> Result<EsModuleShape, CompileFailure> {
        match self {
            Self::Shape { exports, imports } => Ok(EsModuleShape { exports, imports }),
            Self::Findings(findings) => Err(CompileFailure {
                findings: findings
                    .into_iter()
                    .map(|(message, line)| CompileFinding { message, line })
                    .collect(),
                over_budget: None,
            }),
        }
    }
}

fn finding(message: String) -> CompileFailure {
    CompileFailure {
        findings: vec![CompileFinding { message, line: None }],
        over_budget: None,
    }
}

/// `svc registry inspect-bundle`: the bundle on stdin, its shape or findings as JSON on stdout.
pub fn inspect_bundle_command() -> Result<(), String> {
    let mut javascript = String::new();
    let inspected = match std::io::stdin().read_to_string(&mut javascript) {
        Ok(_) => Inspected::of(inspect_on_stack(&javascript, CHILD_STACK_BYTES)),
        Err(_) => Inspected::Findings(vec![("the bundle is not UTF-8 text".to_owned(), None)]),
    };
    serde_json::to_writer(std::io::stdout().lock(), &inspected).map_err(|e| format!("cannot write the answer: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A bundle long enough to go to the child.
    fn long_bundle() -> String {
        format!(
            "export const useLong = 1;\n// {}\n",
            "x".repeat(IN_PROCESS_MODULE_BYTES)
        )
    }

    fn shell(script: &str, deadline: Duration) -> IsolatedModuleInspector {
        IsolatedModuleInspector {
            program: PathBuf::from("/bin/sh"),
            args: vec!["-c".into(), script.into()],
            deadline,
        }
    }

    fn message(result: Result<EsModuleShape, CompileFailure>) -> String {
        result.unwrap_err().findings[0].message.clone()
    }

    #[test]
    fn a_child_that_answers_gives_the_shape_it_wrote() {
        let answer = serde_json::to_string(&Inspected::Shape {
            exports: vec!["useLong".into()],
            imports: vec!["react".into()],
        })
        .unwrap();
        let child = shell(&format!("cat > /dev/null; printf '%s' '{answer}'"), CHILD_DEADLINE);
        let shape = child.inspect(&long_bundle()).unwrap();
        assert_eq!(
            (shape.exports, shape.imports),
            (vec!["useLong".into()], vec!["react".into()])
        );
    }

    #[test]
    fn a_child_ended_by_a_signal_is_a_bundle_too_deep() {
        let found = message(shell("kill -SEGV $$", CHILD_DEADLINE).inspect(&long_bundle()));
        assert!(found.contains("nests deeper"), "{found}");
    }

    #[test]
    fn a_child_that_fails_otherwise_is_a_failed_check() {
        for script in ["exit 3", "cat > /dev/null; echo not-json"] {
            let found = message(shell(script, CHILD_DEADLINE).inspect(&long_bundle()));
            assert!(found.contains("the parser process failed"), "{script}: {found}");
        }
    }

    /// Neither reading its input nor ending: killed at the deadline, whatever the pipes hold.
    #[test]
    fn a_child_that_stalls_is_killed_at_the_deadline() {
        let started = Instant::now();
        let found = message(shell("exec sleep 60", Duration::from_millis(300)).inspect(&long_bundle()));
        assert!(found.contains("within"), "{found}");
        assert!(started.elapsed() < Duration::from_secs(30), "{:?}", started.elapsed());
    }

    #[test]
    fn a_short_bundle_is_read_in_this_process() {
        let child = shell("exit 3", CHILD_DEADLINE);
        let shape = child.inspect("export const useShort = 1;\n").unwrap();
        assert_eq!(shape.exports, vec!["useShort".to_owned()]);
    }
}
