//! No tool name is written twice: outside tests and docs, each registered tool's name appears
//! as a string literal in exactly one place of the workspace's Rust sources (its definition);
//! everything else refers to the tool's `NAME`. Test code (`tests/` directories, `tests.rs`
//! files, and everything after a file's `#[cfg(test)]`) may spell names out. The mount runtime
//! (TypeScript) is a client of the wire, not a definition, and is not scanned.

use std::path::{Path, PathBuf};

use crate::mcp::agent_tools::AGENT_TOOLS;
use crate::ops::tools::OPS_TOOLS;

fn workspace_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .ancestors()
        .nth(2)
        .expect("adapters/http sits two levels below the workspace root")
        .to_path_buf()
}

/// The non-test Rust sources of the workspace's crates.
fn sources(dir: &Path, out: &mut Vec<(PathBuf, String)>) {
    for entry in std::fs::read_dir(dir).expect("readable source tree") {
        let path = entry.expect("entry").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if path.is_dir() {
            if !matches!(name, "tests" | "target" | "node_modules" | "fixtures" | "benches") {
                sources(&path, out);
            }
        } else if name.ends_with(".rs") && name != "tests.rs" {
            let text = std::fs::read_to_string(&path).expect("utf-8 source");
            let production = text.split("#[cfg(test)]").next().unwrap_or_default().to_owned();
            out.push((path, production));
        }
    }
}

#[test]
fn every_tool_name_is_written_once() {
    let root = workspace_root();
    let mut files = Vec::new();
    for krate in ["domain", "application", "adapters", "infrastructure"] {
        sources(&root.join(krate), &mut files);
    }
    assert!(files.len() > 50, "the scan found the sources ({} files)", files.len());
    let names = AGENT_TOOLS
        .iter()
        .map(|t| t.name())
        .chain(OPS_TOOLS.iter().map(|t| t.name()));
    let mut duplicated = Vec::new();
    for name in names {
        let literal = format!("\"{name}\"");
        let places: Vec<String> = files
            .iter()
            .filter(|(_, text)| text.contains(&literal))
            .map(|(path, text)| format!("{} ({}x)", path.display(), text.matches(&literal).count()))
            .collect();
        let count: usize = files.iter().map(|(_, text)| text.matches(&literal).count()).sum();
        if count != 1 {
            duplicated.push(format!("{name}: {places:?}"));
        }
    }
    assert!(
        duplicated.is_empty(),
        "tool names written more than once (or never): {duplicated:#?}"
    );
}
