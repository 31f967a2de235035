//! The theme catalog: the presets `svc_list_themes` lists and the `--svc-*` CSS variables the
//! mount applies at the card's root for each of them. Generated components style themselves only
//! through these variables, so every theme defines every name in [`CSS_VARIABLE_NAMES`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// Theme used when neither the render nor the app picks one.
pub const DEFAULT_THEME_ID: &str = "default";

/// Every CSS variable a theme sets, for every mode it supports.
pub const CSS_VARIABLE_NAMES: &[&str] = &[
    "--svc-color-bg",
    "--svc-color-fg",
    "--svc-color-surface",
    "--svc-color-muted",
    "--svc-color-border",
    "--svc-color-accent",
    "--svc-color-accent-fg",
    "--svc-color-danger",
    "--svc-color-success",
    "--svc-radius",
    "--svc-font-family",
    "--svc-font-mono",
    "--svc-font-size",
    "--svc-space",
];

/// A row of `svc_list_themes`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ThemeEntry {
    pub id: String,
    pub name: String,
    pub description: String,
    pub modes: Vec<ThemeMode>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ThemeMode {
    Light,
    Dark,
}

impl ThemeMode {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Light => "light",
            Self::Dark => "dark",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "light" => Some(Self::Light),
            "dark" => Some(Self::Dark),
            _ => None,
        }
    }
}

/// Every registered theme, default first.
pub fn catalog() -> Vec<ThemeEntry> {
    THEMES.iter().map(ThemeDefinition::entry).collect()
}

/// The catalog restricted to an app's `availableThemeIds`, in the allowlist's order. Ids that are
/// not registered are dropped silently, and a repeated id is listed once. An empty allowlist allows
/// nothing: callers whose app sets no allowlist list the whole catalog instead.
pub fn filter_by_allowlist(catalog: Vec<ThemeEntry>, allow: &[String]) -> Vec<ThemeEntry> {
    let mut filtered: Vec<ThemeEntry> = Vec::with_capacity(allow.len());
    for id in allow {
        if filtered.iter().any(|entry| &entry.id == id) {
            continue;
        }
        if let Some(entry) = catalog.iter().find(|entry| &entry.id == id) {
            filtered.push(entry.clone());
        }
    }
    filtered
}

/// The `--svc-*` variables of a theme in one mode; `None` for an unknown theme or a mode the
/// theme does not offer.
pub fn css_variables(theme_id: &str, mode: ThemeMode) -> Option<BTreeMap<String, String>> {
    let theme = THEMES.iter().find(|theme| theme.id == theme_id)?;
    let palette = match mode {
        ThemeMode::Light => theme.light,
        ThemeMode::Dark => theme.dark,
    }?;
    Some(variables(palette, &theme.shape))
}

/// The mode a card of `theme_id` paints in before the host says which it wants: light when the
/// theme offers it, else the one it offers; light (with no variables) for an unknown theme. One
/// rule for every path that paints a card (a render's `_meta`, the card document's bootstrap).
pub fn first_painted_mode(theme_id: &str) -> ThemeMode {
    THEMES
        .iter()
        .find(|theme| theme.id == theme_id)
        .map_or(ThemeMode::Light, ThemeDefinition::first_painted_mode)
}

/// What a card document paints with: the mode it paints first and that mode's variables (none
/// for an unknown theme), and both modes' variables for the runtime to follow the host's mode
/// (`None` for a mode the theme does not offer). One value for every path that writes a card's
/// bootstrap (the card document, the console's preview).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct CardPaint {
    pub mode: ThemeMode,
    pub theme: BTreeMap<String, String>,
    pub variants: ThemeVariants,
}

/// `themeVariants` on the wire.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct ThemeVariants {
    pub light: Option<BTreeMap<String, String>>,
    pub dark: Option<BTreeMap<String, String>>,
}

pub fn card_paint(theme_id: &str) -> CardPaint {
    let mode = first_painted_mode(theme_id);
    CardPaint {
        mode,
        theme: css_variables(theme_id, mode).unwrap_or_default(),
        variants: ThemeVariants {
            light: css_variables(theme_id, ThemeMode::Light),
            dark: css_variables(theme_id, ThemeMode::Dark),
        },
    }
}

/// Whether `theme_id` is registered.
pub fn is_registered(theme_id: &str) -> bool {
    THEMES.iter().any(|theme| theme.id == theme_id)
}

struct ThemeDefinition {
    id: &'static str,
    name: &'static str,
    description: &'static str,
    light: Option<&'static Palette>,
    dark: Option<&'static Palette>,
    shape: Shape,
}

impl ThemeDefinition {
    fn first_painted_mode(&self) -> ThemeMode {
        match (self.light, self.dark) {
            (None, Some(_)) => ThemeMode::Dark,
            _ => ThemeMode::Light,
        }
    }

    fn entry(&self) -> ThemeEntry {
        let modes = [(ThemeMode::Light, self.light), (ThemeMode::Dark, self.dark)]
            .into_iter()
            .filter_map(|(mode, palette)| palette.map(|_| mode))
            .collect();
        ThemeEntry {
            id: self.id.to_string(),
            name: self.name.to_string(),
            description: self.description.to_string(),
            modes,
        }
    }
}

