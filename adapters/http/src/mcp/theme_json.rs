//! A theme's CSS variables as JSON, serialised once per theme and mode.
//!
//! Every render's `_meta` carries its theme's palettes (light twice, as `theme` and as a
//! variant, and dark); building each as a map of strings and escaping it again was a tenth of a
//! warm render's instructions (issue 18, BENCHMARKS.md). The registered themes are static, so
//! their JSON is too.

use std::collections::HashMap;
use std::sync::LazyLock;

use serde_json::value::RawValue;
use svc_domain::themes::{self, ThemeMode};

/// A theme's variables in each mode it offers.
struct Modes {
    light: Option<Box<RawValue>>,
    dark: Option<Box<RawValue>>,
}

/// Per registered theme id.
static KEPT: LazyLock<HashMap<String, Modes>> = LazyLock::new(|| {
    themes::catalog()
        .into_iter()
        .map(|theme| {
            let json = |mode| {
                themes::css_variables(&theme.id, mode)
                    .map(|variables| serde_json::value::to_raw_value(&variables).expect("strings serialise"))
            };
            let modes = Modes {
                light: json(ThemeMode::Light),
                dark: json(ThemeMode::Dark),
            };
            (theme.id, modes)
        })
        .collect()
});

/// No variables at all (`{}`): what an unknown theme paints with.
static NONE: LazyLock<Box<RawValue>> =
    LazyLock::new(|| RawValue::from_string("{}".to_owned()).expect("an empty object is JSON"));

/// `themes::css_variables(theme_id, mode)` as JSON: `None` for an unknown theme or a mode the
/// theme does not offer.
pub(crate) fn css_variables(theme_id: &str, mode: ThemeMode) -> Option<&'static RawValue> {
    let modes = KEPT.get(theme_id)?;
    match mode {
        ThemeMode::Light => modes.light.as_deref(),
        ThemeMode::Dark => modes.dark.as_deref(),
    }
}

/// `{}`.
pub(crate) fn no_variables() -> &'static RawValue {
    &NONE
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_theme_and_mode_is_its_variables_as_json() {
        let catalog = themes::catalog();
        assert!(!catalog.is_empty());
        for theme in catalog {
            for mode in [ThemeMode::Light, ThemeMode::Dark] {
                // The very text the variables serialised to before (keys in order, compact).
                let expected = themes::css_variables(&theme.id, mode).map(|v| serde_json::to_string(&v).unwrap());
                let kept = css_variables(&theme.id, mode).map(|raw| raw.get().to_owned());
                assert_eq!(kept, expected, "{} {}", theme.id, mode.as_str());
                assert_eq!(kept.is_some(), theme.modes.contains(&mode));
            }
        }
        assert!(css_variables("no-such-theme", ThemeMode::Light).is_none());
        assert_eq!(
            no_variables().get(),
            serde_json::to_string(&serde_json::Map::new()).unwrap()
        );
    }
}
