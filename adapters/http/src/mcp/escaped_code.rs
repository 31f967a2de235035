//! A card's component code as an already-escaped JSON string, kept per blueprint: escaping a
//! card's compiled code (about 11 KB, dense with quotes and newlines) was the largest single cost
//! of a cache-hit render's answer (issue 18). An entry serves only the code it was made from: it
//! is compared with the render's code (a memory comparison, far cheaper than escaping), so a
//! blueprint whose code changed is escaped again.

use std::sync::Arc;
use std::time::Duration;

use moka::sync::Cache;
use serde_json::value::RawValue;

/// Bytes of code (twice: as given and escaped) kept.
const CAPACITY_BYTES: u64 = 64 * 1024 * 1024;
/// A blueprint nobody renders leaves; the bound on memory is the capacity.
const IDLE: Duration = Duration::from_secs(600);

pub(crate) struct EscapedComponents {
    kept: Cache<String, Arc<Escaped>>,
}

/// One blueprint's code and its JSON string.
pub(crate) struct Escaped {
    code: String,
    json: Box<RawValue>,
}

impl Escaped {
    fn of(code: &str) -> Result<Self, serde_json::Error> {
        Ok(Self {
            code: code.to_owned(),
            json: serde_json::value::to_raw_value(code)?,
        })
    }

    /// The code as a JSON string, quotes included.
    pub(crate) fn json(&self) -> &RawValue {
        &self.json
    }
}

impl Default for EscapedComponents {
    fn default() -> Self {
        let kept = Cache::builder()
            .max_capacity(CAPACITY_BYTES)
            .weigher(|_: &String, escaped: &Arc<Escaped>| {
                u32::try_from(escaped.code.len() + escaped.json.get().len()).unwrap_or(u32::MAX)
            })
            .time_to_idle(IDLE)
            .build();
        Self { kept }
    }
}

impl EscapedComponents {
    /// `code`, the component code of `blueprint_id`, escaped.
    pub(crate) fn of(&self, blueprint_id: &str, code: &str) -> Result<Arc<Escaped>, serde_json::Error> {
        if let Some(kept) = self.kept.get(blueprint_id)
            && kept.code == code
        {
            return Ok(kept);
        }
        let escaped = Arc::new(Escaped::of(code)?);
        self.kept.insert(blueprint_id.to_owned(), escaped.clone());
        Ok(escaped)
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
        let back: String = serde_json::from_str(escaped.json().get()).unwrap();
        assert_eq!(back, first);
        assert!(Arc::ptr_eq(&escaped, &components.of("bp_1", first).unwrap()), "kept");

        let changed = "export default () => null;";
        let back: String = serde_json::from_str(components.of("bp_1", changed).unwrap().json().get()).unwrap();
        assert_eq!(
            back, changed,
            "a changed code is escaped again, not served from the entry"
        );
    }
}
