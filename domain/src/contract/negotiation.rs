//! Negotiation of a draft contract: every rule that turns a draft into an agreed contract, a set
//! of amendments (origin `synth`), or a decline. The rules are listed in docs/contract.md; each
//! rule has one test below.

use serde_json::{Map, Value, json};

use super::{
    CONTRACT_KEYS, CompiledSchema, Contract, EntrySchema, RESERVED_CHANNEL_PREFIX, SchemaCompileError, compile_schema,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FindingSeverity {
    /// The draft was repaired; the amendment says how.
    Amended,
    /// The draft cannot be agreed.
    Fatal,
}

/// One thing negotiation noticed about a draft.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Finding {
    /// Stable snake_case rule name (`unknown_key`, `invalid_schema`, ...).
    pub code: &'static str,
    /// JSON Pointer into the draft contract.
    pub path: String,
    pub message: String,
    pub severity: FindingSeverity,
}

/// The agreed contract and what was changed to reach it.
#[derive(Debug, Clone, PartialEq)]
pub struct Negotiated {
    pub contract: Contract,
    /// Non-empty exactly when the draft was amended.
    pub amendments: Vec<Finding>,
}

impl Negotiated {
    pub fn amended(&self) -> bool {
        !self.amendments.is_empty()
    }
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("contract declined: {}", findings.iter().map(|f| format!("{}: {}", f.path, f.message)).collect::<Vec<_>>().join("; "))]
pub struct NegotiationError {
    pub findings: Vec<Finding>,
}

/// The validators negotiation compiled to check the schemas of the contract it agreed, by the
/// schema each checks: the validator cache takes them, so the first render, emit or action of a
/// contract does not compile again what its handshake compiled.
#[derive(Debug, Default)]
pub struct AgreedValidators {
    /// `propsSpec`'s, when the contract declares one.
    pub props: Option<CompiledSchema>,
    /// Each declared entry's, compiled from its `schema`; none for a `{}` negotiation added.
    pub entries: Vec<(EntrySchema, CompiledSchema)>,
}

/// Longest intent, channel or slot name accepted.
const MAX_NAME_LEN: usize = 64;

/// Negotiates a draft contract.
pub fn negotiate(draft: &Value) -> Result<Negotiated, NegotiationError> {
    negotiate_with(Negotiator::default(), draft).0
}

/// [`negotiate`], handing back the validators it compiled as well.
pub fn negotiate_keeping_validators(draft: &Value) -> Result<(Negotiated, AgreedValidators), NegotiationError> {
    let keeping = Negotiator {
        kept: Some(AgreedValidators::default()),
        ..Negotiator::default()
    };
    let (agreed, kept) = negotiate_with(keeping, draft);
    Ok((agreed?, kept.unwrap_or_default()))
}

/// The draft negotiated by `n`, and the validators `n` kept.
fn negotiate_with(
    mut n: Negotiator,
    draft: &Value,
) -> (Result<Negotiated, NegotiationError>, Option<AgreedValidators>) {
    let Some(object) = draft.as_object() else {
        n.fatal("not_an_object", "", "the contract must be a JSON object");
        return (Err(NegotiationError { findings: n.fatal }), None);
    };
    let mut agreed = Map::new();
    for (key, value) in object {
        let path = format!("/{}", escape(key));
        if !CONTRACT_KEYS.contains(&key.as_str()) {
            n.amend(
                "unknown_key",
                &path,
                format!("unknown key `{key}` removed; allowed: {}", CONTRACT_KEYS.join(", ")),
            );
            continue;
        }
        let section = match key.as_str() {
            "propsSpec" => n.props_spec(&path, value),
            "actionSpec" => n.named_entries(&path, value, Negotiator::action_entry),
            "streamSpec" => n.named_entries(&path, value, Negotiator::stream_entry),
            "contextSpec" => n.named_entries(&path, value, Negotiator::context_entry),
            "clientCapabilities" => n.client_capabilities(&path, value),
            _ => n.agent_capabilities(&path, value),
        };
        if let Some(section) = section {
            agreed.insert(key.clone(), section);
        }
    }
    if n.fatal.is_empty() {
        let agreed = Negotiated {
            contract: Contract::from_agreed(agreed),
            amendments: n.amended,
        };
        (Ok(agreed), n.kept)
    } else {
        (Err(NegotiationError { findings: n.fatal }), None)
    }
}

