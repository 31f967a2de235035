//! The resource URIs `resources/read` answers (Document 1, Endpoints): the mount shell
//! `ui://svc/render`, a render's `ui://svc/render/<sessionId>`, and its epoch-pinned form
//! `ui://svc/render/<sessionId>#<N>`.
//!
//! The server writes `N` in plain decimal (no sign, no leading zero) and hosts echo the URI they
//! were given, so that is the only spelling accepted: every document has one name, and the name
//! can key the document's template. `#01` or `#+1` would otherwise be the same epoch under a
//! new key, each a fresh build of the document.

/// A URI `resources/read` may be asked for, read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ResourceUri<'u> {
    /// `ui://svc/render`.
    Shell,
    /// `ui://svc/render/<sessionId>`, pinned to an epoch by `#<N>`.
    Render { session_id: &'u str, epoch: Option<u32> },
}

/// Why a URI names nothing `resources/read` serves.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum UriRefusal {
    /// Not a URI of ours at all.
    NotOurs,
    /// A render's locator whose epoch is not a number as the server writes one.
    Malformed,
}

pub(crate) const SHELL_URI: &str = "ui://svc/render";
const RENDER_URI_PREFIX: &str = "ui://svc/render/";

impl<'u> ResourceUri<'u> {
    pub(crate) fn parse(uri: &'u str) -> Result<Self, UriRefusal> {
        if uri == SHELL_URI {
            return Ok(Self::Shell);
        }
        let locator = uri.strip_prefix(RENDER_URI_PREFIX).ok_or(UriRefusal::NotOurs)?;
        let (session_id, epoch) = match locator.split_once('#') {
            Some((session_id, epoch)) => (session_id, Some(canonical_epoch(epoch).ok_or(UriRefusal::Malformed)?)),
            None => (locator, None),
        };
        Ok(Self::Render { session_id, epoch })
    }
}

/// `text` as an epoch when it is one written as the server writes it: ASCII digits, without a
/// sign or a leading zero (`0` alone is zero), within `u32`.
fn canonical_epoch(text: &str) -> Option<u32> {
    let digits_only = !text.is_empty() && text.bytes().all(|b| b.is_ascii_digit());
    let leading_zero = text.len() > 1 && text.starts_with('0');
    if !digits_only || leading_zero {
        return None;
    }
    text.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render(session_id: &str, epoch: Option<u32>) -> Result<ResourceUri<'_>, UriRefusal> {
        Ok(ResourceUri::Render { session_id, epoch })
    }

    #[test]
    fn each_uri_reads_as_its_row_says() {
        let rows = [
            ("ui://svc/render", Ok(ResourceUri::Shell)),
            ("ui://svc/render/s1", render("s1", None)),
            ("ui://svc/render/s1#1", render("s1", Some(1))),
            ("ui://svc/render/s1#0", render("s1", Some(0))),
            ("ui://svc/render/s1#10", render("s1", Some(10))),
            ("ui://svc/render/s1#4294967295", render("s1", Some(u32::MAX))),
            // Other spellings of an epoch: the same number, another name.
            ("ui://svc/render/s1#01", Err(UriRefusal::Malformed)),
            ("ui://svc/render/s1#001", Err(UriRefusal::Malformed)),
            ("ui://svc/render/s1#00", Err(UriRefusal::Malformed)),
            ("ui://svc/render/s1#+1", Err(UriRefusal::Malformed)),
            ("ui://svc/render/s1#-0", Err(UriRefusal::Malformed)),
            ("ui://svc/render/s1# 1", Err(UriRefusal::Malformed)),
            ("ui://svc/render/s1#1 ", Err(UriRefusal::Malformed)),
            ("ui://svc/render/s1#١", Err(UriRefusal::Malformed)),
            // Not epochs at all.
            ("ui://svc/render/s1#", Err(UriRefusal::Malformed)),
            ("ui://svc/render/s1#one", Err(UriRefusal::Malformed)),
            ("ui://svc/render/s1#1#2", Err(UriRefusal::Malformed)),
            ("ui://svc/render/s1#4294967296", Err(UriRefusal::Malformed)),
            ("ui://svc/other", Err(UriRefusal::NotOurs)),
            ("ui://svc/render2", Err(UriRefusal::NotOurs)),
            ("https://example.com/", Err(UriRefusal::NotOurs)),
        ];
        for (uri, read) in rows {
            assert_eq!(ResourceUri::parse(uri), read, "{uri}");
        }
    }

    /// Every epoch has exactly one accepted spelling, the one the server writes (`{n}`).
    #[test]
    fn an_epoch_reads_only_as_the_server_writes_it() {
        for n in [0, 1, 2, 9, 10, 99, 100, 65_536, 1_000_000_007, u32::MAX] {
            let written = format!("ui://svc/render/s#{n}");
            assert_eq!(ResourceUri::parse(&written), render("s", Some(n)));
            for other in [format!("0{n}"), format!("00{n}"), format!("+{n}"), format!("+0{n}")] {
                let uri = format!("ui://svc/render/s#{other}");
                assert_eq!(ResourceUri::parse(&uri), Err(UriRefusal::Malformed), "{uri}");
            }
        }
    }
}
