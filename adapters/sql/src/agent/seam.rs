//! Where JSON columns become values and back.

use serde_json::Value;
use svc_application::ports::RepositoryError;

pub fn to_text(value: &Value) -> String {
    value.to_string()
}

pub fn from_text(text: &str) -> Result<Value, RepositoryError> {
    serde_json::from_str(text).map_err(|e| RepositoryError::Unavailable(anyhow::anyhow!("corrupt JSON column: {e}")))
}
