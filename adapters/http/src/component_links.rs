//! `component.links` of a card's bootstrap and `ack`: where the component module imports and
//! exports, read once per blueprint ([`PerBlueprint`]) with the server's parser, so the card
//! runtime rewrites the module without a lexer of its own (a fifth of its bytes, sent with every
//! card document only when a gadget bundle needs it; docs/live-channel.md).

use std::convert::Infallible;
use std::sync::Arc;

use serde_json::{Value, json};
use svc_application::ports::module_links::{ModuleLinker, ModuleLinks};

use crate::per_blueprint::PerBlueprint;

/// Bytes of code and links kept.
const CAPACITY_BYTES: u64 = 32 * 1024 * 1024;

pub(crate) struct ComponentLinks {
    linker: Arc<dyn ModuleLinker>,
    /// The wire form; `None` when the code does not parse as a module.
    kept: PerBlueprint<Option<Value>>,
}

impl ComponentLinks {
    pub(crate) fn new(linker: Arc<dyn ModuleLinker>) -> Self {
        Self {
            linker,
            kept: PerBlueprint::new(CAPACITY_BYTES, wire_weight),
        }
    }

    /// The links of `code`, the component of `blueprint_id`, in the wire form (es-module-lexer's
    /// field names, which the runtime's rewrite reads); `None` when the code does not parse.
    pub(crate) fn of(&self, blueprint_id: &str, code: &str) -> Option<Value> {
        let links = self
            .kept
            .of(blueprint_id, code, |code| {
                Ok::<_, Infallible>(self.linker.links(code).map(|links| wire(&links)))
            })
            .unwrap_or_else(|never| match never {});
        (*links).clone()
    }
}

/// About what one import or export costs in memory as a `Value` (an order-preserving map of up
/// to seven members, each a key string and a value).
const LINK_BYTES: usize = 1024;

fn wire_weight(links: &Option<Value>) -> usize {
    let count = |list: &str| {
        links
            .as_ref()
            .and_then(|links| links[list].as_array())
            .map_or(0, Vec::len)
    };
    (count("imports") + count("exports")) * LINK_BYTES
}

/// `-1` where the lexer says "none".
fn or_none(offset: Option<u32>) -> i64 {
    offset.map_or(-1, i64::from)
}

fn wire(links: &ModuleLinks) -> Value {
    let imports: Vec<Value> = links
        .imports
        .iter()
        .map(|import| {
            json!({
                "n": import.specifier,
                "ss": import.statement_start,
                "se": import.statement_end,
                "s": import.specifier_start,
                "e": import.specifier_end,
                "d": or_none(import.dynamic_at),
                "a": or_none(import.attributes_at),
            })
        })
        .collect();
    let exports: Vec<Value> = links
        .exports
        .iter()
        .map(|export| json!({ "n": export.name, "ln": export.local, "s": export.start, "e": export.end }))
        .collect();
    json!({ "imports": imports, "exports": exports })
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};

    use svc_application::ports::module_links::{ExportLink, ImportLink};

    use super::*;

    /// Links every code alike, counting its reads.
    struct Counting(AtomicUsize);

    impl ModuleLinker for Counting {
        fn links(&self, code: &str) -> Option<ModuleLinks> {
            self.0.fetch_add(1, Ordering::SeqCst);
            (code != "broken").then(|| ModuleLinks {
                imports: vec![ImportLink {
                    specifier: Some("react".into()),
                    statement_start: 0,
                    statement_end: 25,
                    specifier_start: 19,
                    specifier_end: 24,
                    dynamic_at: None,
                    attributes_at: Some(26),
                }],
                exports: vec![ExportLink {
                    name: "default".into(),
                    local: None,
                    start: 34,
                    end: 41,
                }],
            })
        }
    }

    #[test]
    fn links_are_read_once_per_code_in_the_lexers_shape() {
        let linker = Arc::new(Counting(AtomicUsize::new(0)));
        let links = ComponentLinks::new(linker.clone());
        let first = links.of("bp_1", "import x from 'react'; export default x").unwrap();
        assert_eq!(
            first,
            json!({ "imports": [{ "n": "react", "ss": 0, "se": 25, "s": 19, "e": 24, "d": -1, "a": 26 }],
                    "exports": [{ "n": "default", "ln": null, "s": 34, "e": 41 }] })
        );
        links.of("bp_1", "import x from 'react'; export default x");
        assert_eq!(linker.0.load(Ordering::SeqCst), 1, "kept");
        assert_eq!(links.of("bp_1", "broken"), None, "a changed code is read again");
        assert_eq!(linker.0.load(Ordering::SeqCst), 2);
    }
}
