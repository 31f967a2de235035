//! Use cases of the service and the port traits they need. Services orchestrate the pure domain
//! through ports; adapters implement the ports.

pub mod ports;
pub mod services;

#[cfg(feature = "testing")]
pub mod testing;
