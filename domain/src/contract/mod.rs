//! The data contract an agent negotiates before a render, and every rule about it: validation
//! findings and amendments, reuse keys, the grammar-safe profile and props validation.
//!
//! The shape (our design where Document 1 says "not shown") is documented as a JSON Schema in
//! `docs/contract.schema.json`:
//! `{ propsSpec?, actionSpec?, streamSpec?, contextSpec?, clientCapabilities?, agentCapabilities? }`.

mod budgets;
pub mod draft_limits;
mod fixture_props;
mod hashing;
mod light_check;
mod negotiation;
mod pointer_trail;
mod profile;
mod schema_check;
mod validation_work;
#[cfg(test)]
mod walk_memory_tests;

pub use budgets::{check_contract_budgets, check_schema_budgets};
pub use fixture_props::fixture_props;
pub use hashing::{
    canonical_sha256, canonicalisations_on_this_thread, contract_hash, entry_validator_key, props_schema_hash,
    props_validator_key, sha256_hex, validator_key, variant_key,
};
pub use negotiation::{
    AgreedValidators, Finding, FindingSeverity, Negotiated, NegotiationError, negotiate, negotiate_keeping_validators,
};
pub use profile::{PropsSchemaProfile, profile_of};
pub use schema_check::{
    CompiledSchema, MAX_LISTED_VIOLATIONS, PATTERN_COMPILED_BYTES, SchemaCompileError, SchemaViolation, Violations,
    compile_schema,
};

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::Arc;

use serde_json::{Map, Value, json};

/// Top-level keys a contract may carry.
pub const CONTRACT_KEYS: [&str; 6] = [
    "propsSpec",
    "actionSpec",
    "streamSpec",
    "contextSpec",
    "clientCapabilities",
    "agentCapabilities",
];

/// Channel names with this prefix belong to the server (generation progress on `_svc:lifecycle`).
pub const RESERVED_CHANNEL_PREFIX: &str = "_svc:";

/// The channel on which generation progress is delivered as `data`.
pub const LIFECYCLE_CHANNEL: &str = "_svc:lifecycle";

/// An agreed contract: a JSON object that passed negotiation, with typed accessors. It serializes
/// as that object; deserializing anything but an object fails. Immutable once agreed, so copies
/// (a render hands it to the session, the blueprint, the answer) share one object.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Contract(Arc<Agreed>);

/// The agreed object and, once asked for, its hashes (the contract never changes, so neither do
/// they: a handshake and its renders canonicalise it once).
#[derive(Debug, Default)]
struct Agreed {
    object: Map<String, Value>,
    hash: std::sync::OnceLock<String>,
    props_schema_hash: std::sync::OnceLock<String>,
    props_validator_key: std::sync::OnceLock<String>,
    /// The validator keys of its entries' schemas, each computed the first time it is asked for:
    /// an emit or an action used to canonicalise its schema (up to 256 KiB) on every call.
    entry_validator_keys: std::sync::Mutex<HashMap<EntrySchema, String>>,
}

/// Which entry's schema of a contract: an action's, a stream channel's or a context slot's.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum EntrySchema {
    /// `actionSpec[intent].schema`.
    Action(String),
    /// `streamSpec[channel].schema` (`{}` when the channel declares none).
    Stream(String),
    /// `contextSpec[slot].schema`.
    Context(String),
}

impl PartialEq for Agreed {
    fn eq(&self, other: &Self) -> bool {
        self.object == other.object
    }
}

impl std::ops::Deref for Agreed {
    type Target = Map<String, Value>;

    fn deref(&self) -> &Self::Target {
        &self.object
    }
}

impl serde::Serialize for Contract {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.object.serialize(serializer)
    }
}

impl<'de> serde::Deserialize<'de> for Contract {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        Map::deserialize(deserializer).map(Self::from_agreed)
    }
}

/// A contract that is not a JSON object: callers answer it as an invalid argument naming the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("must be a JSON object")]
pub struct ContractNotAnObject;

impl TryFrom<Value> for Contract {
    type Error = ContractNotAnObject;

    /// Parses a contract read back from storage or from a manifest; never negotiates.
    fn try_from(value: Value) -> Result<Self, Self::Error> {
        match value {
            Value::Object(map) => Ok(Self::from_agreed(map)),
            _ => Err(ContractNotAnObject),
        }
    }
}