/// Colours that change with the mode.
struct Palette {
    bg: &'static str,
    fg: &'static str,
    surface: &'static str,
    muted: &'static str,
    border: &'static str,
    accent: &'static str,
    accent_fg: &'static str,
    danger: &'static str,
    success: &'static str,
}

/// Geometry and type that stay the same across a theme's modes.
struct Shape {
    radius: &'static str,
    font_family: &'static str,
    font_mono: &'static str,
    font_size: &'static str,
    space: &'static str,
}

// Named fields rather than a list of pairs, so a theme cannot forget a variable.
fn variables(palette: &Palette, shape: &Shape) -> BTreeMap<String, String> {
    [
        ("--svc-color-bg", palette.bg),
        ("--svc-color-fg", palette.fg),
        ("--svc-color-surface", palette.surface),
        ("--svc-color-muted", palette.muted),
        ("--svc-color-border", palette.border),
        ("--svc-color-accent", palette.accent),
        ("--svc-color-accent-fg", palette.accent_fg),
        ("--svc-color-danger", palette.danger),
        ("--svc-color-success", palette.success),
        ("--svc-radius", shape.radius),
        ("--svc-font-family", shape.font_family),
        ("--svc-font-mono", shape.font_mono),
        ("--svc-font-size", shape.font_size),
        ("--svc-space", shape.space),
    ]
    .into_iter()
    .map(|(name, value)| (name.to_string(), value.to_string()))
    .collect()
}

const SYSTEM_SANS: &str = "system-ui, -apple-system, \"Segoe UI\", Roboto, \"Helvetica Neue\", Arial, sans-serif";
const SYSTEM_MONO: &str = "ui-monospace, SFMono-Regular, Menlo, Consolas, monospace";

const DEFAULT_LIGHT: Palette = Palette {
    bg: "#ffffff",
    fg: "#1f2328",
    surface: "#f6f8fa",
    muted: "#59636e",
    border: "#d1d9e0",
    accent: "#0969da",
    accent_fg: "#ffffff",
    danger: "#d1242f",
    success: "#1a7f37",
};

const DEFAULT_DARK: Palette = Palette {
    bg: "#0d1117",
    fg: "#e6edf3",
    surface: "#161b22",
    muted: "#9198a1",
    border: "#3d444d",
    accent: "#4493f8",
    accent_fg: "#0d1117",
    danger: "#f85149",
    success: "#3fb950",
};

// Pure black and white with saturated accents: contrast well above WCAG AAA for text.
const HIGH_CONTRAST_LIGHT: Palette = Palette {
    bg: "#ffffff",
    fg: "#000000",
    surface: "#ffffff",
    muted: "#1f1f1f",
    border: "#000000",
    accent: "#0000cc",
    accent_fg: "#ffffff",
    danger: "#a00000",
    success: "#005a00",
};

const HIGH_CONTRAST_DARK: Palette = Palette {
    bg: "#000000",
    fg: "#ffffff",
    surface: "#000000",
    muted: "#e0e0e0",
    border: "#ffffff",
    accent: "#ffd400",
    accent_fg: "#000000",
    danger: "#ff6b6b",
    success: "#5fff5f",
};

const PAPER_LIGHT: Palette = Palette {
    bg: "#fbf8f1",
    fg: "#2b2a27",
    surface: "#f3eee2",
    muted: "#6b655a",
    border: "#ddd5c4",
    accent: "#8a4b1f",
    accent_fg: "#fffdf8",
    danger: "#a3312a",
    success: "#3f6b2a",
};

const THEMES: &[ThemeDefinition] = &[
    ThemeDefinition {
        id: DEFAULT_THEME_ID,
        name: "Default",
        description: "Neutral system look with a blue accent; follows the host's light or dark mode.",
        light: Some(&DEFAULT_LIGHT),
        dark: Some(&DEFAULT_DARK),
        shape: Shape {
            radius: "8px",
            font_family: SYSTEM_SANS,
            font_mono: SYSTEM_MONO,
            font_size: "14px",
            space: "8px",
        },
    },
    ThemeDefinition {
        id: "high-contrast",
        name: "High contrast",
        description: "Black and white with strong borders and larger text, for low vision and bright screens.",
        light: Some(&HIGH_CONTRAST_LIGHT),
        dark: Some(&HIGH_CONTRAST_DARK),
        shape: Shape {
            radius: "2px",
            font_family: SYSTEM_SANS,
            font_mono: SYSTEM_MONO,
            font_size: "16px",
            space: "10px",
        },
    },
    ThemeDefinition {
        id: "paper",
        name: "Paper",
        description: "Warm off-white page with serif type, for reading-heavy cards such as reports and notes.",
        light: Some(&PAPER_LIGHT),
        dark: None,
        shape: Shape {
            radius: "4px",
            font_family: "Georgia, \"Iowan Old Style\", \"Times New Roman\", serif",
            font_mono: SYSTEM_MONO,
            font_size: "15px",
            space: "10px",
        },
    },
];

