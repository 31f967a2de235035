//! The system clock and random identifiers.

use chrono::{DateTime, Utc};
use rand::Rng;
use svc_application::ports::{Clock, Ids};

pub struct SystemClock;

impl Clock for SystemClock {
    fn now(&self) -> DateTime<Utc> {
        Utc::now()
    }
}

pub struct RandomIds;

const BASE62: &[u8] = b"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";

impl Ids for RandomIds {
    /// A v7 UUID: the time in milliseconds, then 74 random bits from the thread's CSPRNG (ChaCha,
    /// seeded from the OS; `Uuid::now_v7` would ask the OS for every one, a system call per id).
    /// Time first, so the rows a batch inserts sit side by side in their primary-key index: with
    /// random (v4) keys each insert dirtied a page of its own, written to the WAL at commit.
    fn uuid(&self) -> String {
        let millis = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |since| u64::try_from(since.as_millis()).unwrap_or(u64::MAX));
        uuid::Builder::from_unix_timestamp_millis(millis, &rand::rng().random())
            .into_uuid()
            .to_string()
    }

    fn ulid(&self) -> String {
        ulid::Ulid::new().to_string()
    }

    fn base62(&self, len: usize) -> String {
        let mut rng = rand::rng();
        (0..len)
            .map(|_| char::from(BASE62[rng.random_range(0..BASE62.len())]))
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuids_are_version_7_distinct_and_ordered_by_time() {
        let ids: Vec<uuid::Uuid> = (0..1000)
            .map(|_| uuid::Uuid::parse_str(&RandomIds.uuid()).expect("a UUID"))
            .collect();
        assert!(ids.iter().all(|id| id.get_version() == Some(uuid::Version::SortRand)));
        assert!(ids.iter().all(|id| id.get_variant() == uuid::Variant::RFC4122));
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
        let earlier = RandomIds.uuid();
        std::thread::sleep(std::time::Duration::from_millis(2));
        let later = RandomIds.uuid();
        assert!(
            earlier < later,
            "{earlier} then {later}: the text sorts by the time it was minted"
        );
    }
}
