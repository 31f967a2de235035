//! Files and directories only the server's user may read: the data directory and `keys.json`
//! (the SQLite database is created private by `svc_sql::connect_and_migrate`). The modes are set
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
