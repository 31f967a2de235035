//! The local side of the registry commands: which registry and token a command uses, what
//! publish signs and sends, and what install verifies and writes. The HTTP side is
//! [`crate::registry_client`].

pub mod credentials;
pub mod dirty;
pub mod install;
pub mod project;
pub mod publish;
pub mod registry_url;
pub mod token_choice;
pub mod verify;

#[cfg(test)]
mod install_tests;
#[cfg(test)]
mod payload_agreement_tests;
