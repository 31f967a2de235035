//! A card's component code as an already-escaped JSON string, kept per blueprint
//! ([`PerBlueprint`]): escaping a card's compiled code (about 11 KB, dense with quotes and
//! newlines) was the largest single cost of a cache-hit render's answer (issue 18).

use std::sync::Arc;

use serde_json::value::RawValue;

use crate::per_blueprint::{Derived, PerBlueprint};

/// Bytes of code (twice: as given and escaped) kept.
const CAPACITY_BYTES: u64 = 64 * 1024 * 1024;

pub(crate) struct EscapedComponents {
    kept: PerBlueprint<Box<RawValue>>,
}

/// One blueprint's code as a JSON string, quotes included.
pub(crate) type Escaped = Arc<Derived<Box<RawValue>>>;

impl Default for EscapedComponents {
    fn default() -> Self {
        Self {
            kept: PerBlueprint::new(CAPACITY_BYTES, |json| json.get().len()),
        }
    }
}

impl EscapedComponents {
    /// `code`, the component code of `blueprint_id`, escaped.
    pub(crate) fn of(&self, blueprint_id: &str, code: &str) -> Result<Escaped, serde_json::Error> {
        self.kept.of(blueprint_id, code, serde_json::value::to_raw_value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_escaped_string_is_the_code_and_follows_a_changed_code() {
        let components = EscapedComponents::default();
        let first = "export default () => \"<p>\\n</p>\";\n";
        let escaped = components.of("bp_1", first).unwrap();
        let back: String = serde_json::from_str(escaped.get()).unwrap();
        assert_eq!(back, first);
        assert!(Arc::ptr_eq(&escaped, &components.of("bp_1", first).unwrap()), "kept");

        let changed = "export default () => null;";
        let back: String = serde_json::from_str(components.of("bp_1", changed).unwrap().get()).unwrap();
        assert_eq!(
            back, changed,
            "a changed code is escaped again, not served from the entry"
        );
    }
}