#[derive(Default)]
struct Negotiator {
    amended: Vec<Finding>,
    fatal: Vec<Finding>,
    /// The validators compiled, when the caller keeps them; else each is dropped once used.
    kept: Option<AgreedValidators>,
}

type EntryRule = fn(&mut Negotiator, &str, &str, &Map<String, Value>) -> Option<Value>;

impl Negotiator {
    fn amend(&mut self, code: &'static str, path: &str, message: String) {
        self.amended.push(Finding {
            code,
            path: path.to_owned(),
            message,
            severity: FindingSeverity::Amended,
        });
    }

    fn fatal(&mut self, code: &'static str, path: &str, message: &str) {
        self.fatal.push(Finding {
            code,
            path: path.to_owned(),
            message: message.to_owned(),
            severity: FindingSeverity::Fatal,
        });
    }

    /// `schema` compiled, or the finding of why not (its validator serves a slot's `default`).
    fn schema(&mut self, path: &str, schema: &Value) -> Option<CompiledSchema> {
        match compile_schema(schema) {
            Ok(compiled) => Some(compiled),
            Err(SchemaCompileError::OverBudget(over)) => {
                let over = over.under(path);
                self.fatal("over_budget", &over.path.clone(), &over.to_string());
                None
            }
            Err(SchemaCompileError::Invalid(reason)) => {
                self.fatal(
                    "invalid_schema",
                    path,
                    &format!("does not compile as JSON Schema 2020-12: {reason}"),
                );
                None
            }
        }
    }

    fn props_spec(&mut self, path: &str, value: &Value) -> Option<Value> {
        let Some(map) = value.as_object() else {
            self.fatal("not_an_object", path, "propsSpec must be a JSON Schema object");
            return None;
        };
        let mut spec = map.clone();
        match spec.get("type") {
            None => {
                spec.insert("type".into(), json!("object"));
                self.amend(
                    "props_type_added",
                    &format!("{path}/type"),
                    "props are an object: `type: \"object\"` added".into(),
                );
            }
            Some(Value::String(t)) if t == "object" => {}
            Some(_) => {
                self.fatal(
                    "props_not_object",
                    &format!("{path}/type"),
                    "propsSpec must describe an object (`type: \"object\"`)",
                );
                return None;
            }
        }
        let spec = Value::Object(spec);
        let compiled = self.schema(path, &spec)?;
        if let Some(kept) = &mut self.kept {
            kept.props = Some(compiled);
        }
        Some(spec)
    }

    /// Keeps `compiled`, the validator of `entry`'s schema, when the caller keeps validators.
    fn keep(&mut self, entry: EntrySchema, compiled: Option<CompiledSchema>) {
        if let (Some(kept), Some(compiled)) = (&mut self.kept, compiled) {
            kept.entries.push((entry, compiled));
        }
    }

    fn named_entries(&mut self, path: &str, value: &Value, rule: EntryRule) -> Option<Value> {
        let Some(entries) = value.as_object() else {
            self.fatal("not_an_object", path, "must be an object keyed by name");
            return None;
        };
        let mut agreed = Map::new();
        for (name, entry) in entries {
            let entry_path = format!("{path}/{}", escape(name));
            if !valid_name(name) {
                self.fatal(
                    "invalid_name",
                    &entry_path,
                    "names start with a letter or `_`, use letters, digits, `_ . : -`, at most 64 characters",
                );
                continue;
            }
            let Some(entry) = entry.as_object() else {
                self.fatal("not_an_object", &entry_path, "each entry must be an object");
                continue;
            };
            if let Some(value) = rule(self, name, &entry_path, entry) {
                agreed.insert(name.clone(), value);
            }
        }
        Some(Value::Object(agreed))
    }

    fn drop_unknown(&mut self, path: &str, entry: &Map<String, Value>, allowed: &[&str]) -> Map<String, Value> {
        let mut kept = Map::new();
        for (key, value) in entry {
            if allowed.contains(&key.as_str()) {
                kept.insert(key.clone(), value.clone());
            } else {
                self.amend(
                    "unknown_key",
                    &format!("{path}/{}", escape(key)),
                    format!("unknown key `{key}` removed; allowed: {}", allowed.join(", ")),
                );
            }
        }
        kept
    }

