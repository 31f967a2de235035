//! The route a request is counted under: the path template, never the raw path (session ids,
//! app ids and random paths would make every request a new time series).

/// `/apps/{appId}/mcp` for `/apps/a1/mcp`; `other` for a path no route serves.
pub(crate) fn route_label(path: &str) -> &'static str {
    const FIXED: &[&str] = &[
        "/mcp",
        "/ops",
        "/ws",
        "/healthz",
        "/readyz",
        "/metrics",
        "/openapi.json",
        "/_svc/pair",
        "/_svc/iframe-runtime.js",
        "/_svc/gadgets.d.ts",
        "/_svc/playground",
        "/_svc/playground/playground.js",
        "/_svc/playground/playground.css",
        "/oauth/register",
        "/oauth/authorize",
        "/oauth/token",
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-authorization-server",
    ];
    if let Some(fixed) = FIXED.iter().find(|fixed| **fixed == path) {
        return fixed;
    }
    let segments: Vec<&str> = path.trim_start_matches('/').split('/').collect();
    match segments.as_slice() {
        ["apps", _, "mcp"] => "/apps/{appId}/mcp",
        ["_svc", "poll", _] => "/_svc/poll/{sessionId}",
        ["_svc", "playground", "card", _] => "/_svc/playground/card/{sessionId}",
        ["_svc", "invites", _, "accept"] => "/_svc/invites/{inviteId}/accept",
        [".well-known", "oauth-protected-resource", ..] => "/.well-known/oauth-protected-resource/{path}",
        _ => "other",
    }
}

#[cfg(test)]
mod tests {
    use super::route_label;

    #[test]
    fn ids_collapse_into_their_template_and_unknown_paths_into_one_label() {
        assert_eq!(route_label("/mcp"), "/mcp");
        assert_eq!(route_label("/apps/app_1/mcp"), "/apps/{appId}/mcp");
        assert_eq!(route_label("/_svc/poll/3f2a"), "/_svc/poll/{sessionId}");
        assert_eq!(
            route_label("/_svc/invites/i1/accept"),
            "/_svc/invites/{inviteId}/accept"
        );
        assert_eq!(route_label("/wp-admin/x.php"), "other");
        assert_eq!(route_label("/mcp/extra"), "other");
    }
}
