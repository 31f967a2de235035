//! The paths along which subschemas apply at one value (in-place applicators and `$ref`s): a
//! cycle among them never ends, and their chains and fan-out multiply the work at that value.

use super::limit;
use super::schema_graph::SchemaGraph;
use crate::budget::{Budget, BudgetExceeded};

impl SchemaGraph {
    /// The JSON Pointer of subschema `node`.
    fn pointer(&self, node: usize) -> String {
        self.trail.pointer(self.places[node])
    }

    /// Walks the in-place edges from every subschema, without recursion (a chain may be
    /// thousands of hops long), refusing a cycle, a chain over `ref_depth` and a fan-out over
    /// `schema_expansion`.
    pub(super) fn check_in_place_paths(&self) -> Result<(), BudgetExceeded> {
        let (max_hops, max_applied) = (limit(Budget::RefDepth), limit(Budget::SchemaExpansion));
        const NEW: u8 = 0;
        const OPEN: u8 = 1;
        const DONE: u8 = 2;
        let count = self.places.len();
        let mut state = vec![NEW; count];
        // Subschemas applied at one value starting here (itself included), and `$ref` hops.
        let mut applied = vec![0usize; count];
        let mut hops = vec![0usize; count];
        for start in 0..count {
            if state[start] != NEW {
                continue;
            }
            state[start] = OPEN;
            let mut stack: Vec<(usize, usize)> = vec![(start, 0)];
            while let Some((node, next)) = stack.last_mut() {
                let node = *node;
                if let Some(edge) = self.in_place[node].get(*next).copied() {
                    *next += 1;
                    match state[edge.to] {
                        NEW => {
                            state[edge.to] = OPEN;
                            stack.push((edge.to, 0));
                        }
                        OPEN => {
                            return Err(BudgetExceeded::new(
                                Budget::RefDepth,
                                self.pointer(node),
                                format!(
                                    "a `$ref` cycle back to {} that never descends into the value",
                                    display_pointer(&self.pointer(edge.to))
                                ),
                            ));
                        }
                        _ => {}
                    }
                    continue;
                }
                let edges = &self.in_place[node];
                applied[node] = edges.iter().fold(1usize, |sum, e| sum.saturating_add(applied[e.to]));
                hops[node] = edges
                    .iter()
                    .map(|e| hops[e.to] + usize::from(e.is_ref))
                    .max()
                    .unwrap_or(0);
                if hops[node] > max_hops {
                    return Err(BudgetExceeded::new(
                        Budget::RefDepth,
                        self.pointer(node),
                        format!("{} hops", hops[node]),
                    ));
                }
                if applied[node] > max_applied {
                    return Err(BudgetExceeded::new(
                        Budget::SchemaExpansion,
                        self.pointer(node),
                        format!("{} subschemas", applied[node]),
                    ));
                }
                state[node] = DONE;
                stack.pop();
            }
        }
        Ok(())
    }
}

fn display_pointer(pointer: &str) -> &str {
    if pointer.is_empty() { "the root" } else { pointer }
}