    /// The entry's schema checked, `{}` added when it has none: `None` when it does not compile,
    /// else its validator (none for the `{}` added, which accepts anything).
    fn required_schema(&mut self, path: &str, entry: &mut Map<String, Value>) -> Option<Option<CompiledSchema>> {
        match entry.get("schema") {
            None => {
                entry.insert("schema".into(), json!({}));
                self.amend(
                    "schema_added",
                    &format!("{path}/schema"),
                    "no schema given: `{}` (any value) assumed".into(),
                );
                Some(None)
            }
            Some(schema) => self.schema(&format!("{path}/schema"), schema).map(Some),
        }
    }

    fn action_entry(&mut self, name: &str, path: &str, entry: &Map<String, Value>) -> Option<Value> {
        let mut entry = self.drop_unknown(path, entry, &["schema", "description"]);
        let compiled = self.required_schema(path, &mut entry)?;
        self.keep(EntrySchema::Action(name.to_owned()), compiled);
        Some(Value::Object(entry))
    }

    fn stream_entry(&mut self, name: &str, path: &str, entry: &Map<String, Value>) -> Option<Value> {
        if name.starts_with(RESERVED_CHANNEL_PREFIX) {
            self.fatal(
                "reserved_channel",
                path,
                "channel names starting `_svc:` are reserved for the server",
            );
            return None;
        }
        let mut entry = self.drop_unknown(path, entry, &["mode", "schema", "complete", "source", "description"]);
        match entry.get("mode") {
            None => {
                entry.insert("mode".into(), json!("append"));
                self.amend(
                    "mode_added",
                    &format!("{path}/mode"),
                    "no mode given: `append` assumed".into(),
                );
            }
            Some(Value::String(m)) if m == "append" || m == "replace" => {}
            Some(_) => {
                self.fatal(
                    "invalid_mode",
                    &format!("{path}/mode"),
                    "mode must be `append` or `replace`",
                );
                return None;
            }
        }
        if entry.get("complete").is_some_and(|c| !c.is_boolean()) {
            self.fatal(
                "invalid_complete",
                &format!("{path}/complete"),
                "complete must be a boolean",
            );
            return None;
        }
        if let Some(source) = entry.get("source") {
            let tool_ok = source
                .get("tool")
                .and_then(Value::as_str)
                .is_some_and(|t| !t.is_empty());
            let interval_ok = source
                .get("intervalMs")
                .is_none_or(|i| i.as_u64().is_some_and(|ms| ms >= 250));
            if !tool_ok || !interval_ok {
                self.fatal(
                    "invalid_source",
                    &format!("{path}/source"),
                    "source is `{ tool: string, intervalMs?: integer >= 250 }`",
                );
                return None;
            }
        }
        let compiled = self.required_schema(path, &mut entry)?;
        self.keep(EntrySchema::Stream(name.to_owned()), compiled);
        Some(Value::Object(entry))
    }

    fn context_entry(&mut self, name: &str, path: &str, entry: &Map<String, Value>) -> Option<Value> {
        let mut entry = self.drop_unknown(path, entry, &["schema", "default", "description"]);
        // The validator compiled to check the schema checks the default too: compiled once.
        let validator = self.required_schema(path, &mut entry)?;
        if let (Some(default), Some(validator)) = (entry.get("default"), &validator)
            && !validator.is_valid(default)
        {
            entry.shift_remove("default");
            self.amend(
                "default_removed",
                &format!("{path}/default"),
                "the default does not match the slot schema and was removed".into(),
            );
        }
        self.keep(EntrySchema::Context(name.to_owned()), validator);
        Some(Value::Object(entry))
    }

