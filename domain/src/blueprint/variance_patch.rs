//! How large the `variance` of `svc_ops_update_blueprint` may be. A variance names a few design
//! axes (`{ "density": "compact", "tone": "calm" }`): it is stored with the blueprint, hashed into
//! its `variantKey`, shown in every listing row and held by every server's index, so the patch is
//! bounded where it arrives (the tool's `inputSchema`) and the merged variance is bounded too
//! (patches add up: 32 new fields a call would otherwise grow without end).

/// Fields of one patch, and of the variance once merged.
pub const VARIANCE_MAX_FIELDS: usize = 32;
/// Characters of a field's name.
pub const VARIANCE_FIELD_NAME_MAX_CHARS: usize = 64;
/// Characters of a string value. A value is a string, a number or a boolean: an axis's setting,
/// never a nested document.
pub const VARIANCE_VALUE_MAX_CHARS: usize = 200;

/// A merged variance holding more fields than [`VARIANCE_MAX_FIELDS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error(
    "the merged variance would hold {fields} fields, the most it may hold is {VARIANCE_MAX_FIELDS}: clear some with an empty string"
)]
pub struct VarianceTooLarge {
    pub fields: usize,
}

/// Whether a variance of `fields` fields (after the merge) may be stored.
pub fn check_merged(fields: usize) -> Result<(), VarianceTooLarge> {
    if fields <= VARIANCE_MAX_FIELDS {
        Ok(())
    } else {
        Err(VarianceTooLarge { fields })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_merged_variance_holds_at_most_32_fields() {
        assert_eq!(check_merged(0), Ok(()));
        assert_eq!(check_merged(32), Ok(()));
        let refused = check_merged(33).unwrap_err();
        assert_eq!(refused, VarianceTooLarge { fields: 33 });
        assert_eq!(
            refused.to_string(),
            "the merged variance would hold 33 fields, the most it may hold is 32: clear some with an empty string"
        );
    }
}
