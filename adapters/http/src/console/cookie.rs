//! The console's session cookie: `HttpOnly` (never readable from script), `SameSite=Lax`,
//! `Secure` when the public URL is https, scoped to `/console`.

use poem::Request;

pub const NAME: &str = "svc_console";

/// The cookie that carries a new session's secret for `max_age_seconds`.
pub fn set(secret: &str, max_age_seconds: i64, secure: bool) -> String {
    let secure = if secure { "; Secure" } else { "" };
    format!("{NAME}={secret}; HttpOnly; SameSite=Lax; Path=/console; Max-Age={max_age_seconds}{secure}")
}

/// The cookie that makes the browser forget the session.
pub fn clear(secure: bool) -> String {
    set("", 0, secure)
}

/// The session secret the request carries, if any.
pub fn read(req: &Request) -> Option<String> {
    req.headers()
        .get_all("cookie")
        .iter()
        .filter_map(|value| value.to_str().ok())
        .flat_map(|value| value.split(';'))
        .filter_map(|pair| pair.trim().split_once('='))
        .find(|(name, _)| *name == NAME)
        .map(|(_, secret)| secret.trim().to_owned())
        .filter(|secret| !secret.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_secret_is_read_among_other_cookies() {
        let req = Request::builder()
            .header("cookie", "theme=dark; svc_console=abc123; other=1")
            .finish();
        assert_eq!(read(&req).as_deref(), Some("abc123"));
        let none = Request::builder().header("cookie", "svc_consolex=1").finish();
        assert_eq!(read(&none), None);
    }

    #[test]
    fn the_cookie_is_http_only_lax_and_secure_only_behind_tls() {
        let plain = set("s", 60, false);
        assert!(plain.contains("HttpOnly") && plain.contains("SameSite=Lax") && plain.contains("Path=/console"));
        assert!(!plain.contains("Secure"));
        assert!(set("s", 60, true).ends_with("; Secure"));
        assert!(clear(false).contains("Max-Age=0"));
    }
}
