//! The `advanced` generator's validator: static checks that a compiled component actually uses
//! its contract and the theme. The score is the share of checks passed, 0 to 1; the failed checks
//! become repair findings.

use serde_json::Value;
use svc_application::ports::generation::CompileFinding;
use svc_domain::contract::Contract;

/// Below this score the `advanced` generator spends its repair round on the validator's findings.
pub const REPAIR_BELOW: f64 = 0.75;

pub struct Validation {
    pub score: f64,
    pub findings: Vec<CompileFinding>,
}

pub fn validate(source: &str, contract: &Contract) -> Validation {
    let mut checks: Vec<(bool, String)> = Vec::new();
    let calls = |hook: &str, name: &str| {
        source.contains(&format!("{hook}('{name}'"))
            || source.contains(&format!("{hook}(\"{name}\""))
            || source.contains(&format!("{hook}(`{name}`"))
    };
    for intent in contract.action_intents() {
        checks.push((
            calls("useAction", &intent),
            format!("action intent `{intent}` is never sent: call useAction('{intent}') from a control"),
        ));
    }
    let channels: Vec<String> = contract
        .as_map()
        .get("streamSpec")
        .and_then(Value::as_object)
        .map(|spec| spec.keys().cloned().collect())
        .unwrap_or_default();
    for channel in channels {
        checks.push((
            calls("useStream", &channel),
            format!("stream channel `{channel}` is never shown: read it with useStream('{channel}')"),
        ));
    }
    for slot in contract.context_slots() {
        checks.push((
            calls("useContextSlot", &slot),
            format!("context slot `{slot}` is never kept: use useContextSlot('{slot}')"),
        ));
    }
    if contract.declares_props_spec() {
        checks.push((
            source.contains("useProps"),
            "the props are never read: call useProps() from @svc/gadgets".into(),
        ));
    }
    checks.push((
        source.contains("var(--svc-"),
        "the theme is ignored: style with the --svc-* variables, e.g. var(--svc-color-fg)".into(),
    ));
    checks.push((
        !has_hex_colour(source),
        "hard-coded hex colours: use the theme's --svc-color-* variables instead".into(),
    ));
    if source.contains("<input") || source.contains("<select") || source.contains("<textarea") {
        checks.push((
            source.contains("aria-label") || source.contains("<label"),
            "form fields have no labels: wrap them in <label> or give them aria-label".into(),
        ));
    }
    let passed = checks.iter().filter(|(ok, _)| *ok).count();
    Validation {
        score: passed as f64 / checks.len() as f64,
        findings: checks
            .into_iter()
            .filter(|(ok, _)| !ok)
            .map(|(_, message)| CompileFinding { message, line: None })
            .collect(),
    }
}

/// `#abc` or `#aabbcc` inside a string literal.
fn has_hex_colour(source: &str) -> bool {
    source.match_indices('#').any(|(at, _)| {
        let before = source[..at].chars().next_back();
        let digits: String = source[at + 1..].chars().take_while(char::is_ascii_hexdigit).collect();
        matches!(before, Some('\'' | '"' | '`' | ' ')) && matches!(digits.len(), 3 | 6 | 8)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn contract() -> Value {
        json!({ "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
                "actionSpec": { "approve": { "schema": {} }, "reject": { "schema": {} } } })
    }

    #[test]
    fn a_component_using_its_contract_and_theme_scores_one() {
        let source = "const p = useProps(); const a = useAction('approve'); const r = useAction(\"reject\");\n\
                      <div style={{ color: 'var(--svc-color-fg)' }} />";
        let v = validate(source, &Contract::try_from(contract()).unwrap());
        assert_eq!(v.score, 1.0, "{:?}", v.findings);
    }

    #[test]
    fn missing_intents_and_hard_coded_colours_lower_the_score_with_findings() {
        let source = "const p = useProps(); const a = useAction('approve'); <div style={{ color: '#ff0000' }} />";
        let v = validate(source, &Contract::try_from(contract()).unwrap());
        assert!(v.score < REPAIR_BELOW, "{}", v.score);
        let text: Vec<_> = v.findings.iter().map(|f| f.message.as_str()).collect();
        assert!(text.iter().any(|m| m.contains("`reject`")), "{text:?}");
        assert!(text.iter().any(|m| m.contains("hex colours")), "{text:?}");
    }
}
