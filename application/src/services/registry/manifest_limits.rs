//! The sizes of a blueprint manifest's free-form parts (docs/registry.md, "Limits"). JSON Schema
//! cannot count bytes, so the schema only describes these and the registry checks them, before
//! the schema runs: a manifest is stored, served and read by every installer, and its two
//! objects are otherwise bounded only by the 8 MiB body.

use serde_json::Value;
use svc_domain::artifact::GateFailure;
use svc_domain::text::json_len_at_most;

/// `blueprint.contract`, as compact JSON: the server's own contract limit
/// (`Budget::ContractBytes`), so no registry blueprint is one a server would refuse for its size.
pub const CONTRACT_MAX_BYTES: usize = 256 * 1024;
/// `blueprint.fixtureProps`, as compact JSON: what one render check needs, far below a render's
/// props (`Budget::PropsBytes`).
pub const FIXTURE_PROPS_MAX_BYTES: usize = 256 * 1024;

/// Most characters of one failure's message: a schema failure names the instance it is about,
/// which may be most of an 8 MiB body.
const MESSAGE_MAX_CHARS: usize = 512;
/// Most failures one refusal lists (a long array breaks the schema once per item).
const FAILURES_MAX: usize = 50;

/// `failures` as a refusal answers them: at most [`FAILURES_MAX`], each message at most
/// [`MESSAGE_MAX_CHARS`] (its start and its end, which name the instance and the rule).
pub(super) fn excerpted(mut failures: Vec<GateFailure>) -> Vec<GateFailure> {
    failures.truncate(FAILURES_MAX);
    for failure in &mut failures {
        let count = failure.message.chars().count();
        if count > MESSAGE_MAX_CHARS {
            let side = (MESSAGE_MAX_CHARS - 3) / 2;
            let head: String = failure.message.chars().take(side).collect();
            let tail: String = failure.message.chars().skip(count - side).collect();
            failure.message = format!("{head} … {tail}");
        }
    }
    failures
}

/// The parts of `manifest` over their size, each as a `manifest_schema` failure at its pointer.
pub(super) fn oversized_parts(manifest: &Value) -> Vec<GateFailure> {
    let Some(blueprint) = manifest.get("blueprint") else {
        return Vec::new();
    };
    [
        ("contract", CONTRACT_MAX_BYTES),
        ("fixtureProps", FIXTURE_PROPS_MAX_BYTES),
    ]
    .into_iter()
    .filter_map(|(part, max)| {
        let value = blueprint.get(part)?;
        json_len_at_most(value, max).is_none().then(|| {
            GateFailure::new(
                "manifest_schema",
                format!("/manifest/blueprint/{part}"),
                format!("`blueprint.{part}` is more than {max} bytes of JSON"),
            )
        })
    })
    .collect()
}

#[cfg(test)]
mod tests {
    use svc_domain::budget::Budget;

    use super::*;

    #[test]
    fn a_registry_contract_is_bounded_as_a_servers_contract() {
        assert_eq!(Budget::ContractBytes.limit(), Some(CONTRACT_MAX_BYTES));
    }
}
