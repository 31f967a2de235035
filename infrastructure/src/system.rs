//! The system clock and OS-random identifiers.

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
    fn uuid(&self) -> String {
        uuid::Uuid::new_v4().to_string()
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
