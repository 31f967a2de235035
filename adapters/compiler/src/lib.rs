//! TSX -> ES module with oxc, plus the static checks that keep generated components inside the
//! sandbox they are mounted in: React, the gadget packages the caller allows, and nothing that
//! reaches the network or storage behind the live channel's back.
//!
//! These checks are a guard rail that turns common mistakes into findings a generator can repair;
//! the mount's content security policy stays the security boundary.

mod forbidden_use;
mod module_inspector;
mod module_links;
mod module_shape;
mod nesting;
mod oxc_compiler;
mod policy;
mod source_location;

pub use module_inspector::{IN_PROCESS_MODULE_BYTES, OxcModuleInspector, inspect_on_stack};
pub use oxc_compiler::OxcCompiler;
pub use policy::{
    BASE_ALLOWED_IMPORTS, FORBIDDEN_GLOBALS, FORBIDDEN_MEMBERS, GLOBAL_OBJECT_ALIASES, is_import_allowed,
};

#[cfg(test)]
mod tests;
