//! The JSON Pointers of the places a walk over a client's JSON reaches, each kept as its last
//! token and its parent's place. A walk then holds about as many bytes as its input's keys,
//! however deep and wide the input is; a pointer string per place held its parent's whole
//! pointer again, so a 2 MiB key above a million items asked for terabytes. A pointer is spelled
//! out only when a refusal names it.

use super::budgets::escape;

/// A place a walk reached: an index into its [`Trail`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct At(usize);

impl At {
    /// Places are numbered from 0 (the root) in the order they were reached.
    pub(super) fn index(self) -> usize {
        self.0
    }
}

#[derive(Debug)]
pub(super) struct Trail {
    /// Each place's parent and its escaped reference token (RFC 6901); place 0 is the root.
    places: Vec<(Option<At>, Box<str>)>,
}

impl Trail {
    /// A trail holding only the root (the empty pointer).
    pub(super) fn new() -> Self {
        Self {
            places: vec![(None, "".into())],
        }
    }

    pub(super) fn root() -> At {
        At(0)
    }

    /// The place under `parent` named by `token` (not yet escaped).
    pub(super) fn child(&mut self, parent: At, token: &str) -> At {
        let escaped = if token.contains(['~', '/']) {
            escape(token).into_boxed_str()
        } else {
            token.into()
        };
        self.places.push((Some(parent), escaped));
        At(self.places.len() - 1)
    }

    /// The place's own reference token, escaped (`""` for the root).
    pub(super) fn token(&self, at: At) -> &str {
        &self.places[at.0].1
    }

    /// The place's JSON Pointer (`""` for the root).
    pub(super) fn pointer(&self, at: At) -> String {
        let mut tokens = Vec::new();
        let mut place = Some(at);
        while let Some(At(index)) = place {
            let (parent, token) = &self.places[index];
            if parent.is_some() {
                tokens.push(&**token);
            }
            place = *parent;
        }
        tokens.iter().rev().fold(String::new(), |mut pointer, token| {
            pointer.push('/');
            pointer.push_str(token);
            pointer
        })
    }

    /// Whether `pointer` is the place's JSON Pointer, compared token by token from the place up
    /// (nothing is spelled out, so checking is as long as `pointer`, not the place's depth).
    pub(super) fn is(&self, at: At, pointer: &str) -> bool {
        let mut rest = pointer;
        let mut place = at;
        loop {
            let (parent, token) = &self.places[place.0];
            let Some(parent) = parent else {
                return rest.is_empty();
            };
            let Some(before) = rest.strip_suffix(&**token).and_then(|r| r.strip_suffix('/')) else {
                return false;
            };
            rest = before;
            place = *parent;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pointers_are_spelled_and_compared_with_their_tokens_escaped() {
        let mut trail = Trail::new();
        let root = Trail::root();
        let defs = trail.child(root, "$defs");
        let odd = trail.child(defs, "a/b~c");
        let item = trail.child(odd, "0");
        assert_eq!(trail.pointer(root), "");
        assert_eq!(trail.pointer(item), "/$defs/a~1b~0c/0");
        assert!(trail.is(item, "/$defs/a~1b~0c/0"));
        assert!(trail.is(root, ""));
        for other in [
            "/$defs/a~1b~0c",
            "/$defs/a/b~c/0",
            "$defs/a~1b~0c/0",
            "/x/$defs/a~1b~0c/0",
            "",
        ] {
            assert!(!trail.is(item, other), "{other}");
        }
    }
}
