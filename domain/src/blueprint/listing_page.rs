//! How many rows a page of `svc_ops_list_blueprints` holds: the same bounds as a page of the
//! credit ledger (`svc_ops_list_credit_transactions`), so the route's listings page alike.

/// Rows of one page: 1 to [`BlueprintPageLimit::MAX`], [`BlueprintPageLimit::DEFAULT`] when the
/// caller names none.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BlueprintPageLimit(u32);

impl BlueprintPageLimit {
    pub const DEFAULT: u32 = 20;
    pub const MAX: u32 = 100;

    pub fn new(requested: Option<u32>) -> Result<Self, InvalidBlueprintPageLimit> {
        match requested.unwrap_or(Self::DEFAULT) {
            limit @ 1..=Self::MAX => Ok(Self(limit)),
            other => Err(InvalidBlueprintPageLimit(other)),
        }
    }

    pub fn get(self) -> u32 {
        self.0
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("limit must be between 1 and {max}, got {0}", max = BlueprintPageLimit::MAX)]
pub struct InvalidBlueprintPageLimit(pub u32);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_page_holds_1_to_100_rows_and_20_by_default() {
        let rows: [(Option<u32>, Result<u32, InvalidBlueprintPageLimit>); 5] = [
            (None, Ok(20)),
            (Some(1), Ok(1)),
            (Some(100), Ok(100)),
            (Some(0), Err(InvalidBlueprintPageLimit(0))),
            (Some(101), Err(InvalidBlueprintPageLimit(101))),
        ];
        for (requested, expected) in rows {
            assert_eq!(
                BlueprintPageLimit::new(requested).map(BlueprintPageLimit::get),
                expected
            );
        }
    }
}