#[cfg(test)]
mod tests {
    use super::*;

    fn ids(entries: &[ThemeEntry]) -> Vec<&str> {
        entries.iter().map(|entry| entry.id.as_str()).collect()
    }

    fn allow(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|id| (*id).to_string()).collect()
    }

    #[test]
    fn catalog_lists_default_first_with_its_modes() {
        let catalog = catalog();
        assert_eq!(ids(&catalog), ["default", "high-contrast", "paper"]);
        assert_eq!(catalog[0].id, DEFAULT_THEME_ID);
        assert_eq!(catalog[0].modes, [ThemeMode::Light, ThemeMode::Dark]);
        assert_eq!(catalog[2].modes, [ThemeMode::Light]);
        assert!(
            catalog
                .iter()
                .all(|entry| !entry.name.is_empty() && !entry.description.is_empty())
        );
    }

    #[test]
    fn entry_serializes_to_the_wire_shape() {
        let wire = serde_json::to_value(&catalog()[0]).unwrap();
        assert_eq!(
            wire,
            serde_json::json!({
                "id": "default",
                "name": "Default",
                "description": catalog()[0].description,
                "modes": ["light", "dark"],
            })
        );
    }

    #[test]
    fn every_offered_mode_defines_every_variable() {
        for entry in catalog() {
            for mode in &entry.modes {
                let variables = css_variables(&entry.id, *mode).expect("offered mode has variables");
                let names: Vec<&str> = variables.keys().map(String::as_str).collect();
                let mut expected = CSS_VARIABLE_NAMES.to_vec();
                expected.sort_unstable();
                assert_eq!(names, expected, "{} {}", entry.id, mode.as_str());
                assert!(variables.values().all(|value| !value.is_empty()));
            }
        }
    }

    #[test]
    fn unknown_theme_or_missing_mode_has_no_variables() {
        assert!(css_variables("neon", ThemeMode::Light).is_none());
        assert!(css_variables("paper", ThemeMode::Dark).is_none());
        assert_eq!(
            css_variables("default", ThemeMode::Dark).unwrap()["--svc-color-bg"],
            "#0d1117"
        );
    }

    #[test]
    fn a_card_paints_its_first_mode_with_that_modes_variables() {
        for entry in catalog() {
            let paint = card_paint(&entry.id);
            let first = match paint.mode {
                ThemeMode::Light => &paint.variants.light,
                ThemeMode::Dark => &paint.variants.dark,
            };
            assert_eq!(first.as_ref(), Some(&paint.theme), "{}", entry.id);
            for mode in [ThemeMode::Light, ThemeMode::Dark] {
                let offered = match mode {
                    ThemeMode::Light => paint.variants.light.is_some(),
                    ThemeMode::Dark => paint.variants.dark.is_some(),
                };
                assert_eq!(offered, entry.modes.contains(&mode), "{} {mode:?}", entry.id);
            }
        }
        let unknown = card_paint("no-such-theme");
        assert_eq!(unknown.mode, ThemeMode::Light);
        assert!(unknown.theme.is_empty() && unknown.variants.light.is_none() && unknown.variants.dark.is_none());
    }

    #[test]
    fn a_card_paints_light_first_unless_its_theme_is_dark_only() {
        assert_eq!(first_painted_mode("default"), ThemeMode::Light);
        assert_eq!(first_painted_mode("paper"), ThemeMode::Light);
        assert_eq!(first_painted_mode("neon"), ThemeMode::Light);
        let dark_only = ThemeDefinition {
            id: "night",
            name: "Night",
            description: "dark only",
            light: None,
            dark: Some(&DEFAULT_DARK),
            shape: Shape {
                radius: "0",
                font_family: SYSTEM_SANS,
                font_mono: SYSTEM_MONO,
                font_size: "14px",
                space: "8px",
            },
        };
        assert_eq!(dark_only.first_painted_mode(), ThemeMode::Dark);
        assert_eq!(dark_only.entry().modes, [ThemeMode::Dark]);
    }

    #[test]
    fn allowlist_keeps_its_order_and_drops_unknown_ids() {
        let filtered = filter_by_allowlist(catalog(), &allow(&["paper", "nope", "default"]));
        assert_eq!(ids(&filtered), ["paper", "default"]);
    }

    #[test]
    fn allowlist_lists_a_repeated_id_once() {
        let filtered = filter_by_allowlist(catalog(), &allow(&["paper", "paper"]));
        assert_eq!(ids(&filtered), ["paper"]);
    }

    #[test]
    fn empty_allowlist_allows_nothing() {
        assert!(filter_by_allowlist(catalog(), &[]).is_empty());
    }

    #[test]
    fn modes_parse_from_their_wire_names() {
        assert_eq!(ThemeMode::parse("dark"), Some(ThemeMode::Dark));
        assert_eq!(ThemeMode::parse("Dark"), None);
        assert!(is_registered("high-contrast"));
        assert!(!is_registered("High-Contrast"));
    }
}
