//! What the generated views use, collected while they are written, so the module imports only the
//! hooks and kit components it calls and carries only the helpers it needs.

use std::collections::BTreeSet;

use crate::helpers::Helper;

/// Hooks from React and from the standard gadget package, in import order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Hook {
    State,
    Ref,
    Props,
    Action,
    Stream,
    ContextSlot,
}

impl Hook {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::State => "useState",
            Self::Ref => "useRef",
            Self::Props => "useProps",
            Self::Action => "useAction",
            Self::Stream => "useStream",
            Self::ContextSlot => "useContextSlot",
        }
    }

    pub(crate) fn is_react(self) -> bool {
        matches!(self, Self::State | Self::Ref)
    }
}

/// Components of the kit (`@svc/gadgets`), the ones a language model's card imports too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Kit {
    Chart,
    DataTable,
    StatusBadge,
}

impl Kit {
    pub(crate) fn name(self) -> &'static str {
        match self {
            Self::Chart => "Chart",
            Self::DataTable => "DataTable",
            Self::StatusBadge => "StatusBadge",
        }
    }
}

#[derive(Debug, Default)]
pub(crate) struct Needs {
    hooks: BTreeSet<Hook>,
    helpers: BTreeSet<Helper>,
    kit: BTreeSet<Kit>,
}

impl Needs {
    pub(crate) fn hook(&mut self, hook: Hook) {
        self.hooks.insert(hook);
    }

    /// Marks `helper` used, with the helpers it calls.
    pub(crate) fn helper(&mut self, helper: Helper) {
        if self.helpers.insert(helper) {
            for dependency in helper.dependencies() {
                self.helper(*dependency);
            }
        }
    }

    pub(crate) fn kit(&mut self, component: Kit) {
        self.kit.insert(component);
    }

    pub(crate) fn kit_components(&self) -> impl Iterator<Item = Kit> + '_ {
        self.kit.iter().copied()
    }

    pub(crate) fn hooks(&self) -> impl Iterator<Item = Hook> + '_ {
        self.hooks.iter().copied()
    }

    pub(crate) fn helpers(&self) -> impl Iterator<Item = Helper> + '_ {
        self.helpers.iter().copied()
    }
}
