//! The columns a registry search narrows versions by, written with each version (and by the
//! migration that added them), so a search reads the rows it answers and parses nothing else:
//!
//! - `precedence_key`: the version's SemVer precedence as sortable text, so a package's latest
//!   version is the one no other version of it outranks (`SemanticVersion::precedence_key`);
//! - `search_text`: the lowercased scope, name, description and tags, one per line, for `q`;
//! - `facets`: one line per tag (`tag:x`) and hook (`hook:x`), each line between newlines.
//!
//! The `LIKE` patterns over them are loose where a backend's `LIKE` ignores ASCII case (SQLite):
//! the service checks every hit exactly.

use serde_json::Value;
use svc_domain::artifact::{ArtifactIdentity, ArtifactManifest};

/// The character that makes the next `%`, `_` or itself literal in a pattern; not a backslash,
/// which MySQL string literals would take for their own escape.
pub(crate) const LIKE_ESCAPE: char = '!';

#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SearchColumns {
    pub precedence_key: String,
    pub search_text: String,
    pub facets: String,
    /// The manifest's description (`descriptions.rs`), as a search answers it.
    pub description: String,
}

impl SearchColumns {
    /// The columns of a stored row. A row whose identity no longer parses (never stored by
    /// publish) still gets columns, so keying every row ends: its key sorts below every other
    /// and it is found by its scope and name only.
    pub(crate) fn of_stored(scope: &str, name: &str, version: &str, manifest: &Value) -> Self {
        match ArtifactIdentity::parse(scope, name, version) {
            Ok(identity) => Self::of(&identity, manifest),
            Err(_) => Self::from_parts(String::new(), scope, name, None),
        }
    }

    /// The columns of a version with this identity and stored manifest. A manifest that does not
    /// parse (never stored by publish) is found by its scope and name only.
    pub(crate) fn of(identity: &ArtifactIdentity, manifest: &Value) -> Self {
        Self::from_parts(
            identity.version.precedence_key(),
            identity.scope.as_str(),
            identity.name.as_str(),
            ArtifactManifest::parse(manifest).ok().as_ref(),
        )
    }

    fn from_parts(precedence_key: String, scope: &str, name: &str, manifest: Option<&ArtifactManifest>) -> Self {
        let (description, tags, hooks) = match manifest {
            Some(manifest) => (
                manifest.description.as_str(),
                manifest.tags.as_slice(),
                manifest.hooks(),
            ),
            None => ("", &[][..], &[][..]),
        };
        let text: Vec<String> = [scope, name, description]
            .into_iter()
            .chain(tags.iter().map(String::as_str))
            .map(str::to_lowercase)
            .collect();
        let facet_lines: String = tags
            .iter()
            .map(|tag| facet("tag", tag))
            .chain(hooks.iter().map(|hook| facet("hook", hook)))
            .collect();
        Self {
            precedence_key,
            search_text: text.join("\n"),
            facets: format!("\n{facet_lines}"),
            description: description.to_owned(),
        }
    }
}

/// One facet line; `facets` starts with a newline, so each line sits between two.
fn facet(name: &str, value: &str) -> String {
    format!("{name}:{value}\n")
}

/// A `LIKE` pattern for text containing `needle`.
pub(crate) fn containing(needle: &str) -> String {
    format!("%{}%", literal(needle))
}

/// A `LIKE` pattern for facets holding the line `name:value`.
pub(crate) fn with_facet(name: &str, value: &str) -> String {
    format!("%\n{}%", literal(&facet(name, value)))
}

fn literal(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if matches!(c, '%' | '_') || c == LIKE_ESCAPE {
            out.push(LIKE_ESCAPE);
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn patterns_make_wildcards_literal() {
        assert_eq!(containing("50%_!x"), "%50!%!_!!x%");
        assert_eq!(with_facet("tag", "a_b"), "%\ntag:a!_b\n%");
    }

    #[test]
    fn an_unparsable_manifest_is_found_by_scope_and_name() {
        let identity = ArtifactIdentity::parse("@acme", "chart", "1.0.0").unwrap();
        let columns = SearchColumns::of(&identity, &json!({ "not": "a manifest" }));
        assert_eq!(columns.search_text, "@acme\nchart\n");
        assert_eq!(columns.facets, "\n");
        assert_eq!(columns.precedence_key, identity.version.precedence_key());
    }
}
