//! `QuickJsRenderCheck`: the `RenderCheck` port on an embedded QuickJS engine (rquickjs). A
//! compiled component is rendered once with React's string renderer against fixture props, using
//! the mount runtime's own React and `@svc/gadgets` hooks (`adapters/mount/src/render-check.tsx`,
//! built to `dist/render-check.js`). What it throws becomes a finding for the repair round.
//!
//! Every check gets a fresh engine with a memory limit, a stack limit and a wall-clock budget,
//! so a component that loops, recurses or allocates without end becomes a finding, never a hang.

mod engine;

use std::time::Duration;

use svc_application::ports::generation::{RenderCheck, RenderCheckFailure, RenderCheckInput};

pub use engine::RENDER_CHECK_JS;

/// Budgets of one check.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RenderLimits {
    /// Wall-clock time the component may take to load and render.
    pub time_budget: Duration,
    /// Heap of the whole engine, React included (about 10 MiB of it).
    pub memory_bytes: usize,
    /// JavaScript stack depth, in bytes of the calling thread's stack; below the 2 MiB of
    /// Tokio's blocking threads and Rust's test threads.
    pub stack_bytes: usize,
}

impl Default for RenderLimits {
    fn default() -> Self {
        Self {
            time_budget: Duration::from_secs(2),
            memory_bytes: 64 << 20,
            stack_bytes: 1 << 20,
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct QuickJsRenderCheck {
    limits: RenderLimits,
}

impl QuickJsRenderCheck {
    pub fn new(limits: RenderLimits) -> Self {
        Self { limits }
    }
}

impl RenderCheck for QuickJsRenderCheck {
    fn render(&self, input: &RenderCheckInput<'_>) -> Result<(), RenderCheckFailure> {
        match engine::run(input, &self.limits) {
            Ok(engine::Outcome::Rendered(markup)) => {
                tracing::debug!(markup_bytes = markup.len(), "the render check passed");
                Ok(())
            }
            Ok(engine::Outcome::Threw(finding)) => Err(RenderCheckFailure::Findings(vec![finding])),
            Err(fault) => Err(RenderCheckFailure::Unavailable(fault.to_string())),
        }
    }
}

#[cfg(test)]
mod tests;
