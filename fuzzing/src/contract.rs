//! Contract negotiation, schema compilation and validation: what `svc_handshake`, `svc_render`,
//! actions and emits do with a caller's contract and values.

use serde_json::Value;
use svc_domain::contract::{EntrySchema, check_contract_budgets, compile_schema, negotiate};

/// The input is a draft contract, or `{ "contract": draft, "props": value }` to validate a value
/// against the agreed `propsSpec` (and every action and stream schema).
pub fn contract(data: &[u8]) {
    let Some(input) = crate::json(data) else { return };
    let (draft, instance) = match input.get("contract") {
        Some(draft) => (draft, input.get("props").unwrap_or(&Value::Null)),
        None => (&input, &input),
    };
    // Budgets first, as the handshake does; negotiation checks them again itself.
    let _ = check_contract_budgets(draft);
    let Ok(negotiated) = negotiate(draft) else { return };
    let contract = negotiated.contract;
    let mut schemas = vec![contract.props_schema()];
    schemas.extend(
        contract
            .action_intents()
            .iter()
            .filter_map(|i| contract.action_schema(i)),
    );
    let channels = contract
        .as_map()
        .get("streamSpec")
        .and_then(Value::as_object)
        .map(|m| m.keys().cloned().collect::<Vec<_>>())
        .unwrap_or_default();
    schemas.extend(
        channels
            .iter()
            .filter_map(|c| contract.entry_schema(&EntrySchema::Stream(c.clone())))
            .map(std::borrow::Cow::into_owned),
    );
    for schema in schemas {
        let Ok(compiled) = compile_schema(&schema) else {
            continue;
        };
        let violations = compiled.violations(instance);
        // Both ways of asking must agree: a value is valid exactly when it has no violation.
        assert_eq!(
            compiled.is_valid(instance),
            violations.is_empty(),
            "is_valid and violations disagree: {violations:?}"
        );
    }
}
