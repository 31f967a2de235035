//! The app manifest loader (`svc.json` and `svc.ui.json`, `svc-manifest`): what an operator or an
//! `install` from the registry writes and the server reads at start and on every change.

use svc_domain::themes;

/// The input is a `svc.json` and, read again, a `svc.ui.json`.
pub fn app_manifest(data: &[u8]) {
    if let Ok(manifest) = svc_manifest::parse_manifest(data) {
        assert!(
            themes::is_registered(&manifest.default_theme_id),
            "the default theme `{}` is registered",
            manifest.default_theme_id
        );
        let allowed = &manifest.available_theme_ids;
        assert!(
            allowed.is_empty() || allowed.contains(&manifest.default_theme_id),
            "the default theme is in the allowlist"
        );
        for pattern in manifest.blueprint_includes.iter().flatten() {
            assert!(glob::Pattern::new(pattern).is_ok(), "`{pattern}` was kept as a glob");
        }
    }
    if let Ok(ui) = svc_manifest::parse_ui(data) {
        assert!(
            !ui.name.is_empty() || ui.id.is_empty(),
            "a missing name falls back to the id"
        );
        assert!(ui.contract.is_object(), "the contract is an object");
    }
}
