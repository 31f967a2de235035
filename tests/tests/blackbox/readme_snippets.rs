//! README's "Connect a host" snippets are true: each `<!-- snippet: NAME -->` block parses, its
//! URL is the MCP endpoint the server's banner prints (on the default port, or on the public base
//! URL for the tunnel), and the flags and settings it uses exist.

use std::path::Path;
use std::process::Command;

use serde_json::Value;
use svc_tests::process::ServerProcess;
use svc_tests::temp_dir;

const BINARY: &str = env!("CARGO_BIN_EXE_svc-under-test");
/// README's examples use the default port; a test server listens on a free one.
const README_PORT: &str = "6781";
const TUNNEL: &str = "https://YOUR-TUNNEL.trycloudflare.com";

fn readme() -> String {
    std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../README.md")).expect("read README.md")
}

/// The fenced block right after `<!-- snippet: NAME -->`.
fn snippet(readme: &str, name: &str) -> String {
    let marker = format!("<!-- snippet: {name} -->");
    let after = readme
        .split_once(&marker)
        .unwrap_or_else(|| panic!("README has no {marker}"))
        .1;
    let fence_start = after.find("```").expect("a fenced block follows the marker");
    let body = &after[fence_start..];
    let body = &body[body.find('\n').expect("fence line") + 1..];
    body[..body.find("```").expect("the block is closed")].to_owned()
}

/// The `  MCP endpoint:  <url>` line of a server's banner.
fn banner_endpoint(server: &ServerProcess) -> String {
    server
        .banner()
        .lines()
        .find_map(|line| line.strip_prefix("  MCP endpoint:  "))
        .unwrap_or_else(|| panic!("no MCP endpoint line in {}", server.banner()))
        .trim()
        .to_owned()
}

/// The endpoint a default-port dev server prints, as README writes it.
fn local_endpoint() -> String {
    let data_dir = temp_dir("svc-readme-snippets");
    let server = ServerProcess::start(BINARY, &data_dir, &["--dev-allow-all"]);
    let port = server.base.rsplit(':').next().unwrap().to_owned();
    let endpoint = banner_endpoint(&server).replace(&format!(":{port}/"), &format!(":{README_PORT}/"));
    drop(server);
    let _ = std::fs::remove_dir_all(&data_dir);
    endpoint
}

#[test]
fn the_inspector_and_vs_code_snippets_are_json_naming_the_printed_endpoint() {
    let readme = readme();
    let endpoint = local_endpoint();
    assert_eq!(
        endpoint, "http://127.0.0.1:6781/mcp",
        "the banner's endpoint on the default port"
    );

    let inspector: Value = serde_json::from_str(&snippet(&readme, "inspector")).expect("inspector snippet is JSON");
    let svc = &inspector["mcpServers"]["svc"];
    assert_eq!(svc["type"], "streamable-http");
    assert_eq!(svc["url"], endpoint.as_str());
    assert!(
        readme.contains("--config inspector.json --server svc"),
        "README names the server the file declares"
    );

    let vscode: Value = serde_json::from_str(&snippet(&readme, "vscode")).expect("vscode snippet is JSON");
    let svc = &vscode["servers"]["svc"];
    assert_eq!(svc["type"], "http");
    assert_eq!(svc["url"], endpoint.as_str());
    let header = svc["headers"]["Authorization"]
        .as_str()
        .expect("an Authorization header");
    let input = header
        .strip_prefix("Bearer ${input:")
        .and_then(|rest| rest.strip_suffix('}'))
        .expect("a bearer from an input");
    let declared = vscode["inputs"]
        .as_array()
        .expect("inputs")
        .iter()
        .find(|i| i["id"] == input)
        .unwrap_or_else(|| panic!("the input {input} is declared"));
    assert_eq!(declared["type"], "promptString");
    assert_eq!(declared["password"], true);
}

#[test]
fn the_claude_snippet_uses_real_flags_and_settings_and_the_tunnel_endpoint() {
    let readme = readme();
    let block = snippet(&readme, "claude");
    let command = block.replace("\\\n", " ");
    let serve = command
        .lines()
        .find(|line| line.contains(" serve "))
        .expect("a serve command");
    let help = Command::new(BINARY)
        .args(["serve", "--help"])
        .output()
        .expect("svc serve --help");
    let help = String::from_utf8_lossy(&help.stdout).into_owned();
    // The flags after `serve` (before it: cargo's own, `--release`, `--`).
    let serve_args = serve.split_once(" serve ").expect("serve").1;
    let flags: Vec<&str> = serve_args.split_whitespace().filter(|w| w.starts_with("--")).collect();
    assert!(
        flags.contains(&"--public-base-url") && flags.contains(&"--oauth"),
        "{serve}"
    );
    for flag in &flags {
        assert!(help.contains(flag), "svc serve has no {flag}:\n{help}");
    }
    // Every SVC_ variable is a setting README's table lists.
    for var in serve
        .split_whitespace()
        .filter_map(|w| w.split_once('=').map(|(k, _)| k))
    {
        if var.starts_with("SVC_") {
            assert!(readme.contains(&format!("| `{var}` |")), "{var} is no setting");
        }
    }
    assert!(serve.contains(&format!("--public-base-url {TUNNEL}")), "{serve}");

    // The connector URL README gives is what the server prints behind that public base URL.
    let data_dir = temp_dir("svc-readme-claude");
    let server = ServerProcess::start(
        BINARY,
        &data_dir,
        &["--oauth", "--public-base-url", "https://svc-tunnel.example"],
    );
    let endpoint = banner_endpoint(&server).replace("https://svc-tunnel.example", TUNNEL);
    // The tunnel's requests carry its host: the public URL's host is accepted with nothing else
    // set (the snippet sets no `server.allowed_hosts`), so `/mcp` asks for a bearer (401), not
    // 403 for the host.
    let answer = {
        use std::io::{Read, Write};
        let mut stream = std::net::TcpStream::connect(server.base.trim_start_matches("http://")).unwrap();
        stream
            .write_all(
                b"POST /mcp HTTP/1.1\r\nHost: svc-tunnel.example\r\nContent-Type: application/json\r\n\
                  Content-Length: 2\r\nConnection: close\r\n\r\n{}",
            )
            .unwrap();
        let mut answer = String::new();
        let _ = stream.read_to_string(&mut answer);
        answer
    };
    assert!(answer.starts_with("HTTP/1.1 401"), "{answer}");
    drop(server);
    let _ = std::fs::remove_dir_all(&data_dir);
    assert!(
        readme.contains(&format!("`{endpoint}`")),
        "README names the connector URL {endpoint}"
    );
}
