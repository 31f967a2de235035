//! Files that hold secrets or everything the server stores are readable by their owner only:
//! the data directory the server creates is 0700, `keys.json` and the SQLite database with its
//! `-wal` and `-shm` files and the generated `ws_secret` are 0600, whatever the process umask.
#![cfg(unix)]

use std::os::unix::fs::PermissionsExt;
use std::path::Path;

use serde_json::json;
use svc_tests::{Auth, Backend, TestApp, temp_dir};

fn mode(path: &Path) -> u32 {
    std::fs::metadata(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .permissions()
        .mode()
        & 0o777
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_data_dir_keys_file_and_database_are_private() {
    let data_dir = temp_dir("svc-perms").join("fresh").join("data");
    let configured = data_dir.clone();
    let app = TestApp::spawn_configured("file_permissions", Backend::Sqlite, Auth::DevAllowAll, move |s| {
        s.server.data_dir = configured;
        // None configured: the server generates one and keeps it in the data directory.
        s.server.ws_secret = svc::settings::SecretList::Many(Vec::new());
    })
    .await
    .unwrap();
    // A write, so the WAL and its index exist.
    app.tool_ok(
        "svc_handshake",
        json!({ "intent": "perm card", "blueprintDraft": { "contract": { "propsSpec": { "type": "object" } } } }),
    )
    .await;
    let (_, _) = svc::keys_file::KeysFile::in_data_dir(&data_dir)
        .mint(Some("laptop".into()), chrono::Utc::now())
        .unwrap();

    assert_eq!(mode(&data_dir), 0o700, "the data directory");
    for file in ["svc.db", "svc.db-wal", "svc.db-shm", "keys.json", "ws_secret"] {
        assert_eq!(mode(&data_dir.join(file)), 0o600, "{file}");
    }
}
