//! The app manifest `svc.json` and the `svc.ui.json` files its `blueprints.include` globs name,
//! from bytes to checked values: JSON, the JSON Schemas in `docs/schemas/`, gadget transports,
//! theme ids and glob syntax. Pure (no file access), so the fuzzer feeds it bytes directly;
//! infrastructure reads the files, matches the globs and puts the file name before each error.

mod app;
mod checked_json;
mod error;
mod themes;
mod ui;

pub use app::{AppManifest, parse_manifest};
pub use error::ManifestError;
pub use ui::{UiManifest, parse_ui};

/// The JSON Schema of `svc.json` (docs/schemas/svc.schema.json).
pub const MANIFEST_SCHEMA: &str = include_str!("../../../docs/schemas/svc.schema.json");
/// The JSON Schema of `svc.ui.json` (docs/schemas/svc.ui.schema.json).
pub const UI_SCHEMA: &str = include_str!("../../../docs/schemas/svc.ui.schema.json");
