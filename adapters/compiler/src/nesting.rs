//! How deep a parsed component's syntax tree nests, measured once right after parsing so the
//! `component_nesting` budget is checked before semantic analysis, the transformer and the code
//! generator (each recursive) walk the tree.

use oxc::ast::AstKind;
use oxc::ast::ast::Program;
use oxc::ast_visit::Visit;
use oxc::span::GetSpan;

/// The deepest nesting of `program` and the byte offset where that deepest node starts.
pub(crate) fn deepest_nesting(program: &Program<'_>) -> (usize, u32) {
    let mut depth = Depth::default();
    depth.visit_program(program);
    (depth.max, depth.deepest_at)
}

#[derive(Default)]
struct Depth {
    current: usize,
    max: usize,
    deepest_at: u32,
}

impl<'a> Visit<'a> for Depth {
    fn enter_node(&mut self, kind: AstKind<'a>) {
        self.current += 1;
        if self.current > self.max {
            self.max = self.current;
            self.deepest_at = kind.span().start;
        }
    }

    fn leave_node(&mut self, _kind: AstKind<'a>) {
        self.current -= 1;
    }
}
