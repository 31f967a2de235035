//! `defaultThemeId` and `availableThemeIds` against the theme catalog.

use svc_domain::themes;

use crate::ManifestError;
use crate::app::RawApp;

/// The default theme id and the allowlist, or why they name no registered theme.
pub(crate) fn theme_settings(app: &RawApp) -> Result<(String, Vec<String>), ManifestError> {
    let fail = |at: &str, rule: String| ManifestError(format!("at {at}: {rule}"));
    let available = themes::filter_by_allowlist(themes::catalog(), &app.available_theme_ids);
    if !app.available_theme_ids.is_empty() && available.is_empty() {
        return Err(fail(
            "/app/availableThemeIds",
            format!(
                "none of these ids is a registered theme (registered: {})",
                registered_themes()
            ),
        ));
    }
    let default = match &app.default_theme_id {
        Some(id) if !themes::is_registered(id) => {
            return Err(fail(
                "/app/defaultThemeId",
                format!("`{id}` is not a registered theme (registered: {})", registered_themes()),
            ));
        }
        Some(id) if !app.available_theme_ids.is_empty() && !available.iter().any(|t| t.id == *id) => {
            return Err(fail(
                "/app/defaultThemeId",
                format!("`{id}` is not in availableThemeIds"),
            ));
        }
        Some(id) => id.clone(),
        None if app.available_theme_ids.is_empty() => themes::DEFAULT_THEME_ID.to_owned(),
        None => match available.iter().find(|t| t.id == themes::DEFAULT_THEME_ID) {
            Some(t) => t.id.clone(),
            None => available[0].id.clone(),
        },
    };
    Ok((default, app.available_theme_ids.clone()))
}

fn registered_themes() -> String {
    themes::catalog()
        .iter()
        .map(|t| t.id.as_str())
        .collect::<Vec<_>>()
        .join(", ")
}
