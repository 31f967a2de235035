//! What the server prints on stdout: the start-up banner, and the pair code that replaces a spent
//! one. A closed stdout (a supervisor that stopped reading) must not take the server down, so
//! write errors are ignored.

use std::io::Write;
use std::path::Path;

use svc_application::services::auth::AuthMode;

use crate::server::Application;

fn print(text: &str) {
    let mut out = std::io::stdout().lock();
    let _ = out.write_all(text.as_bytes()).and_then(|()| out.flush());
}

/// The first line is a contract: `svc <version> listening on http://<bound address>`, the real
/// address (0.0.0.0 when bound to every interface); the public URL follows when it differs.
/// `data_dir` is the deployment's, so the command the banner suggests can be pasted as it is.
pub fn print_banner(app: &Application, data_dir: &Path, public_demo: Option<&str>) {
    let auth = match app.auth_mode {
        AuthMode::DevAllowAll => "--dev-allow-all (any bearer is accepted as `builder`)".to_owned(),
        AuthMode::Strict => format!(
            "strict; mint a bearer with `svc keys mint --data-dir {}`",
            shell_word(&data_dir.display().to_string())
        ),
    };
    let listening = format!("http://{}", app.local_addr);
    let mut banner = format!("svc {} listening on {listening}\n", env!("CARGO_PKG_VERSION"));
    if app.base_url != listening {
        banner.push_str(&format!("  public URL:    {}\n", app.base_url));
    }
    banner.push_str(&format!("  MCP endpoint:  {}/mcp\n", app.base_url));
    if let Some(playground) = &app.playground_url {
        banner.push_str(&format!(
            "  playground:    {playground}  (open it in a browser: recent cards, their clicks, svc_consume)\n"
        ));
    }
    banner.push_str(&format!("  auth:          {auth}\n"));
    if let Some(code) = &app.pair_code {
        banner.push_str(&format!(
            "  pair code:     {code}  (POST {}/_svc/pair {{\"pairCode\":\"{code}\"}} returns a bearer)\n",
            app.base_url
        ));
    }
    if let Some(issuer) = &app.oauth_issuer {
        // Only a strict server has a pair code; an open one takes any bearer as the key.
        let consent = if app.pair_code.is_some() {
            "the pair code or a key"
        } else {
            "any key"
        };
        banner.push_str(&format!(
            "  OAuth issuer:  {issuer}  (consent with {consent} at {issuer}/oauth/authorize)\n"
        ));
    }
    if let Some(line) = public_demo {
        banner.push_str(line);
    }
    print(&banner);
}

/// `word` as one shell word: as it is when it holds only characters no shell reads, else in
/// single quotes (a `'` in it written `'\''`).
fn shell_word(word: &str) -> String {
    let plain = |c: char| c.is_ascii_alphanumeric() || "/._-+:@%,=".contains(c);
    if !word.is_empty() && word.chars().all(plain) {
        word.to_owned()
    } else {
        format!("'{}'", word.replace('\'', r"'\''"))
    }
}

/// A pair code was spent (ten minutes after its first use); this one replaced it.
pub fn announce_pair_code(code: &str) {
    tracing::info!("the pair code was spent; a new one is printed on stdout");
    print(&format!(
        "  pair code:     {code}  (the previous code was spent ten minutes after its first use)\n"
    ));
}

#[cfg(test)]
mod tests {
    use super::shell_word;

    #[test]
    fn a_data_directory_is_printed_as_one_shell_word() {
        assert_eq!(shell_word("/srv/svc-data"), "/srv/svc-data");
        assert_eq!(shell_word("/home/ada/my data"), "'/home/ada/my data'");
        assert_eq!(shell_word("it's"), r"'it'\''s'");
        assert_eq!(shell_word(""), "''");
    }
}
