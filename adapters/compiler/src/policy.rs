//! What a compiled component may import and which browser globals it may not touch.

/// Specifiers every component may import, whatever the caller allows: the React runtime that the
/// mount provides through its import map. `react/jsx-runtime` is also what the JSX transform adds.
pub const BASE_ALLOWED_IMPORTS: &[&str] = &["react", "react/jsx-runtime", "react-dom"];

/// Globals a component may not reference. Network, storage and code loading all go through the
/// gadget hooks (`useAction`, `useStream`, `useToolChannel`, `useContextSlot`), so that every
/// gesture and every byte of data crosses the audited live channel.
pub const FORBIDDEN_GLOBALS: &[&str] = &[
    // network
    "fetch",
    "XMLHttpRequest",
    "WebSocket",
    "EventSource",
    "WebTransport",
    "RTCPeerConnection",
    // storage
    "localStorage",
    "sessionStorage",
    "indexedDB",
    "caches",
    "cookieStore",
    // code loading and evaluation
    "eval",
    "Function",
    "importScripts",
    "Worker",
    "SharedWorker",
];

/// Member accesses on browser globals a component may not make, as `(global, property)`.
pub const FORBIDDEN_MEMBERS: &[(&str, &str)] = &[
    ("navigator", "sendBeacon"),
    ("navigator", "serviceWorker"),
    ("document", "cookie"),
];

/// Names of the global object; `window.fetch` is `fetch` under another name.
pub const GLOBAL_OBJECT_ALIASES: &[&str] = &["window", "globalThis", "self"];

/// Whether `specifier` may be imported: a React runtime specifier or exactly one of
/// `allowed_packages`. Matching is exact (no subpaths), because the mount's import map only
/// provides exact specifiers.
pub fn is_import_allowed(specifier: &str, allowed_packages: &[String]) -> bool {
    BASE_ALLOWED_IMPORTS.contains(&specifier) || allowed_packages.iter().any(|allowed| allowed == specifier)
}

pub(crate) fn is_forbidden_global(name: &str) -> bool {
    FORBIDDEN_GLOBALS.contains(&name)
}

pub(crate) fn is_forbidden_member(object: &str, property: &str) -> bool {
    FORBIDDEN_MEMBERS.contains(&(object, property))
}

pub(crate) fn is_global_object_alias(name: &str) -> bool {
    GLOBAL_OBJECT_ALIASES.contains(&name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn react_runtime_is_always_allowed() {
        for specifier in BASE_ALLOWED_IMPORTS {
            assert!(is_import_allowed(specifier, &[]));
        }
    }

    #[test]
    fn allowed_packages_match_exactly() {
        let allowed = vec!["@svc/gadgets".to_string()];
        assert!(is_import_allowed("@svc/gadgets", &allowed));
        assert!(!is_import_allowed("@svc/gadgets/internal", &allowed));
        assert!(!is_import_allowed("@svc/gadget", &allowed));
        assert!(!is_import_allowed("lodash", &allowed));
        assert!(!is_import_allowed("./local", &allowed));
    }
}
