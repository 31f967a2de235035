//! What a cold generation costs in a hosted deployment: one price for every generator (the
//! built-in one included), with per-model overrides keyed by the canonical route
//! (`openai:gpt-4o`) or by a generator slug (`builtin`). A cache hit runs no generation and is
//! free, so it never reaches this table.

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RenderPrice {
    default_cents: i64,
    overrides: BTreeMap<String, i64>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("a render price must be 0 or more cents; `{0}` is {1}")]
pub struct NegativePrice(pub String, pub i64);

impl RenderPrice {
    pub fn new(default_cents: i64, overrides: BTreeMap<String, i64>) -> Result<Self, NegativePrice> {
        if default_cents < 0 {
            return Err(NegativePrice("render_price_cents".into(), default_cents));
        }
        if let Some((name, cents)) = overrides.iter().find(|(_, c)| **c < 0) {
            return Err(NegativePrice(name.clone(), *cents));
        }
        Ok(Self {
            default_cents,
            overrides,
        })
    }

    /// The price of one cold generation by `model` (a canonical route) or, without one, by the
    /// generator `slug`.
    pub fn of(&self, model: Option<&str>, slug: &str) -> i64 {
        model
            .and_then(|m| self.overrides.get(m))
            .or_else(|| self.overrides.get(slug))
            .copied()
            .unwrap_or(self.default_cents)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_model_override_wins_then_a_slug_override_then_the_default() {
        let price = RenderPrice::new(
            5,
            BTreeMap::from([("openai:gpt-5".to_owned(), 40), ("builtin".to_owned(), 1)]),
        )
        .unwrap();
        let rows = [
            (Some("openai:gpt-5"), "standard", 40),
            (Some("openai:gpt-4o"), "standard", 5),
            (None, "builtin", 1),
            (None, "standard", 5),
        ];
        for (model, slug, cents) in rows {
            assert_eq!(price.of(model, slug), cents, "{model:?} {slug}");
        }
        assert!(RenderPrice::new(-1, BTreeMap::new()).is_err());
        assert_eq!(
            RenderPrice::new(1, BTreeMap::from([("x".to_owned(), -2)])),
            Err(NegativePrice("x".into(), -2))
        );
    }
}
