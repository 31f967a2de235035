//! The bodies of routes that take no credential (the sign-in, sign-up and reset forms, OAuth
//! consent, registration and token, the console's sign-in, the pair-code exchange) count against
//! a budget of their own (`[connections] unauthenticated_body_bytes_in_flight_mib`), not the one
//! `/mcp` and `/ops` read theirs under: anyone may send those bodies, slowly and from many
//! addresses, and holding that budget then refuses only those routes (503 `SERVER_BUSY`), while
//! authenticated callers keep reading theirs.

use super::guarded_body::BodyBudget;

#[derive(Debug, Clone)]
pub struct UnauthenticatedBodies {
    pub budget: BodyBudget,
    /// The routes' path prefixes, each a whole number of segments; empty: none (the registry).
    pub paths: &'static [&'static str],
}

impl UnauthenticatedBodies {
    /// Whether a request to `path` is one of those routes'.
    pub fn serves(&self, path: &str) -> bool {
        self.paths.iter().any(|prefix| {
            path.strip_prefix(prefix)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_prefix_matches_whole_segments_only() {
        let bodies = UnauthenticatedBodies {
            budget: BodyBudget::new(1),
            paths: &["/account", "/console/session"],
        };
        for (path, served) in [
            ("/account", true),
            ("/account/forgot", true),
            ("/accounting", false),
            ("/console/session", true),
            ("/console/ops", false),
            ("/mcp", false),
        ] {
            assert_eq!(bodies.serves(path), served, "{path}");
        }
    }
}