impl From<Contract> for Value {
    fn from(contract: Contract) -> Self {
        match Arc::try_unwrap(contract.0) {
            Ok(agreed) => Value::Object(agreed.object),
            Err(shared) => Value::Object(shared.object.clone()),
        }
    }
}

/// A stream channel the server fills by polling a tool (`streamSpec[c].source`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StreamSource {
    pub tool: String,
    /// The interval the contract asks for; the server may poll less often.
    pub interval_ms: Option<u64>,
}

/// How a stream channel folds payloads in the card.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StreamMode {
    /// Each payload adds to the card's list.
    Append,
    /// Each payload replaces the last value.
    Replace,
}

impl StreamMode {
    pub fn parse(raw: &str) -> Option<Self> {
        match raw {
            "append" => Some(Self::Append),
            "replace" => Some(Self::Replace),
            _ => None,
        }
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Append => "append",
            Self::Replace => "replace",
        }
    }
}

/// A declared stream channel.
#[derive(Debug, Clone, PartialEq)]
pub struct StreamChannel {
    pub mode: StreamMode,
    pub complete: bool,
}

impl Contract {
    /// Wraps an object already agreed by [`negotiate`]; callers outside negotiation use this only
    /// for contracts read back from storage.
    pub fn from_agreed(value: Map<String, Value>) -> Self {
        Self(Arc::new(Agreed {
            object: value,
            ..Agreed::default()
        }))
    }

    pub fn as_value(&self) -> Value {
        Value::Object(self.0.object.clone())
    }

    pub fn as_map(&self) -> &Map<String, Value> {
        &self.0.object
    }

    /// The contract's hash, computed by `compute` the first time it is asked for.
    pub(crate) fn hash_once(&self, compute: impl FnOnce(&Self) -> String) -> String {
        self.0.hash.get_or_init(|| compute(self)).clone()
    }

    /// The hash of the props schema, computed by `compute` the first time it is asked for.
    pub(crate) fn props_schema_hash_once(&self, compute: impl FnOnce(&Self) -> String) -> String {
        self.0.props_schema_hash.get_or_init(|| compute(self)).clone()
    }

    /// The props schema's validator key, computed by `compute` the first time it is asked for.
    pub(crate) fn props_validator_key_once(&self, compute: impl FnOnce(&Self) -> String) -> String {
        self.0.props_validator_key.get_or_init(|| compute(self)).clone()
    }

    /// The validator key of `entry`'s schema, computed by `compute` the first time it is asked
    /// for (outside the lock: two first callers may both compute it); `None` when the contract
    /// does not declare the entry, so only declared entries are kept.
    pub(crate) fn entry_validator_key_once(
        &self,
        entry: &EntrySchema,
        compute: impl FnOnce(&Value) -> String,
    ) -> Option<String> {
        let keys = || {
            self.0
                .entry_validator_keys
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
        };
        if let Some(key) = keys().get(entry) {
            return Some(key.clone());
        }
        let key = compute(self.entry_schema(entry)?.as_ref());
        keys().insert(entry.clone(), key.clone());
        Some(key)
    }

