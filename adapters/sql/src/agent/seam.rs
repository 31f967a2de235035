//! Where JSON columns become values and back.

use serde_json::Value;
use svc_application::ports::RepositoryError;
use svc_domain::contract::Contract;

pub fn to_text(value: &Value) -> String {
    value.to_string()
}

/// The JSON stored in `column` (`table.column`); text that is not JSON is that column corrupt.
pub fn from_text(column: &'static str, text: &str) -> Result<Value, RepositoryError> {
    serde_json::from_str(text).map_err(|e| RepositoryError::Corrupt {
        column,
        reason: format!("not JSON: {e}"),
    })
}

/// A stored contract (handshakes, sessions, blueprints), parsed here (once per text: see
/// [`parsed_contracts`](super::parsed_contracts)): anything but a JSON object is refused as
/// [`RepositoryError::Corrupt`], never read as an empty contract.
pub fn contract_from_text(column: &'static str, text: &str) -> Result<Contract, RepositoryError> {
    super::parsed_contracts::parsed(text, |text| {
        Contract::try_from(from_text(column, text)?).map_err(|e| RepositoryError::Corrupt {
            column,
            reason: e.to_string(),
        })
    })
}

pub fn contract_to_text(contract: &Contract) -> String {
    serde_json::to_string(contract).expect("a contract is a JSON object")
}
