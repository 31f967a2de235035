//! Where a card's component module imports and exports, so the card runtime can rewrite it into
//! an inline script without a JavaScript lexer of its own (docs/live-channel.md,
//! `component.links`). Offsets count UTF-16 code units, as the browser indexes the code.

/// The module's imports (static, dynamic, and re-exports) and its own exports, in source order.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ModuleLinks {
    pub imports: Vec<ImportLink>,
    pub exports: Vec<ExportLink>,
}

/// One `import ... from "x"`, `import("x")`, or `export ... from "x"`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ImportLink {
    /// The specifier; `None` for a dynamic import of a computed one.
    pub specifier: Option<String>,
    /// From the statement's first keyword to its end, the `;` left out.
    pub statement_start: u32,
    pub statement_end: u32,
    /// The specifier's first character, after its quote.
    pub specifier_start: u32,
    pub specifier_end: u32,
    /// For `import(...)`: just after the `import` keyword.
    pub dynamic_at: Option<u32>,
    /// Where `with { ... }` starts, when the import has attributes.
    pub attributes_at: Option<u32>,
}

/// One name the module exports from a binding of its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExportLink {
    pub name: String,
    /// The local binding; `None` for an anonymous default function or class, or a default
    /// expression.
    pub local: Option<String>,
    /// The exported name (for a default export, its `default` keyword).
    pub start: u32,
    pub end: u32,
}

/// Reads a plain JavaScript ES module's links.
pub trait ModuleLinker: Send + Sync {
    /// `None` when the code does not parse as a module (the runtime then says so itself).
    fn links(&self, javascript: &str) -> Option<ModuleLinks>;
}
