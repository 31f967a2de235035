//! Files and directories only the server's user may read: the data directory, `keys.json` and the
//! kept `ws_secret` (the SQLite database is created private by `svc_sql::connect_and_migrate`,
//! which cannot reach this crate). The modes are set
//! at creation, so no umask can widen them.

use std::io;
use std::path::Path;

/// Creates `dir` and any missing parents as 0700; an existing directory keeps its mode.
pub fn create_private_dir(dir: &Path) -> io::Result<()> {
    let mut builder = std::fs::DirBuilder::new();
    builder.recursive(true);
    #[cfg(unix)]
    std::os::unix::fs::DirBuilderExt::mode(&mut builder, 0o700);
    builder.create(dir)
}

/// Writes `bytes` to a new file `path` (replacing one left behind) that is 0600 from the start.
pub fn write_private(path: &Path, bytes: &[u8]) -> io::Result<()> {
    use std::io::Write;
    // A leftover file would keep its old mode through `truncate`: start from none.
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => return Err(e),
        _ => {}
    }
    let mut options = std::fs::OpenOptions::new();
    options.write(true).create_new(true);
    #[cfg(unix)]
    std::os::unix::fs::OpenOptionsExt::mode(&mut options, 0o600);
    let mut file = options.open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

/// Puts `bytes` at `path` (0600) unless a file is already there, in which case `path` is left
/// alone and `false` comes back. The file appears whole or not at all (written beside, then
/// hard-linked into place, which fails rather than replaces), so a crash or a full disk never
/// leaves an empty file that a later start would trust; two racing writers agree on one.
pub fn publish_private_once(path: &Path, bytes: &[u8]) -> io::Result<bool> {
    let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("private");
    let staged = path.with_file_name(format!(".{name}.{}.staged", std::process::id()));
    write_private(&staged, bytes)?;
    let linked = std::fs::hard_link(&staged, path);
    std::fs::remove_file(&staged).ok();
    match linked {
        Ok(()) => Ok(true),
        Err(e) if e.kind() == io::ErrorKind::AlreadyExists => Ok(false),
        Err(e) => Err(e),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(name: &str) -> std::path::PathBuf {
        let dir = std::env::temp_dir().join(format!("svc-private-{name}-{}", uuid::Uuid::new_v4().simple()));
        create_private_dir(&dir).unwrap();
        dir
    }

    #[test]
    fn published_once_whole_and_private_then_left_alone() {
        let dir = scratch("once");
        let path = dir.join("secret");
        assert!(publish_private_once(&path, b"first").unwrap());
        assert!(
            !publish_private_once(&path, b"second").unwrap(),
            "an existing file is kept"
        );
        assert_eq!(std::fs::read(&path).unwrap(), b"first");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
            assert_eq!(mode, 0o600);
        }
        let leftovers: Vec<_> = std::fs::read_dir(&dir)
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(leftovers.len(), 1, "no staged file left behind: {leftovers:?}");
        std::fs::remove_dir_all(dir).ok();
    }

    #[test]
    fn a_failed_write_leaves_no_file_at_the_path() {
        let dir = scratch("fail");
        let path = dir.join("missing-parent").join("secret");
        assert!(publish_private_once(&path, b"x").is_err());
        assert!(!path.exists());
        std::fs::remove_dir_all(dir).ok();
    }
}