    fn client_capabilities(&mut self, path: &str, value: &Value) -> Option<Value> {
        let Some(map) = value.as_object() else {
            self.fatal("not_an_object", path, "clientCapabilities must be an object");
            return None;
        };
        let kept = self.drop_unknown(path, map, &["gadgets"]);
        if let Some(gadgets) = kept.get("gadgets") {
            let versions_ok = gadgets.as_object().is_some_and(|g| g.values().all(Value::is_string));
            if !versions_ok {
                self.fatal(
                    "invalid_gadgets",
                    &format!("{path}/gadgets"),
                    "gadgets maps a package name to a version string",
                );
                return None;
            }
        }
        Some(Value::Object(kept))
    }

    fn agent_capabilities(&mut self, path: &str, value: &Value) -> Option<Value> {
        let Some(map) = value.as_object() else {
            self.fatal("not_an_object", path, "agentCapabilities must be an object");
            return None;
        };
        let kept = self.drop_unknown(path, map, &["tools"]);
        if let Some(tools) = kept.get("tools") {
            let names_ok = tools.as_array().is_some_and(|t| t.iter().all(Value::is_string));
            if !names_ok {
                self.fatal(
                    "invalid_tools",
                    &format!("{path}/tools"),
                    "tools is an array of tool names",
                );
                return None;
            }
        }
        Some(Value::Object(kept))
    }
}

fn valid_name(name: &str) -> bool {
    let mut chars = name.chars();
    let first_ok = chars.next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
    first_ok
        && name.len() <= MAX_NAME_LEN
        && chars.all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-'))
}

