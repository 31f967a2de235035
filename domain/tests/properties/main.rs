//! The domain's property and vector tests, one binary; one module per former file.

mod hostile_contracts;
mod rfc8785_vectors;
mod wallet_properties;
