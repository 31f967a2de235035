//! How many blueprints an app may hold before `/ops` stops adding to it. The operator's writes
//! (`svc_ops_register_blueprint`, `svc_ops_generate_blueprint`) are free and fast, and every
//! blueprint costs each server a place in its in-memory index and each listing, operator-default
//! lookup and semantic filter of the app a row to read. An agent's render is not refused: each
//! of its blueprints costs a generation (queued, rate-limited, charged when hosted), and a render
//! must not fail because the cache is full.

/// Blueprints of one app (whatever made them) from which `/ops` refuses to store another.
pub const APP_BLUEPRINTS_MAX: u64 = 10_000;

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("this app holds {stored} blueprints, the most it may hold is {APP_BLUEPRINTS_MAX}: delete some first")]
pub struct AppBlueprintsFull {
    pub stored: u64,
}

/// Whether an app holding `stored` blueprints has room for one more.
pub fn check_room(stored: u64) -> Result<(), AppBlueprintsFull> {
    if stored < APP_BLUEPRINTS_MAX {
        Ok(())
    } else {
        Err(AppBlueprintsFull { stored })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_app_has_room_below_the_cap_only() {
        assert_eq!(check_room(0), Ok(()));
        assert_eq!(check_room(APP_BLUEPRINTS_MAX - 1), Ok(()));
        assert_eq!(
            check_room(APP_BLUEPRINTS_MAX),
            Err(AppBlueprintsFull {
                stored: APP_BLUEPRINTS_MAX
            })
        );
        // An agent's renders are not refused, so an app may hold more: it stays refused.
        assert!(check_room(APP_BLUEPRINTS_MAX + 3).is_err());
        assert_eq!(
            check_room(APP_BLUEPRINTS_MAX).unwrap_err().to_string(),
            "this app holds 10000 blueprints, the most it may hold is 10000: delete some first"
        );
    }
}
