//! `svc publish` refuses a dirty version, as `cargo publish` does: when the artifact's directory is
//! in a git work tree with uncommitted changes, the published bytes would match no commit.

use std::path::Path;
use std::process::Command;

/// The changed paths `git status --porcelain` lists for the work tree holding `dir`; empty when
/// clean, outside a work tree, or without git.
pub fn uncommitted_changes(dir: &Path) -> Vec<String> {
    let output = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["status", "--porcelain", "--untracked-files=normal"])
        .output();
    match output {
        Ok(out) if out.status.success() => String::from_utf8_lossy(&out.stdout)
            .lines()
            .map(|l| l.get(3..).unwrap_or(l).to_owned())
            .collect(),
        _ => Vec::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn git(dir: &Path, args: &[&str]) {
        let ok = Command::new("git")
            .arg("-C")
            .arg(dir)
            .args(args)
            .output()
            .is_ok_and(|o| o.status.success());
        assert!(ok, "git {args:?}");
    }

    #[test]
    fn a_work_tree_with_changes_is_dirty_and_a_committed_one_is_not() {
        let dir = tempfile::tempdir().unwrap();
        assert!(uncommitted_changes(dir.path()).is_empty(), "not a work tree");
        git(dir.path(), &["init", "-q"]);
        std::fs::write(dir.path().join("chart.js"), "export {}").unwrap();
        assert_eq!(uncommitted_changes(dir.path()), vec!["chart.js".to_owned()]);
        git(dir.path(), &["add", "."]);
        git(
            dir.path(),
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.com",
                "commit",
                "-qm",
                "x",
            ],
        );
        assert!(uncommitted_changes(dir.path()).is_empty());
    }
}
