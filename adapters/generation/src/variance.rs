//! The design-time variance axes the built-in generator honours. Unknown axes and values are
//! ignored, so any variance produces a component.

use serde_json::Value;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Density {
    Compact,
    #[default]
    Comfortable,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) enum Layout {
    #[default]
    Stack,
    Grid,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub(crate) struct Variance {
    pub density: Density,
    pub layout: Layout,
}

impl Variance {
    pub(crate) fn read(variance: &Value) -> Self {
        let axis = |name: &str| variance.get(name).and_then(Value::as_str);
        Self {
            density: match axis("density") {
                Some("compact") => Density::Compact,
                _ => Density::Comfortable,
            },
            layout: match axis("layout") {
                Some("grid") => Layout::Grid,
                _ => Layout::Stack,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn reads_known_axes_and_ignores_the_rest() {
        let variance = Variance::read(&json!({"density": "compact", "layout": "grid", "tone": "playful"}));
        assert_eq!(
            variance,
            Variance {
                density: Density::Compact,
                layout: Layout::Grid
            }
        );
        assert_eq!(Variance::read(&json!(null)), Variance::default());
        assert_eq!(Variance::read(&json!({"density": 3})), Variance::default());
    }
}
