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
    /// A v4 UUID from the thread's CSPRNG (ChaCha, seeded from the OS): `Uuid::new_v4` asks the
    /// OS for every one, a system call per id on the warm path (two per handshake and render).
    fn uuid(&self) -> String {
        uuid::Builder::from_random_bytes(rand::rng().random())
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
    fn uuids_are_random_version_4_and_distinct() {
        let ids: Vec<uuid::Uuid> = (0..1000)
            .map(|_| uuid::Uuid::parse_str(&RandomIds.uuid()).expect("a UUID"))
            .collect();
        assert!(ids.iter().all(|id| id.get_version() == Some(uuid::Version::Random)));
        assert!(ids.iter().all(|id| id.get_variant() == uuid::Variant::RFC4122));
        let distinct: std::collections::HashSet<_> = ids.iter().collect();
        assert_eq!(distinct.len(), ids.len());
    }
}