/// JSON Pointer escaping of one reference token (RFC 6901).
fn escape(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(findings: &[Finding]) -> Vec<&'static str> {
        findings.iter().map(|f| f.code).collect()
    }

    #[test]
    fn a_clean_draft_is_agreed_verbatim() {
        let draft = json!({
            "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
            "actionSpec": { "approve": { "schema": { "type": "object" }, "description": "ok" } },
            "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" }, "complete": true } },
            "contextSpec": { "tab": { "schema": { "type": "string" }, "default": "a" } },
            "clientCapabilities": { "gadgets": { "@svc/gadgets": "1.0.0" } },
            "agentCapabilities": { "tools": ["lookup"] }
        });
        let agreed = negotiate(&draft).unwrap();
        assert!(!agreed.amended());
        assert_eq!(agreed.contract.as_value(), draft);
    }

    #[test]
    fn the_validators_compiled_are_handed_back_by_the_schema_each_checks() {
        let draft = json!({
            "propsSpec": { "properties": { "n": { "type": "integer" } } },
            "actionSpec": { "approve": { "schema": { "required": ["by"] } }, "skip": {} },
            "streamSpec": { "log": { "mode": "append", "schema": { "type": "string" } } },
            "contextSpec": { "tab": { "schema": { "enum": ["a", "b"] }, "default": "c" } }
        });
        let (agreed, kept) = negotiate_keeping_validators(&draft).unwrap();
        assert_eq!(agreed, negotiate(&draft).unwrap());
        let props = kept.props.expect("propsSpec's validator");
        assert_eq!(props.schema_bytes(), agreed.contract.props_schema().to_string().len());
        assert!(props.is_valid(&json!({ "n": 1 })) && !props.is_valid(&json!([])));
        let entries: Vec<&EntrySchema> = kept.entries.iter().map(|(entry, _)| entry).collect();
        assert_eq!(
            entries,
            [
                &EntrySchema::Action("approve".into()),
                &EntrySchema::Stream("log".into()),
                &EntrySchema::Context("tab".into())
            ],
            "none for the `{{}}` added to `skip`"
        );
        for (entry, compiled) in &kept.entries {
            let held = agreed.contract.entry_schema(entry).unwrap();
            assert_eq!(compiled.schema_bytes(), held.to_string().len(), "{entry:?}");
        }
        let declined = json!({ "propsSpec": { "type": "object" }, "actionSpec": { "go": { "schema": 1 } } });
        assert!(negotiate_keeping_validators(&declined).is_err());
    }

    #[test]
    fn empty_contract_is_agreed() {
        assert!(!negotiate(&json!({})).unwrap().amended());
    }

    #[test]
    fn repairable_drafts_are_amended() {
        let cases = [
            (json!({ "extra": 1 }), "unknown_key", "/extra"),
            (
                json!({ "propsSpec": { "properties": {} } }),
                "props_type_added",
                "/propsSpec/type",
            ),
            (
                json!({ "actionSpec": { "go": {} } }),
                "schema_added",
                "/actionSpec/go/schema",
            ),
            (
                json!({ "actionSpec": { "go": { "schema": {}, "label": "x" } } }),
                "unknown_key",
                "/actionSpec/go/label",
            ),
            (
                json!({ "streamSpec": { "log": { "schema": {} } } }),
                "mode_added",
                "/streamSpec/log/mode",
            ),
            (
                json!({ "contextSpec": { "tab": { "schema": { "type": "string" }, "default": 3 } } }),
                "default_removed",
                "/contextSpec/tab/default",
            ),
            (
                json!({ "clientCapabilities": { "gadgets": {}, "x": 1 } }),
                "unknown_key",
                "/clientCapabilities/x",
            ),
        ];
        for (draft, code, path) in cases {
            let agreed = negotiate(&draft).unwrap_or_else(|e| panic!("{draft}: {e}"));
            assert_eq!(codes(&agreed.amendments), vec![code], "{draft}");
            assert_eq!(agreed.amendments[0].path, path);
        }
    }

    #[test]
    fn unrepairable_drafts_are_declined_with_the_path() {
        let cases = [
            (json!([]), "not_an_object", ""),
            (
                json!({ "propsSpec": { "type": "array" } }),
                "props_not_object",
                "/propsSpec/type",
            ),
            (
                json!({ "propsSpec": { "type": "object", "properties": { "a": { "type": 5 } } } }),
                "invalid_schema",
                "/propsSpec",
            ),
            (
                json!({ "actionSpec": { "9lives": { "schema": {} } } }),
                "invalid_name",
                "/actionSpec/9lives",
            ),
            (json!({ "actionSpec": { "go": 1 } }), "not_an_object", "/actionSpec/go"),
            (
                json!({ "streamSpec": { "_svc:lifecycle": { "schema": {} } } }),
                "reserved_channel",
                "/streamSpec/_svc:lifecycle",
            ),
            (
                json!({ "streamSpec": { "log": { "mode": "merge" } } }),
                "invalid_mode",
                "/streamSpec/log/mode",
            ),
            (
                json!({ "streamSpec": { "log": { "complete": "yes" } } }),
                "invalid_complete",
                "/streamSpec/log/complete",
            ),
            (
                json!({ "streamSpec": { "log": { "source": { "tool": "" } } } }),
                "invalid_source",
                "/streamSpec/log/source",
            ),
            (
                json!({ "clientCapabilities": { "gadgets": { "x": 1 } } }),
                "invalid_gadgets",
                "/clientCapabilities/gadgets",
            ),
            (
                json!({ "agentCapabilities": { "tools": [1] } }),
                "invalid_tools",
                "/agentCapabilities/tools",
            ),
        ];
        for (draft, code, path) in cases {
            let err = negotiate(&draft).expect_err(&draft.to_string());
            assert_eq!(codes(&err.findings), vec![code], "{draft}");
            assert_eq!(err.findings[0].path, path);
        }
    }
}

#[cfg(test)]
mod documented_schema {
    use super::*;

    /// The published JSON Schema of the contract agrees with negotiation on clean drafts.
    #[test]
    fn docs_schema_accepts_what_negotiation_agrees_verbatim() {
        let schema: Value = serde_json::from_str(include_str!("../../../docs/contract.schema.json")).unwrap();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let clean = json!({
            "propsSpec": { "type": "object", "properties": { "title": { "type": "string" } } },
            "actionSpec": { "approve": { "schema": { "type": "object" } } },
            "streamSpec": { "log": { "mode": "append", "schema": {}, "source": { "tool": "tail", "intervalMs": 500 } } },
            "contextSpec": { "tab": { "schema": { "type": "string" }, "default": "a" } },
            "clientCapabilities": { "gadgets": { "@svc/gadgets": "1.0.0" } },
            "agentCapabilities": { "tools": [] }
        });
        assert!(!negotiate(&clean).unwrap().amended());
        assert!(validator.is_valid(&clean));
        let reserved = json!({ "streamSpec": { "_svc:x": { "mode": "append", "schema": {} } } });
        assert!(negotiate(&reserved).is_err());
        assert!(!validator.is_valid(&reserved));
    }
}