    /// The schema of `entry`, when the contract declares the entry; borrowed from the contract
    /// unless it is a channel's implicit `{}`.
    pub fn entry_schema(&self, entry: &EntrySchema) -> Option<Cow<'_, Value>> {
        let (section, name) = match entry {
            EntrySchema::Action(name) => ("actionSpec", name),
            EntrySchema::Stream(name) => ("streamSpec", name),
            EntrySchema::Context(name) => ("contextSpec", name),
        };
        let declared = self.section(section)?.get(name)?;
        match (declared.get("schema"), entry) {
            (Some(schema), _) => Some(Cow::Borrowed(schema)),
            (None, EntrySchema::Stream(_)) => Some(Cow::Owned(json!({}))),
            (None, _) => None,
        }
    }

    /// The schema props are validated against: `propsSpec`, or "any object" when absent.
    pub fn props_schema(&self) -> Value {
        self.0
            .get("propsSpec")
            .cloned()
            .unwrap_or_else(|| json!({ "type": "object" }))
    }

    pub fn declares_props_spec(&self) -> bool {
        self.0.contains_key("propsSpec")
    }

    fn section(&self, key: &str) -> Option<&Map<String, Value>> {
        self.0.get(key).and_then(Value::as_object)
    }

    pub fn action_intents(&self) -> Vec<String> {
        self.section("actionSpec")
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    pub fn action_schema(&self, intent: &str) -> Option<Value> {
        self.section("actionSpec")?.get(intent)?.get("schema").cloned()
    }

    /// A declared channel's mode and completion; its schema is [`Self::entry_schema`] (not copied
    /// here: it may be 256 KiB, and an emit reads the channel every time).
    pub fn stream_channel(&self, channel: &str) -> Option<StreamChannel> {
        let entry = self.section("streamSpec")?.get(channel)?;
        Some(StreamChannel {
            mode: entry
                .get("mode")
                .and_then(Value::as_str)
                .and_then(StreamMode::parse)
                .unwrap_or(StreamMode::Append),
            complete: entry.get("complete").and_then(Value::as_bool).unwrap_or(false),
        })
    }

    /// The tool a `streamSpec` channel is filled from (`source: { tool, intervalMs? }`), if any.
    pub fn stream_source(&self, channel: &str) -> Option<StreamSource> {
        let source = self.section("streamSpec")?.get(channel)?.get("source")?;
        let tool = source.get("tool")?.as_str().filter(|t| !t.is_empty())?;
        Some(StreamSource {
            tool: tool.to_owned(),
            interval_ms: source.get("intervalMs").and_then(Value::as_u64),
        })
    }

    pub fn context_slots(&self) -> Vec<String> {
        self.section("contextSpec")
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Default value of every contextSpec slot (null when the slot declares none).
    pub fn context_defaults(&self) -> Map<String, Value> {
        self.section("contextSpec")
            .map(|slots| {
                slots
                    .iter()
                    .map(|(name, slot)| (name.clone(), slot.get("default").cloned().unwrap_or(Value::Null)))
                    .collect()
            })
            .unwrap_or_default()
    }

    /// Packages the component may import, from `clientCapabilities.gadgets`.
    pub fn gadget_packages(&self) -> Vec<String> {
        self.section("clientCapabilities")
            .and_then(|c| c.get("gadgets"))
            .and_then(Value::as_object)
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default()
    }

    /// Packages a component for this contract may import besides React: the declared gadget
    /// packages and the standard one.
    pub fn importable_packages(&self) -> Vec<String> {
        let mut packages = self.gadget_packages();
        packages.push(crate::gadgets::STANDARD_PACKAGE.to_owned());
        packages
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_an_object_is_a_contract() {
        for not_an_object in [json!([1]), json!("propsSpec"), json!(null), json!(3)] {
            assert_eq!(Contract::try_from(not_an_object), Err(ContractNotAnObject));
        }
        let contract = Contract::try_from(json!({ "propsSpec": { "type": "object" } })).unwrap();
        assert!(contract.declares_props_spec());
    }

    #[test]
    fn an_entrys_validator_key_is_computed_once_per_contract() {
        let schema = json!({ "enum": (0..1000).map(|i| format!("v{i}")).collect::<Vec<_>>() });
        let contract = Contract::try_from(json!({
            "streamSpec": { "log": { "mode": "append", "schema": schema }, "any": { "mode": "append" } },
            "actionSpec": { "pick": { "schema": schema } }
        }))
        .unwrap();
        let log = EntrySchema::Stream("log".into());
        let before = canonicalisations_on_this_thread();
        let first = entry_validator_key(&contract, &log);
        for _ in 0..3 {
            assert_eq!(entry_validator_key(&contract, &log), first);
        }
        assert_eq!(canonicalisations_on_this_thread() - before, 1);
        assert_eq!(first, Some(validator_key(&schema)));
        // Each entry has its own; a channel without a schema accepts anything; none for others.
        assert_eq!(
            entry_validator_key(&contract, &EntrySchema::Action("pick".into())),
            first
        );
        assert_eq!(
            entry_validator_key(&contract, &EntrySchema::Stream("any".into())),
            Some(validator_key(&json!({})))
        );
        assert_eq!(
            entry_validator_key(&contract, &EntrySchema::Stream("nope".into())),
            None
        );
        assert_eq!(
            entry_validator_key(&contract, &EntrySchema::Context("log".into())),
            None
        );
    }

    #[test]
    fn a_contract_serializes_as_its_object_and_refuses_anything_else() {
        let value = json!({ "actionSpec": { "ok": { "schema": {} } } });
        let contract: Contract = serde_json::from_value(value.clone()).unwrap();
        assert_eq!(serde_json::to_value(&contract).unwrap(), value);
        assert!(serde_json::from_value::<Contract>(json!([])).is_err());
    }
}
