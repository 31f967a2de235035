//! Where JSON columns become values and back.

use serde_json::Value;
use svc_application::ports::RepositoryError;
use svc_domain::contract::Contract;

pub fn to_text(value: &Value) -> String {
    value.to_string()
}

pub fn from_text(text: &str) -> Result<Value, RepositoryError> {
    serde_json::from_str(text).map_err(|e| RepositoryError::Unavailable(anyhow::anyhow!("corrupt JSON column: {e}")))
}

/// A stored contract (handshakes, sessions, blueprints), parsed once here: anything but a JSON
/// object is refused as [`RepositoryError::Corrupt`], never read as an empty contract.
pub fn contract_from_text(text: &str) -> Result<Contract, RepositoryError> {
    Contract::try_from(from_text(text)?).map_err(|e| RepositoryError::Corrupt {
        column: "contract",
        reason: e.to_string(),
    })
}

pub fn contract_to_text(contract: &Contract) -> String {
    serde_json::to_string(contract).expect("a contract is a JSON object")
}
