//! How many entries the parts of an agent's draft may hold beside its schemas: the counts the
//! complexity budgets (`crate::budget`, one schema at a time) do not see. `svc_handshake`'s
//! `blueprintDraft.contract`, `svc_render`'s `override.contract` and the operator's
//! `svc_ops_generate_blueprint` and `svc_ops_register_blueprint` `contract` are refused past these
//! where they arrive (the tools' `inputSchema`), so a 256 KiB contract cannot ask negotiation to compile
//! thousands of entry schemas or to answer thousands of findings. Each cap is far above what one
//! card declares. The variance beside the contract is bounded like the operator's
//! ([`crate::blueprint::variance_patch`]): it is stored and listed with the blueprint.

use crate::blueprint::variance_patch::VARIANCE_MAX_FIELDS;

/// Top-level keys of a contract: six are known, an unknown one is amended away (one finding each).
pub const CONTRACT_MAX_KEYS: usize = 16;
/// Entries of `actionSpec`, `streamSpec` and `contextSpec`, each: every entry's schema is
/// compiled at negotiation.
pub const SECTION_MAX_ENTRIES: usize = 64;
/// Keys of one entry (an action's, a channel's or a slot's): at most five are known.
pub const ENTRY_MAX_KEYS: usize = 16;
/// Keys of `clientCapabilities` and of `agentCapabilities`: one is known in each.
pub const CAPABILITIES_MAX_KEYS: usize = 16;
/// Packages of `clientCapabilities.gadgets`.
pub const GADGETS_MAX_PACKAGES: usize = 64;
/// Characters of a gadget package's name (npm's longest name).
pub const GADGET_PACKAGE_MAX_CHARS: usize = 214;
/// Characters of a gadget package's version (a version or a range).
pub const GADGET_VERSION_MAX_CHARS: usize = 128;
/// Names of `agentCapabilities.tools`.
pub const TOOLS_MAX_ITEMS: usize = 64;
/// Characters of a tool name (MCP's longest tool name).
pub const TOOL_NAME_MAX_CHARS: usize = 128;

// Every key negotiation knows fits: a known key is never refused for the count.
const _: () = assert!(super::CONTRACT_KEYS.len() <= CONTRACT_MAX_KEYS);

/// A variance after `override.variance` was merged into the handshake's, over
/// [`VARIANCE_MAX_FIELDS`]: each holds up to 32 fields, together they may not.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the merged variance would hold {fields} fields, the most it may hold is {VARIANCE_MAX_FIELDS}: remove some with null"
)]
pub struct MergedVarianceTooLarge {
    pub fields: usize,
}

/// Whether a render's variance of `fields` fields (after its override) may be used.
pub fn check_merged_variance(fields: usize) -> Result<(), MergedVarianceTooLarge> {
    if fields <= VARIANCE_MAX_FIELDS {
        Ok(())
    } else {
        Err(MergedVarianceTooLarge { fields })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merged_render_variance_holds_at_most_32_fields() {
        assert_eq!(check_merged_variance(0), Ok(()));
        assert_eq!(check_merged_variance(32), Ok(()));
        let refused = check_merged_variance(33).unwrap_err();
        assert_eq!(refused, MergedVarianceTooLarge { fields: 33 });
        assert_eq!(
            refused.to_string(),
            "the merged variance would hold 33 fields, the most it may hold is 32: remove some with null"
        );
    }
}
